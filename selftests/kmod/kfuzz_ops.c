// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz's calls on a port that every thread makes: line register and
 * unregister (good, misaligned, NULL, kernel, unmapped addresses), word
 * and fence batches with random fields and counts, cancel, statistics,
 * reads of odd sizes into bad or partly mapped buffers, poll. Each holds
 * the port's fd for its call (struct pslot) and tells the oracle what it
 * did.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kfuzz.h"
#include "port_fixture.h"

static const int reg_ok[] = { EINVAL, EFAULT, ENOSPC, ENOMEM, EPERM, 0 };
static const int unreg_ok[] = { ENOENT, EBUSY, EPERM, 0 };
static const int word_ok[] = { EINVAL, EFAULT, ENOENT, ENOSPC, E2BIG,
			       ENOMEM, EPERM, 0 };
static const int fence_ok[] = { EINVAL, EFAULT, EBADF, ENOSPC, E2BIG,
				ENOMEM, 0 };
static const int cancel_ok[] = { ENOENT, EALREADY, EINVAL, 0 };
static const int stats_ok[] = { EINVAL, EFAULT, E2BIG, ENOENT, 0 };
static const int read_ok[] = { EAGAIN, EINVAL, EFAULT, 0 };

struct gpuar_plan random_plan(void)
{
	struct gpuar_plan pl;

	memset(&pl, 0, sizeof(pl));
	switch (below(4)) {
	case 0:
		pl.park = GPUAR_PARK_POLL;
		break;
	case 1:
		pl = plan_flag(below(3) ? 10000 + below(200000) : 0,
			       chance(30) ? 0 : 1000000 + below(200000000));
		break;
	case 2:
		pl = plan_predict(1 + below(GPUAR_PLAN_WINDOW_MAX));
		pl.backstop_ns = 1000000 + below(300000000);
		break;
	default:
		/* Anything, mostly invalid. */
		pl.park = below(5);
		pl.flags = below(3);
		pl.park_ns = rnd() % (2 * GPUAR_PLAN_PARK_NS_MAX);
		pl.backstop_ns = rnd() % (2 * GPUAR_PLAN_BACKSTOP_NS_MAX);
		pl.margin_ns = rnd() % (2 * GPUAR_PLAN_SLEEP_NS_MAX);
		pl.window = below(20);
		pl.pad = chance(10);
		break;
	}
	return pl;
}

void op_register(const struct pslot *s)
{
	__u64 addr;
	__u32 id;
	int ret;

	switch (below(8)) {
	case 0:
		addr = 0;
		break;
	case 1:
		addr = (__u64)(uintptr_t)mem + 8 * (1 + below(7));
		break;
	case 2:
		addr = 0xffff888000000000ULL;
		break;
	case 3:
		addr = (__u64)(uintptr_t)mem + MEM_PAGES * (uint64_t)page;
		break;	/* past the mapping: often unmapped */
	case 4:
		addr = (__u64)(uintptr_t)line_at(mem, IMM_PAGE * page / 64 +
						 below((uint32_t)page / 64));
		break;	/* a line of the imminent page */
	default:
		addr = (__u64)(uintptr_t)line_at(mem,
				below((uint32_t)(LINE_PAGES * page / 64)));
		break;
	}
	lines_lock(s->p);
	lines_begin(s->p, 0, NULL);
	ret = line_register(s->fd, (void *)(uintptr_t)addr, &id);
	expect_errno("LINE_REGISTER", ret, reg_ok);
	line_event(s->p, 'R', ret ? 0 : id, ret ? -errno :
		   (int)((addr - (__u64)(uintptr_t)mem) / (__u64)page));
	if (!ret)
		line_registered(s->p, id, addr);
	lines_end(s->p, 0);
	lines_unlock(s->p);
}

/*
 * Unregister one of the port's lines, or any id. A line kfuzz registered
 * is there until unregistered (or the port closes), dead or alive: with
 * no other call changing the lines meanwhile, ENOENT for it is a finding.
 */
void op_unregister(const struct pslot *s)
{
	bool known = chance(90), alone;
	uint64_t seq;
	__u64 addr;
	__u32 id;
	int ret, err;

	lines_lock(s->p);
	if (!known || !pick_line(s->p, -1, &id, &addr)) {
		known = false;
		id = below(100);
	}
	alone = lines_begin(s->p, known ? id : 0, &seq);
	ret = line_unregister(s->fd, id);
	err = errno;
	line_event(s->p, 'U', id, ret ? -err : 0);
	expect_errno("LINE_UNREGISTER", ret, unreg_ok);
	if (!ret)
		line_unregistered(s->p, id);
	alone = lines_end(s->p, seq) && alone;
	lines_unlock(s->p);
	if (ret && err == ENOENT && known && alone)
		line_vanished(s->p, s->fd, id,
			      "a line kfuzz registered is gone (LINE_UNREGISTER ENOENT)");
}

void op_submit_words(const struct pslot *s)
{
	struct gpuar_word_wait w[BATCH_MAX];
	int n = 1 + (int)below(chance(10) ? BATCH_MAX : 4), i, ret;
	struct line_snap snap;
	__u32 idx;

	for (i = 0; i < n; i++) {
		__u32 line;
		__u64 addr, now = mono_ns();

		if (!chance(95) || !pick_line(s->p, -1, &line, &addr))
			line = below(64);
		/* A few points, or any: a port's table fills and evicts. */
		w[i] = word_wait(line, chance(98) ? below(8) : below(12),
				 mem[below(64)] + below(4),
				 chance(70) ? below(6) : rnd(), 0,
				 random_plan());
		if (chance(5))
			w[i].start_ns = chance(50) ? now - below(1000000000) :
					now + 1000000000;
		if (chance(2))
			w[i].flags = 1;
	}
	words_reserve(s, w, n, &snap);
	if (chance(3))
		ret = submit_raw(s->fd, GPUAR_IOC_SUBMIT_WORD,
				 (void *)(uintptr_t)(chance(50) ? 8 : 0),
				 n, sizeof(w[0]), &idx);
	else
		ret = submit_words(s->fd, w, n, &idx);
	expect_errno("SUBMIT_WORD", ret, word_ok);
	words_settle(s, w, n, ret, idx, &snap);
	if (ret >= 0 && ret != n)
		finding("SUBMIT_WORD count", ret, 0);
}

void op_submit_fences(const struct pslot *s)
{
	struct gpuar_fence_wait f[8];
	int n = 1 + (int)below(8), i, ret;

	for (i = 0; i < n; i++) {
		int fd = chance(95) ?
			 __atomic_load_n(&fences[below(FENCES)], __ATOMIC_RELAXED) :
			 (chance(50) ? -1 : s->fd);

		f[i] = fence_wait(fd, 0);
	}
	fences_reserve(s, f, n);
	ret = submit_fences(s->fd, f, n, NULL);
	expect_errno("SUBMIT_FENCE", ret, fence_ok);
	fences_settle(s, f, n, ret);
	if (ret >= 0 && ret != n)
		finding("SUBMIT_FENCE count", ret, 0);
}

void op_cancel(const struct pslot *s)
{
	int ret = port_cancel(s->fd, recent_id());

	expect_errno("CANCEL", ret, cancel_ok);
}

void op_stats(const struct pslot *s)
{
	struct gpuar_port_stats st;
	struct gpuar_point_stats ps;
	int ret;

	if (chance(50)) {
		ret = port_stats(s->fd, &st);
		if (!ret)
			points_check(&st);
	} else {
		ret = point_stats(s->fd, chance(80) ? below(6) : rnd(), &ps);
	}
	expect_errno("STATS", ret, stats_ok);
	if (chance(5)) {
		ret = ioctl(s->fd, GPUAR_IOC_PORT_STATS, (void *)8);
		expect_errno("STATS(bad)", ret, stats_ok);
	}
}

/* A read of an odd size, sometimes into a buffer that ends in a hole. */
void op_read(const struct pslot *s)
{
	static __thread struct gpuar_record *hole_buf;	/* each thread's */
	struct gpuar_record r[16];
	size_t sizes[] = { 0, 63, 64, 65, 128, 200, sizeof(r) };
	size_t len = sizes[below(7)];
	void *buf = r;
	ssize_t got;

	if (!hole_buf) {
		char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return;
		/* Not unmapped: the hole would soon hold another mapping. */
		mprotect(m + page, page, PROT_NONE);
		hole_buf = (void *)(m + page - 2 * sizeof(*hole_buf));
	}
	if (chance(10)) {
		buf = hole_buf;	/* room for two, then the hole */
		len = sizeof(r);
	} else if (chance(3)) {
		buf = (void *)8;
		len = sizeof(r[0]);
	}
	if (s->nonblock) {
		got = read(s->fd, buf, len);
	} else {
		/* Another thread may take what is queued: never block. */
		struct iovec v = { .iov_base = buf, .iov_len = len };

		got = preadv2(s->fd, &v, 1, -1, RWF_NOWAIT);
	}
	expect_errno("read", got, read_ok);
	if (got > 0) {
		if (got % sizeof(struct gpuar_record))
			finding("read of a partial record", got, 0);
		records_account(s->inc, buf,
				(int)(got / sizeof(struct gpuar_record)));
	}
}

void op_poll(const struct pslot *s)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN | POLLPRI };
	int ret = poll(&pf, 1, 0);

	expect_errno("poll", ret, read_ok);
	if (ret > 0 && (pf.revents & POLLPRI) && !s->imminent)
		finding("EPOLLPRI on a port that is not imminent", pf.revents,
			0);
}
