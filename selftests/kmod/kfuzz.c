// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz: a structure-aware fuzzer of the module, reproducible from its
 * seed. Random sequences over every entry point of <linux/gpuar.h>: port
 * creation with random flags, line register and unregister (good,
 * misaligned, NULL, kernel, unmapped, remapped or dropped under pending
 * waits), word and fence batches with random fields and counts, cancel,
 * statistics, reads of odd sizes into bad or partly mapped buffers, poll,
 * dup and close, and forked children acting on inherited ports, while a
 * device thread stores into the lines.
 *
 * The oracle:
 *   - every call answers success or an errno the ABI header documents for
 *     it (anything else is a finding, printed with the call's number);
 *   - every committed wait yields exactly one record: each wait carries a
 *     fresh user_data, a record of an unknown or already seen user_data
 *     is a finding, and at the end (fences signalled, backstops past)
 *     every port's committed waits have all been read;
 *   - a dead line's record (CANCELLED, -EFAULT) only for a word wait on a
 *     line whose page the fuzzer remapped or dropped while it was
 *     registered (the line died): the oracle follows each registration of
 *     a line id in the line pages, and which of them died;
 *   - a successful read returns whole records.
 *
 *   kfuzz [--seed N] [--calls N] [--seconds S] [--mix CALL:MIX]...
 *
 * Defaults: a seed from the clock, 100000 calls or 480 s, whichever comes
 * first (so the suites' run ends well inside the runner's per-binary
 * timeout on a slow debug kernel; the line says how many calls it made).
 * The environment's GPUAR_KFUZZ_SECONDS, if set, bounds the run instead
 * and lifts the call count. Prints "kfuzz: <calls> calls, <waits> waits,
 * seed <seed>" last (after a comment with the waits that ended by their
 * line's death) and TAP (one test), so the VM runner counts it as a
 * suite.
 * Exit status 0 when the oracle held.
 *
 * With both a call count and a time bound, the run keeps pace: where the
 * full mix of operations would not make the count in time (a debug
 * kernel, where a fork or a port's creation costs tens of milliseconds),
 * the dearest operations are drawn more seldom, never to none
 * (kfuzz_mix.h). Each change of the mix is printed as the --mix that
 * replays it: a finding is replayed with the seed, the call count and
 * every --mix line of the run. Before the last line, a profile (TAP
 * comments) gives each operation's count and time.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfuzz_mix.h"
#include "port_fixture.h"
#include "testfence_fixture.h"

#define PORTS 4
#define LINE_PAGES 4
#define MAX_LINES 32		/* per port, of our own bookkeeping */
#define MAX_IDS (1u << 22)	/* user_data values one run hands out */
#define BATCH_MAX 48
#define FENCES 8
#define LINE_IDS 256		/* line ids whose registrations the oracle follows */
#define GENS_KEPT 64		/* registrations of one id it remembers */

/*
 * Two generators from the one seed: the calls' and the device thread's.
 * Sharing one would interleave the threads' draws as the scheduler
 * pleases, and a seed would replay nothing. Apart, a seed replays the
 * calls as far as the kernel answers them alike (an unregistration is
 * refused while waits on the line pend, which the device's pace decides).
 */
static uint64_t rng_state, device_rng_state;

static uint64_t splitmix(uint64_t *state)
{
	/* splitmix64: tiny, and the same sequence everywhere. */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(void)
{
	return splitmix(&rng_state);
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static bool chance(unsigned int pct)
{
	return below(100) < pct;
}

struct kport {
	int fd;			/* -1: none */
	uint64_t unread;	/* committed waits whose record is not read */
	__u32 lines[MAX_LINES];
	unsigned int nlines;
	/*
	 * By line id, for ids registered in the line pages: how many times
	 * it was registered (its registrations are numbered from 1, and
	 * never renumbered, even across ports in this slot), in which page
	 * its current registration lives (-1: none, or outside the line
	 * pages), and which of the last GENS_KEPT registrations died.
	 */
	uint32_t gen[LINE_IDS];
	int page_of[LINE_IDS];
	uint64_t dead[LINE_IDS];
};

static struct kport ports[PORTS];
static __u64 *mem;		/* LINE_PAGES pages of lines */
static long page;
static int timeline = -1;
static int fences[FENCES];
static __u64 fence_seqno;

/* One byte per user_data: 0 free, 1 committed, 2 read; its port after. */
static unsigned char *state;
static signed char *owner;
/*
 * Per user_data: the registration of the line a word wait named
 * (gen << 8 | line id), 0 for a fence wait, WAIT_LINE_ANY when the
 * oracle does not follow that line.
 */
static uint32_t *wait_line;
#define WAIT_LINE_ANY UINT32_MAX
static uint64_t next_id = 1;
static uint64_t calls, waits, dead_records, findings;
static volatile int stop_device;

static void finding(const char *what, long ret, int err)
{
	findings++;
	if (findings <= 20)
		printf("# kfuzz finding at call %llu: %s (ret %ld, %s)\n",
		       (unsigned long long)calls, what, ret, strerror(err));
}

/* The call returned @ret; 0 or an errno in @ok (0-terminated) is fine. */
static void expect_errno(const char *what, long ret, const int *ok)
{
	int err = errno;

	calls++;
	if (ret >= 0)
		return;
	for (; *ok; ok++)
		if (*ok == err)
			return;
	finding(what, ret, err);
}

static const int create_ok[] = { EINVAL, EMFILE, ENOMEM, 0 };
static const int reg_ok[] = { EINVAL, EFAULT, ENOSPC, ENOMEM, EPERM, 0 };
static const int unreg_ok[] = { ENOENT, EBUSY, EPERM, 0 };
static const int word_ok[] = { EINVAL, EFAULT, ENOENT, ENOSPC, E2BIG,
			       ENOMEM, EPERM, 0 };
static const int fence_ok[] = { EINVAL, EFAULT, EBADF, ENOSPC, E2BIG,
				ENOMEM, 0 };
static const int cancel_ok[] = { ENOENT, EALREADY, EINVAL, 0 };
static const int stats_ok[] = { EINVAL, EFAULT, E2BIG, ENOENT, 0 };
static const int read_ok[] = { EAGAIN, EINVAL, EFAULT, 0 };

static void *device_run(void *arg)
{
	size_t words = LINE_PAGES * (size_t)page / 8;

	(void)arg;
	while (!stop_device) {
		/* One draw: the word, the step, whether and how long to rest. */
		uint64_t r = splitmix(&device_rng_state);

		__atomic_fetch_add(&mem[(uint32_t)r % words], 1 + (r >> 32) % 3,
				   __ATOMIC_RELEASE);
		if ((r >> 40) % 100 < 5)
			usleep((r >> 48) % 200);
	}
	return NULL;
}

/*
 * The next user_data for port @p. The values wrap at MAX_IDS (a fast
 * kernel hands that many out in about a quarter of an hour), skipping 0
 * and any still committed and unread, whose record is yet to come.
 */
static __u64 fresh_id(int p)
{
	__u64 id;

	do
		id = next_id++ % MAX_IDS;
	while (!id || state[id] == 1);
	state[id] = 0;
	owner[id] = (signed char)p;
	return id;
}

static struct gpuar_plan random_plan(void)
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

static void op_create(int p)
{
	__u32 flags = chance(90) ? GPUAR_PORT_CLOEXEC | (chance(50) ?
				   GPUAR_PORT_NONBLOCK : 0) : (__u32)rnd();
	int fd = t_port_open(flags);

	expect_errno("PORT_CREATE", fd, create_ok);
	if (fd >= 0 && ports[p].fd < 0) {
		ports[p].fd = fd;
		ports[p].nlines = 0;
	} else if (fd >= 0) {
		close(fd);
	}
}

static void op_register(struct kport *kp)
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
		addr = (__u64)(uintptr_t)mem + LINE_PAGES * (uint64_t)page;
		break;	/* past the mapping: often unmapped */
	default:
		addr = (__u64)(uintptr_t)line_at(mem,
				below((uint32_t)(LINE_PAGES * page / 64)));
		break;
	}
	ret = line_register(kp->fd, (void *)(uintptr_t)addr, &id);
	expect_errno("LINE_REGISTER", ret, reg_ok);
	if (ret)
		return;
	if (kp->nlines < MAX_LINES)
		kp->lines[kp->nlines++] = id;
	if (id < LINE_IDS) {
		uint64_t off = addr - (uint64_t)(uintptr_t)mem;

		kp->gen[id]++;
		kp->dead[id] &= ~(1ULL << (kp->gen[id] % GENS_KEPT));
		kp->page_of[id] = off < LINE_PAGES * (uint64_t)page ?
				  (int)(off / (uint64_t)page) : -1;
	}
}

/* Line @id's current registration on @kp died: its page was remapped. */
static void line_died(struct kport *kp, __u32 id)
{
	kp->dead[id] |= 1ULL << (kp->gen[id] % GENS_KEPT);
}

/* May wait @id (a record of @p) end with a dead line's record? */
static bool may_see_dead_line(int p, __u64 id)
{
	const struct kport *kp = &ports[p];
	uint32_t wl = wait_line[id], line = wl & 0xff, gen = wl >> 8;

	if (wl == WAIT_LINE_ANY)
		return true;
	if (!wl)
		return false;	/* a fence wait */
	if (((kp->gen[line] - gen) & 0xffffff) >= GENS_KEPT)
		return true;	/* too old to tell */
	return kp->dead[line] & (1ULL << (gen % GENS_KEPT));
}

static void op_unregister(struct kport *kp)
{
	__u32 id = kp->nlines && chance(90) ? kp->lines[below(kp->nlines)] :
		   (__u32)below(100);
	int ret = line_unregister(kp->fd, id);
	unsigned int i;

	expect_errno("LINE_UNREGISTER", ret, unreg_ok);
	if (ret)
		return;
	if (id < LINE_IDS)
		kp->page_of[id] = -1;
	for (i = 0; i < kp->nlines; i++)
		if (kp->lines[i] == id) {
			kp->lines[i] = kp->lines[--kp->nlines];
			break;
		}
}

/* @n waits committed; a word wait's line id in @lines (NULL: fences). */
static void commit(int p, const __u64 *ids, const __u32 *lines, int n)
{
	const struct kport *kp = &ports[p];
	int i;

	for (i = 0; i < n; i++) {
		state[ids[i]] = 1;
		if (!lines)
			wait_line[ids[i]] = 0;
		else if (lines[i] >= LINE_IDS || kp->page_of[lines[i]] < 0)
			wait_line[ids[i]] = WAIT_LINE_ANY;
		else
			wait_line[ids[i]] = kp->gen[lines[i]] << 8 | lines[i];
	}
	waits += n;
	ports[p].unread += n;
}

static void op_submit_words(int p)
{
	struct kport *kp = &ports[p];
	struct gpuar_word_wait w[BATCH_MAX];
	__u64 ids[BATCH_MAX];
	__u32 lines[BATCH_MAX];
	int n = 1 + (int)below(chance(10) ? BATCH_MAX : 4), i, ret;
	__u32 idx;

	for (i = 0; i < n; i++) {
		__u32 line = kp->nlines && chance(95) ?
			     kp->lines[below(kp->nlines)] : below(64);
		__u64 now = mono_ns();

		ids[i] = fresh_id(p);
		w[i] = word_wait(line, chance(98) ? below(8) : below(12),
				 mem[below(64)] + below(4), below(6), ids[i],
				 random_plan());
		if (chance(5))
			w[i].start_ns = chance(50) ? now - below(1000000000) :
					now + 1000000000;
		if (chance(2))
			w[i].flags = 1;
		lines[i] = line;
	}
	if (chance(3))
		ret = submit_raw(kp->fd, GPUAR_IOC_SUBMIT_WORD,
				 (void *)(uintptr_t)(chance(50) ? 8 : 0),
				 n, sizeof(w[0]), &idx);
	else
		ret = submit_words(kp->fd, w, n, &idx);
	expect_errno("SUBMIT_WORD", ret, word_ok);
	if (ret == n)
		commit(p, ids, lines, n);
	else if (ret >= 0)
		finding("SUBMIT_WORD count", ret, 0);
}

static void op_submit_fences(int p)
{
	struct gpuar_fence_wait f[8];
	__u64 ids[8];
	int n = 1 + (int)below(8), i, ret;

	for (i = 0; i < n; i++) {
		int fd = chance(95) ? fences[below(FENCES)] :
			 (chance(50) ? -1 : ports[p].fd);

		ids[i] = fresh_id(p);
		f[i] = fence_wait(fd, ids[i]);
	}
	ret = submit_fences(ports[p].fd, f, n, NULL);
	expect_errno("SUBMIT_FENCE", ret, fence_ok);
	if (ret == n)
		commit(p, ids, NULL, n);
}

/* New fences, the old ones signalled (some with an error). */
static void op_fences(void)
{
	int i;

	if (timeline < 0)
		return;
	for (i = 0; i < FENCES; i++) {
		if (fences[i] >= 0 && chance(50))
			continue;
		if (fences[i] >= 0)
			close(fences[i]);
		fences[i] = testfence_fence(timeline, ++fence_seqno);
	}
	if (chance(50))
		testfence_signal(timeline, fence_seqno - below(FENCES),
				 chance(20) ? -EIO : 0);
	calls++;
}

static void op_cancel(int p)
{
	__u64 id = next_id > 1 ? (next_id - 1 - below(64)) % MAX_IDS : 0;
	int ret = port_cancel(ports[p].fd, id);

	expect_errno("CANCEL", ret, cancel_ok);
}

static void op_stats(int p)
{
	struct gpuar_port_stats st;
	struct gpuar_point_stats ps;
	int ret;

	if (chance(50))
		ret = port_stats(ports[p].fd, &st);
	else
		ret = point_stats(ports[p].fd, below(6), &ps);
	expect_errno("STATS", ret, stats_ok);
	if (chance(5)) {
		ret = ioctl(ports[p].fd, GPUAR_IOC_PORT_STATS, (void *)8);
		expect_errno("STATS(bad)", ret, stats_ok);
	}
}

static void account_records(int p, const struct gpuar_record *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u64 id = r[i].user_data;

		if (id >= MAX_IDS || state[id] != 1 || owner[id] != p) {
			finding(id < MAX_IDS && state[id] == 2 ?
				"record read twice" : "record of no wait",
				(long)id, 0);
			continue;
		}
		state[id] = 2;
		ports[p].unread--;
		if (r[i].outcome != GPUAR_OUTCOME_CANCELLED ||
		    r[i].status != -EFAULT)
			continue;
		dead_records++;
		if (!may_see_dead_line(p, id))
			finding("dead line's record, its line alive", (long)id,
				0);
	}
}

/* A read of an odd size, sometimes into a buffer that ends in a hole. */
static void op_read(int p)
{
	static struct gpuar_record *hole_buf;
	struct gpuar_record r[16];
	size_t sizes[] = { 0, 63, 64, 65, 128, 200, sizeof(r) };
	size_t len = sizes[below(7)];
	void *buf = r;
	ssize_t got;
	int fd = ports[p].fd;

	if (!hole_buf) {
		char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return;
		munmap(m + page, page);
		hole_buf = (void *)(m + page - 2 * sizeof(*hole_buf));
	}
	if (chance(10)) {
		buf = hole_buf;	/* room for two, then the hole */
		len = sizeof(r);
	} else if (chance(3)) {
		buf = (void *)8;
		len = sizeof(r[0]);
	}
	if (!fd_readable(fd, 0) && !(fcntl(fd, F_GETFL) & O_NONBLOCK)) {
		calls++;
		return;	/* a blocking read would wait for the device */
	}
	got = read(fd, buf, len);
	expect_errno("read", got, read_ok);
	if (got > 0) {
		if (got % sizeof(struct gpuar_record))
			finding("read of a partial record", got, 0);
		account_records(p, buf, (int)(got / sizeof(struct gpuar_record)));
	}
}

static void op_poll(int p)
{
	struct pollfd pf = { .fd = ports[p].fd, .events = POLLIN | POLLPRI };
	int ret = poll(&pf, 1, 0);

	expect_errno("poll", ret, read_ok);
}

/* Close (or swap for a dup): what was committed and unread is gone. */
static void op_close(int p)
{
	int dupfd, i;

	if (chance(50)) {
		dupfd = dup(ports[p].fd);
		calls++;
		if (dupfd >= 0) {
			close(ports[p].fd);
			ports[p].fd = dupfd;
		}
		return;
	}
	close(ports[p].fd);
	calls++;
	ports[p].fd = -1;
	ports[p].unread = 0;	/* its records went with it */
	for (i = 0; i < LINE_IDS; i++)
		ports[p].page_of[i] = -1;	/* and its lines */
}

/* A forked child: register, unregister, submit words are EPERM there. */
static void op_fork(int p)
{
	struct kport *kp = &ports[p];
	pid_t pid = fork();
	int status;

	calls++;
	if (pid < 0)
		return;
	if (!pid) {
		__u32 id;
		int bad = 0;

		if (line_register(kp->fd, mem, &id) != -1 || errno != EPERM)
			bad |= 1;
		if (kp->nlines && (line_unregister(kp->fd, kp->lines[0]) != -1 ||
				   errno != EPERM))
			bad |= 2;
		if (submit_word(kp->fd, word_wait(kp->nlines ? kp->lines[0] : 1,
						  0, 1, 1, 0, plan_poll())) != -1 ||
		    errno != EPERM)
			bad |= 4;
		_exit(bad);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		finding("forked child was let in", WEXITSTATUS(status), 0);
}

/*
 * Replace a line page under the waits on it: a fresh page mapped over it
 * (in one step, so the device thread never meets a hole), or its contents
 * dropped (MADV_DONTNEED). Either way the lines registered in it die.
 */
static void op_remap(void)
{
	unsigned int k = below(LINE_PAGES);
	char *at = (char *)mem + k * page;
	int p;
	__u32 id;

	calls++;
	for (p = 0; p < PORTS; p++)
		for (id = 0; id < LINE_IDS; id++)
			if (ports[p].fd >= 0 && ports[p].page_of[id] == (int)k)
				line_died(&ports[p], id);
	if (chance(50))
		madvise(at, page, MADV_DONTNEED);
	else if (mmap(at, page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		 MAP_FAILED)
		finding("remap", -1, errno);
}

/*
 * The operations and their weights in the full mix (out of 100).
 * Creating a port is not drawn: it is what a call does on a port that is
 * closed.
 */
enum op {
	OP_REGISTER, OP_UNREGISTER, OP_WORDS, OP_FENCE_WAITS, OP_FENCES,
	OP_CANCEL, OP_STATS, OP_READ, OP_POLL, OP_CLOSE, OP_FORK, OP_REMAP,
	OP_CREATE, OPS
};

static const struct mix_op op_info[OPS] = {
	[OP_REGISTER] = { "register", 8 },
	[OP_UNREGISTER] = { "unregister", 4 },
	[OP_WORDS] = { "submit_words", 33 },
	[OP_FENCE_WAITS] = { "submit_fences", 7 },
	[OP_FENCES] = { "fences", 3 },
	[OP_CANCEL] = { "cancel", 7 },
	[OP_STATS] = { "stats", 6 },
	[OP_READ] = { "read", 24 },
	[OP_POLL] = { "poll", 4 },
	[OP_CLOSE] = { "close", 2 },
	[OP_FORK] = { "fork", 1 },
	[OP_REMAP] = { "remap", 1 },
	[OP_CREATE] = { "create", 0 },
};

static struct mix mix = { .ops = op_info, .n = OPS };

static enum op one_call(void)
{
	int p = (int)below(PORTS);
	enum op op = (enum op)mix_draw(&mix, rnd());

	if (ports[p].fd < 0)
		op = OP_CREATE;
	switch (op) {
	case OP_CREATE:
		op_create(p);
		break;
	case OP_REGISTER:
		op_register(&ports[p]);
		break;
	case OP_UNREGISTER:
		op_unregister(&ports[p]);
		break;
	case OP_WORDS:
		op_submit_words(p);
		break;
	case OP_FENCE_WAITS:
		op_submit_fences(p);
		break;
	case OP_FENCES:
		op_fences();
		break;
	case OP_CANCEL:
		op_cancel(p);
		break;
	case OP_STATS:
		op_stats(p);
		break;
	case OP_READ:
		op_read(p);
		break;
	case OP_POLL:
		op_poll(p);
		break;
	case OP_CLOSE:
		op_close(p);
		break;
	case OP_FORK:
		op_fork(p);
		break;
	default:
		op_remap();
		break;
	}
	return op;
}

/* End: every fence signalled, backstops past, every record read. */
static void drain(void)
{
	__u64 deadline = mono_ns() + 5000000000ULL;
	struct gpuar_record r[64];
	uint64_t left = 0;
	int p;

	if (timeline >= 0)
		testfence_signal(timeline, fence_seqno, 0);
	for (p = 0; p < PORTS; p++) {
		if (ports[p].fd < 0)
			continue;
		fcntl(ports[p].fd, F_SETFL, O_NONBLOCK);
		while (ports[p].unread && mono_ns() < deadline) {
			ssize_t got;

			if (!fd_readable(ports[p].fd, 100))
				continue;
			got = read(ports[p].fd, r, sizeof(r));
			if (got > 0)
				account_records(p, r, (int)(got / sizeof(r[0])));
		}
		left += ports[p].unread;
	}
	if (left)
		finding("committed waits without a record", (long)left, 0);
}

/*
 * The mix over the run: every PACE_EVERY calls, if the calls target is out
 * of reach at the pace so far, re-planned (kfuzz_mix.h); or, replaying,
 * set as each --mix given says from its call on. A change is printed as
 * the --mix that replays it.
 */
#define PACE_EVERY 2000
#define REPLAYS_MAX 64

static struct {
	uint64_t at;
	const char *text;
} replays[REPLAYS_MAX];
static unsigned int nreplays, replayed;
static uint64_t next_pace = PACE_EVERY;

static void keep_pace(__u64 now, __u64 end, uint64_t max_calls)
{
	bool changed = false;
	char text[256];

	if (nreplays) {
		while (replayed < nreplays && calls >= replays[replayed].at)
			changed = !mix_parse(&mix, replays[replayed++].text);
	} else if (calls >= next_pace) {
		next_pace = calls + PACE_EVERY;
		if (max_calls != UINT64_MAX && end != UINT64_MAX &&
		    calls < max_calls && now < end)
			changed = mix_pace(&mix, max_calls - calls, end - now);
	}
	if (!changed)
		return;
	mix_format(&mix, text, sizeof(text));
	printf("# kfuzz: --mix %llu:%s\n", (unsigned long long)calls, text);
	fflush(stdout);
}

/* --mix <call>:<mix>, kept for keep_pace(). 0, or -1 if malformed. */
static int add_replay(const char *arg)
{
	struct mix probe = mix;
	char *colon;
	uint64_t at = strtoull(arg, &colon, 0);

	if (nreplays == REPLAYS_MAX || *colon != ':' ||
	    mix_parse(&probe, colon + 1) ||
	    (nreplays && at < replays[nreplays - 1].at))
		return -1;
	replays[nreplays].at = at;
	replays[nreplays++].text = colon + 1;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = mono_ns() ^ ((uint64_t)getpid() << 32);
	uint64_t max_calls = 100000, seconds = 480, now, end;
	bool seconds_given = false;
	const char *env = getenv("GPUAR_KFUZZ_SECONDS");
	pthread_t dev;
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--calls"))
			max_calls = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seconds")) {
			seconds = strtoull(argv[i + 1], NULL, 0);
			seconds_given = true;
		} else if (!strcmp(argv[i], "--mix") && add_replay(argv[i + 1])) {
			printf("kfuzz: bad --mix %s\n", argv[i + 1]);
			return 2;
		}
	}
	if (env && *env && !seconds_given) {
		seconds = strtoull(env, NULL, 0);
		max_calls = UINT64_MAX;
	}
	rng_state = seed;
	device_rng_state = ~seed;
	printf("1..1\n# kfuzz: seed %llu\n", (unsigned long long)seed);
	fflush(stdout);

	page = sysconf(_SC_PAGESIZE);
	mem = lines_map(LINE_PAGES);
	state = calloc(MAX_IDS, 1);
	owner = calloc(MAX_IDS, 1);
	wait_line = calloc(MAX_IDS, sizeof(*wait_line));
	if (!mem || !state || !owner || !wait_line) {
		printf("not ok 1 kfuzz # setup\n");
		return 1;
	}
	memset(owner, -1, MAX_IDS);
	for (i = 0; i < PORTS; i++) {
		ports[i].fd = -1;
		memset(ports[i].page_of, -1, sizeof(ports[i].page_of));
	}
	for (i = 0; i < FENCES; i++)
		fences[i] = -1;
	timeline = testfence_timeline();
	signal(SIGPIPE, SIG_IGN);
	pthread_create(&dev, NULL, device_run, NULL);

	now = mono_ns();
	end = seconds ? now + seconds * 1000000000ULL : UINT64_MAX;
	while (calls < max_calls && now < end) {
		enum op op;
		__u64 after;

		keep_pace(now, end, max_calls);
		op = one_call();
		after = mono_ns();

		mix_account(&mix, op, after - now);
		now = after;
	}
	drain();
	stop_device = 1;
	pthread_join(dev, NULL);

	mix_print_profile(&mix, "kfuzz");
	printf("# kfuzz: %llu waits ended by their line's death\n",
	       (unsigned long long)dead_records);
	printf("kfuzz: %llu calls, %llu waits, seed %llu\n",
	       (unsigned long long)calls, (unsigned long long)waits,
	       (unsigned long long)seed);
	if (findings)
		printf("not ok 1 kfuzz # %llu findings\n",
		       (unsigned long long)findings);
	else
		printf("ok 1 kfuzz\n");
	return findings ? 1 : 0;
}
