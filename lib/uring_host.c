// SPDX-License-Identifier: MIT
/*
 * Reading a port's records through io_uring.
 *
 * Kernel engine (or any fd yielding whole records): a multishot read
 * (IORING_OP_READ_MULTISHOT, Linux 6.7) from a ring of provided buffers
 * where the kernel has it, armed once and delivering every record as it
 * is queued; else one IORING_OP_READ per call; else, if the kernel refuses
 * that too, poll + read(2). Each refusal is counted. liburing 2.3 (Debian
 * bookworm) has no helper for the multishot read, so its SQE is prepared
 * by hand from the kernel's opcode number; the kernel's probe decides.
 *
 * User engine: its fd is an epoll fd, not readable with read(2):
 * IORING_OP_POLL_ADD on it, then gpuar_reap().
 *
 * Imminent readiness (GPUAR_PORT_IMMINENT) on the kernel engine: beside
 * the record read, a multishot IORING_OP_POLL_ADD on EPOLLPRI (Linux
 * 5.13), armed once. Its completion, at a predicted wait's early wake,
 * has the waiting thread reap as gpuar_reap() does (gpuar_imminent_reap):
 * the records already queued, else claim the imminent waits, watch their
 * words, and read the records the module finds on checking the claimed
 * waits; into the stash, and the wait returns them. Where no multishot
 * read runs, the record read is a POLL_ADD for POLLIN and a non-blocking
 * reap, as on the user engine, not a one-shot IORING_OP_READ (see
 * reap_polled). (The user engine's fd turns readable at the early wake,
 * and its gpuar_reap() claims.)
 *
 * The host's armed ops hold the port's file, and the records they read
 * have left the port's queue. So the first host of a port wraps the
 * port's engine ops (struct host_port): its cancel also finds the records
 * a host holds (-EALREADY), and its close ends the hosts' ops on the port
 * before the engine closes, after which their reaps answer -EBADF.
 *
 * Its parts, each calling only those below it (uring_host.h has what
 * they share):
 *   uring_host.c   making and freeing a host; the port's binding
 *   uring_read.c   the reads: multishot, one-shot, poll + read, and the
 *                  POLL_ADD reap of the user engine and imminent ports
 *   uring_ops.c    submitting ops, waiting for a tagged completion (and
 *                  serving EPOLLPRI on the way), cancelling, ending all
 *   uring_stash.c  the multishot read's buffer ring and the stash of
 *                  records delivered but not yet handed out
 */
#include "uring_host.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Binding ports: one at a time, so that a port gets one binding. */
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---------------------------------------------------- the port's binding */

static struct host_port *hp_of(struct gpuar_port *port)
{
	return (struct host_port *)(uintptr_t)port->ops;
}

/*
 * The port's cancel: a wait whose record a host holds (read out of the
 * port's queue by the multishot read or at an EPOLLPRI) has completed and
 * its record is queued, so -EALREADY, as gpuar_cancel() promises.
 */
static int hp_cancel(struct gpuar_port *port, u64 user_data)
{
	struct host_port *hp = hp_of(port);
	struct gpuar_uring_host *h;
	int ret = hp->engine->cancel(port, user_data);

	if (ret != -ENOENT)
		return ret;
	pthread_mutex_lock(&hp->lock);
	for (h = hp->hosts; h && ret == -ENOENT; h = h->next)
		if (uh_host_holds(h, user_data))
			ret = -EALREADY;
	pthread_mutex_unlock(&hp->lock);
	return ret;
}

/*
 * The port closes before its hosts: each one's operations on the port end
 * (none keeps its file, and with it the module's port, alive), its
 * records go with the port, and its later reaps answer -EBADF.
 */
static void host_detach(struct gpuar_uring_host *h)
{
	bool ended = uh_ops_end(h, h->port_fd) == 0;

	if (ended && h->ms_fd == h->port_fd) {
		pthread_mutex_lock(&h->lock);
		h->stash_len = 0;
		uh_recycle(h);
		pthread_mutex_unlock(&h->lock);
		h->ms_fd = -1;
	}
	h->port = NULL;
	h->port_fd = -1;
	h->port_closed = true;
	h->hp = NULL;
}

static void hp_close(struct gpuar_port *port)
{
	struct host_port *hp = hp_of(port);
	struct gpuar_uring_host *h;

	/* In a forked child the hosts and their rings are the parent's. */
	if (!port_forked(port)) {
		pthread_mutex_lock(&hp->lock);
		for (h = hp->hosts; h; h = h->next)
			host_detach(h);
		hp->hosts = NULL;
		pthread_mutex_unlock(&hp->lock);
		pthread_mutex_destroy(&hp->lock);
	}
	port->ops = hp->engine;
	hp->engine->close(port);
	free(hp);
}

static int port_bind(struct gpuar_uring_host *h, struct gpuar_port *port)
{
	struct host_port *hp;

	pthread_mutex_lock(&bind_lock);
	if (port->ops->close == hp_close) {
		hp = hp_of(port);
	} else {
		hp = calloc(1, sizeof(*hp));
		if (!hp) {
			pthread_mutex_unlock(&bind_lock);
			return -ENOMEM;
		}
		hp->ops = *port->ops;
		hp->ops.cancel = hp_cancel;
		hp->ops.close = hp_close;
		hp->engine = port->ops;
		pthread_mutex_init(&hp->lock, NULL);
		__atomic_store_n(&port->ops, &hp->ops, __ATOMIC_RELEASE);
	}
	pthread_mutex_lock(&hp->lock);
	h->next = hp->hosts;
	hp->hosts = h;
	pthread_mutex_unlock(&hp->lock);
	pthread_mutex_unlock(&bind_lock);
	h->hp = hp;
	return 0;
}

static void port_unbind(struct gpuar_uring_host *h)
{
	struct gpuar_uring_host **pp;

	if (!h->hp)
		return;
	pthread_mutex_lock(&h->hp->lock);
	for (pp = &h->hp->hosts; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&h->hp->lock);
	h->hp = NULL;
}

/* ------------------------------------------------------------- the host */

GPUAR_EXPORT int gpuar_uring_host_new(struct gpuar_uring_host **out,
				      struct gpuar_port *port)
{
	struct gpuar_uring_host *h;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	/* A port opened before a fork is the parent's (lib/process.c). */
	if (port && port_forked(port))
		return -EPERM;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->stash = calloc(STASH_RECORDS, sizeof(*h->stash));
	h->rd_buf = calloc(RD_RECORDS, sizeof(*h->rd_buf));
	ret = h->stash && h->rd_buf ? io_uring_queue_init(8, &h->ring, 0) : -ENOMEM;
	if (ret < 0) {
		free(h->rd_buf);
		free(h->stash);
		free(h);
		return ret;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->port = port;
	h->port_fd = port ? port->fd : -1;
	h->ms_fd = -1;
	h->fork_gen = gpuar_fork_generation();
	uh_ms_setup(h);
	ret = port ? port_bind(h, port) : 0;
	if (ret < 0) {
		gpuar_uring_host_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

/*
 * Every operation ends before the buffers go, the port's polls included:
 * closing the ring would not end them while another process (a forked
 * child) holds the ring fd, and they would keep the port's file, or copy
 * records into freed memory. Where the ring cannot wait for that, the
 * buffers an operation may still write are left allocated.
 */
GPUAR_EXPORT void gpuar_uring_host_free(struct gpuar_uring_host *h)
{
	bool ended = true;

	if (!h)
		return;
	/* A forked child's ring and binding are its parent's: nothing to end. */
	if (!gpuar_forked_since(h->fork_gen)) {
		port_unbind(h);
		ended = uh_ops_end(h, -1) == 0;
		if (ended && h->br)
			io_uring_unregister_buf_ring(&h->ring, MS_BGID);
		pthread_mutex_destroy(&h->lock);
	}
	io_uring_queue_exit(&h->ring);
	if (ended) {
		free(h->bufs);
		free(h->br);
		free(h->rd_buf);
	}
	free(h->stash);
	free(h);
}

GPUAR_EXPORT void gpuar_uring_host_stats(const struct gpuar_uring_host *h,
					 struct gpuar_uring_host_stats *stats)
{
	if (stats) {
		if (h)
			*stats = h->st;
		else
			memset(stats, 0, sizeof(*stats));
	}
}
