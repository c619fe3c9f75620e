/* SPDX-License-Identifier: MIT */
/*
 * The io_uring host's state and its parts' functions (see uring_host.c).
 * Functions taking a host are called from the thread that owns it; those
 * that touch the stash, the held buffers or the completion queue's head
 * hold h->lock while they do.
 */
#ifndef GPUAR_LIB_URING_HOST_H
#define GPUAR_LIB_URING_HOST_H

#include "port.h"

#include <liburing.h>
#include <pthread.h>

#define TAG_READ 1
#define TAG_CANCEL 2
#define TAG_MULTISHOT 3
#define TAG_POLL 4
#define TAG_PRI 5

#define MS_BGID 0x6a7
#define MS_BUFS 16				/* power of two */
#define MS_BUF_RECORDS 64
#define MS_BUF_BYTES (MS_BUF_RECORDS * sizeof(struct gpuar_record))
/*
 * Records delivered but not yet handed out. A buffer goes back to the
 * kernel only while the stash could take every buffer the kernel holds,
 * so the stash never overflows: a slow reader leaves the kernel without
 * buffers, the multishot read ends with ENOBUFS, and records wait in the
 * port's own queue (nothing is dropped) until the next call re-arms it.
 */
#define STASH_RECORDS (2 * MS_BUFS * MS_BUF_RECORDS)
#define STASH_RECYCLE_MAX (STASH_RECORDS - MS_BUFS * MS_BUF_RECORDS)
/* A one-shot read's most records: its buffer is the host's (see read_oneshot). */
#define RD_RECORDS MS_BUF_RECORDS

struct host_port;

struct gpuar_uring_host {
	struct gpuar_port *port;	/* NULL: none, or it was closed */
	int port_fd;			/* its fd, while it is open (else -1) */
	bool port_closed;		/* closed before the host: -EBADF */
	struct host_port *hp;		/* the port's binding (port_bind) */
	struct gpuar_uring_host *next;	/* on the binding's list */
	struct io_uring ring;
	struct gpuar_uring_host_stats st;
	bool read_refused;	/* IORING_OP_READ refused once: poll + read */
	/* the one-shot read: into rd_buf, never into a caller's buffer */
	struct gpuar_record *rd_buf;
	bool rd_live;
	/* multishot read */
	bool ms_possible;	/* the kernel probes it and it was not refused */
	bool ms_armed;
	int ms_fd;		/* the fd it is bound to (-1: none yet) */
	struct io_uring_buf_ring *br;
	void *bufs;
	/* records delivered but not yet handed out, in order */
	struct gpuar_record *stash;
	u32 stash_head, stash_len;
	unsigned short held[MS_BUFS];	/* buffers not yet given back */
	u32 nheld;
	unsigned long fork_gen;	/* gpuar_fork_generation() at creation */
	/* imminent readiness: the multishot EPOLLPRI poll */
	bool pri_armed;
	bool pri_refused;	/* the kernel refused it: reads only */
	/* reap_polled's POLLIN poll: multishot, left armed between calls */
	bool pollin_armed;
	bool pollin_ms_refused;	/* one-shot polls, cancelled after use */
	/*
	 * Held over every change to the stash, to the held buffers and to
	 * the completion queue's head, so that a cancel on the port, from
	 * any thread, can look at the records the host holds (uh_host_holds).
	 */
	pthread_mutex_t lock;
};

/*
 * A port read through hosts. Its engine's ops are wrapped while it is
 * open: the port's ops point at this copy, whose cancel also finds the
 * records its hosts hold and whose close first ends their operations on
 * the port. Made by the port's first host, freed at the port's close.
 */
struct host_port {
	struct gpuar_engine_ops ops;	/* first: the port's ops point here */
	const struct gpuar_engine_ops *engine;
	pthread_mutex_t lock;		/* the list of hosts */
	struct gpuar_uring_host *hosts;
};

/* uring_stash.c */
/* Set up the multishot read's buffer ring where the kernel has the read. */
void uh_ms_setup(struct gpuar_uring_host *h);
void uh_stash_add(struct gpuar_uring_host *h, const struct gpuar_record *r,
		  u32 n);
u32 uh_stash_room(const struct gpuar_uring_host *h);
void uh_recycle(struct gpuar_uring_host *h);
u32 uh_unstash(struct gpuar_uring_host *h, struct gpuar_record *out, u32 max);
void uh_cqe_done(struct gpuar_uring_host *h, struct io_uring_cqe *cqe);
bool uh_host_holds(struct gpuar_uring_host *h, u64 user_data);

/* uring_ops.c */
struct io_uring_sqe *uh_get_sqe(struct gpuar_uring_host *h);
int uh_submit(struct gpuar_uring_host *h, struct io_uring_sqe *sqe);
int uh_ops_end(struct gpuar_uring_host *h, int fd);
void uh_pri_arm(struct gpuar_uring_host *h, int fd);
/* uh_wait_tag: the completion tagged so came; *res has its result. */
#define WAIT_DONE 1
int uh_wait_tag(struct gpuar_uring_host *h, u64 tag, u64 deadline,
		int *res, int *pri_err);
int uh_cancel_tag(struct gpuar_uring_host *h, u64 tag, int *res, int *pri_err);

#endif /* GPUAR_LIB_URING_HOST_H */
