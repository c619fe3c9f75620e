// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz's calls that race: a line register whose argument sits on a
 * read-only page (it registers, then cannot write the id back, and takes
 * the line back) while racer threads unregister the id it is about to
 * get (ids are the lowest free, so predictable); io_uring reads of the
 * ports (through a dup of the fd), left in flight across other calls and
 * the port's close, then reaped or cancelled; and calls through a dup of a port's fd, which may
 * outlive the port's own fd and so end the port itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kfuzz.h"
#include "port_fixture.h"

#define TAG_READ 1
#define TAG_CANCEL 2

static const int reg_ro_ok[] = { EFAULT, EINVAL, ENOSPC, ENOMEM, 0 };
static const int unreg_ok[] = { ENOENT, EBUSY, EPERM, 0 };
/*
 * A read that io_uring's cancel interrupted in its worker completes with
 * the read's own -ERESTARTSYS on the kernels of the matrix (io_read()
 * passes a negative answer of read_iter on as it is): io_uring's, not
 * the module's.
 */
#define KERNEL_ERESTARTSYS 512
static const int uring_ok[] = { EAGAIN, EINTR, ECANCELED, EINVAL, EFAULT,
				KERNEL_ERESTARTSYS, 0 };
static const int cancel_ok[] = { ENOENT, EALREADY, 0 };

/* One register argument per line of the line pages, read-only. */
static struct gpuar_line_register *ro_args;
static unsigned int n_ro_args;

static struct {
	uint64_t ro, stolen, uring_reads, uring_records, uring_cancels;
} st;

void ro_args_map(void)
{
	size_t n = MEM_PAGES * (size_t)page / GPUAR_LINE_BYTES, len, i;
	struct gpuar_line_register *a;

	len = (n * sizeof(*a) + (size_t)page - 1) & ~((size_t)page - 1);
	a = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return;
	for (i = 0; i < n; i++) {
		a[i].size = sizeof(a[i]);
		a[i].addr = (__u64)(uintptr_t)line_at(mem, (unsigned int)i);
	}
	if (mprotect(a, len, PROT_READ))
		return;
	ro_args = a;
	n_ro_args = (unsigned int)n;
}

/*
 * A register whose id cannot be written back: EFAULT, and the line is
 * taken back, as if never registered. The racers meanwhile unregister the
 * id it is likely to get (race_hint).
 */
void op_register_ro(const struct pslot *s)
{
	int ret;

	if (!ro_args)
		return;
	__atomic_store_n(&ports[s->p].race_hint, next_line_id(s->p),
			 __ATOMIC_RELAXED);
	lines_begin(s->p, 0, NULL);
	ret = ioctl(s->fd, GPUAR_IOC_LINE_REGISTER, &ro_args[below(n_ro_args)]);
	expect_errno("LINE_REGISTER(read-only)", ret, reg_ro_ok);
	line_event(s->p, 'r', 0, ret ? -errno : 0);
	lines_end(s->p, 0);
	if (!ret)
		finding("LINE_REGISTER wrote its id to a read-only page", ret,
			0);
	__atomic_fetch_add(&st.ro, 1, __ATOMIC_RELAXED);
}

/* A burst of unregisters of the id a faulting register may get. */
void op_unreg_hint(const struct pslot *s)
{
	int k = 2 + (int)below(6), ret;

	while (k--) {
		__u32 id = chance(80) ? __atomic_load_n(&ports[s->p].race_hint,
							__ATOMIC_RELAXED) :
			   1 + below(4);

		lines_lock(s->p);
		lines_begin(s->p, 0, NULL);
		ret = line_unregister(s->fd, id);
		expect_errno("LINE_UNREGISTER(race)", ret, unreg_ok);
		line_event(s->p, 'u', id, ret ? -errno : 0);
		if (!ret && !line_unregistered(s->p, id))
			__atomic_fetch_add(&st.stolen, 1, __ATOMIC_RELAXED);
		lines_end(s->p, 0);
		lines_unlock(s->p);
	}
}

/* --------------------------------------------------------------- io_uring */

static void uring_reap(struct kctx *c, struct io_uring_cqe *cqe)
{
	__u64 tag = io_uring_cqe_get_data64(cqe);
	int res = cqe->res;

	io_uring_cqe_seen(&c->ring, cqe);
	errno = res < 0 ? -res : 0;
	if (tag == TAG_CANCEL) {
		c->rd.cancel_res = res;
		expect_errno("io_uring ASYNC_CANCEL", res, cancel_ok);
		return;
	}
	c->rd.on = false;
	close(c->rd.fd);
	expect_errno("io_uring READ", res, uring_ok);
	if (res <= 0)
		return;
	if (res % sizeof(struct gpuar_record))
		finding("io_uring READ of a partial record", res, 0);
	__atomic_fetch_add(&st.uring_records,
			   (uint64_t)res / sizeof(struct gpuar_record),
			   __ATOMIC_RELAXED);
	records_account(c->rd.inc, c->rd.buf,
			(int)(res / sizeof(struct gpuar_record)));
}

/*
 * Cancel the read in flight and reap it, within @ms. A cancel may miss a
 * read that is between states (armed poll, retried, handed to a worker):
 * it is asked again every 50 ms.
 */
static void uring_cancel(struct kctx *c, int ms)
{
	__u64 now = mono_ns(), end = now + (__u64)ms * 1000000ULL, next = now;
	unsigned int asked = 0;

	__atomic_fetch_add(&st.uring_cancels, 1, __ATOMIC_RELAXED);
	while (c->rd.on && now < end) {
		struct __kernel_timespec ts = { 0, 10000000 };
		struct io_uring_sqe *sqe = now >= next ?
					   io_uring_get_sqe(&c->ring) : NULL;
		struct io_uring_cqe *cqe;

		if (sqe) {
			io_uring_prep_cancel64(sqe, TAG_READ, 0);
			io_uring_sqe_set_data64(sqe, TAG_CANCEL);
			io_uring_submit(&c->ring);
			next = now + 50000000ULL;
			asked++;
		}
		if (!io_uring_wait_cqe_timeout(&c->ring, &cqe, &ts))
			uring_reap(c, cqe);
		now = mono_ns();
	}
	if (c->rd.on) {
		printf("# kfuzz: io_uring READ still in flight after %u cancels, the last answered %d\n",
		       asked, c->rd.cancel_res);
		finding("io_uring READ of a port not ended by its cancel", ms,
			0);
	}
}

/*
 * An io_uring READ of the port: started and left in flight (its file
 * held by io_uring, so closing the port's fd does not end the port), or
 * reaped when done, or cancelled.
 */
void op_uring(struct kctx *c, const struct pslot *s)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	if (!c->ring_ok) {
		op_read(s);
		return;
	}
	while (!io_uring_peek_cqe(&c->ring, &cqe))
		uring_reap(c, cqe);
	if (c->rd.on) {
		call_done();
		if (chance(30))
			uring_cancel(c, 1000);
		return;
	}
	sqe = io_uring_get_sqe(&c->ring);
	if (!sqe)
		return;
	c->rd.len = sizeof(c->rd.buf[0]) * (1 + below(16)) +
		    (chance(5) ? 1 + below(63) : 0);
	if (c->rd.len > sizeof(c->rd.buf))
		c->rd.len = sizeof(c->rd.buf);
	/*
	 * A read punted to a worker (IOSQE_ASYNC) looks its fd up there,
	 * later: it reads a dup that is this read's own until it is reaped,
	 * never a number the port's close may give to another file.
	 */
	c->rd.fd = dup(s->fd);
	call_done();
	if (c->rd.fd < 0)
		return;
	io_uring_prep_read(sqe, c->rd.fd, c->rd.buf, (unsigned int)c->rd.len,
			   0);
	io_uring_sqe_set_data64(sqe, TAG_READ);
	if (chance(30))
		sqe->flags |= IOSQE_ASYNC;
	c->rd.inc = s->inc;
	c->rd.on = true;
	__atomic_fetch_add(&st.uring_reads, 1, __ATOMIC_RELAXED);
	if (io_uring_submit(&c->ring) != 1) {
		c->rd.on = false;
		close(c->rd.fd);
		finding("io_uring submit", -1, errno);
	}
}

/* The thread's calls end: its read in flight is reaped or cancelled. */
void uring_finish(struct kctx *c)
{
	if (!c->ring_ok)
		return;
	if (c->rd.on)
		uring_cancel(c, 2000);
	io_uring_queue_exit(&c->ring);
	c->ring_ok = false;
}

void race_summary(void)
{
	printf("# kfuzz: %llu read-only registrations, %llu lines unregistered by a racer that kfuzz had not seen registered\n",
	       (unsigned long long)st.ro, (unsigned long long)st.stolen);
	printf("# kfuzz: io_uring: %llu reads, %llu records, %llu cancels\n",
	       (unsigned long long)st.uring_reads,
	       (unsigned long long)st.uring_records,
	       (unsigned long long)st.uring_cancels);
}
