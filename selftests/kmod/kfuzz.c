// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz: a structure-aware fuzzer of the module, reproducible from its
 * seed. Random sequences over every entry point of <linux/gpuar.h>, from
 * several threads on the same ports: port creation with random flags
 * (imminent ports among them), line register and unregister (good,
 * misaligned, NULL, kernel, unmapped, remapped or dropped under pending
 * waits, and with the argument on a read-only page while other threads
 * unregister the id it is about to get; one page of lines is shmem),
 * reclaim over the lines' pages (MADV_PAGEOUT), word and fence batches
 * with random fields, counts and points, predicted waits that are raised imminent,
 * CLAIM with good, faulting and huge entries, counts and leases,
 * WAIT_READY with deadlines at the clock's extremes, cancel, statistics,
 * reads of odd sizes into bad or partly mapped buffers, blocking reads,
 * io_uring reads left in flight, poll, dup and close, ports with the
 * shared completion area reaped by swap and scribbled over, and forked
 * children acting on inherited ports, while a device thread stores into
 * the lines (kfuzz.h lists the files).
 *
 * The oracle:
 *   - every call answers success or an errno the ABI header documents for
 *     it (anything else is a finding, printed with the call's number);
 *   - every committed wait yields exactly one record, whoever ends it (the
 *     device, a cancel, a claimer's read, a lease that ran out, a
 *     backstop) and whoever takes it (read(), io_uring, or a swap of the
 *     area's head): each wait carries a fresh user_data, a record of an
 *     unknown or already seen user_data, or of a batch that failed, is a
 *     finding, and at the end (fences signalled, backstops past) every
 *     port's committed waits have all been read; a port whose area kfuzz
 *     scribbled over leaves this count from then on (kfuzz_area.c);
 *   - a dead line's record (CANCELLED, -EFAULT) only for a word wait on a
 *     line whose page the fuzzer remapped or dropped while it was
 *     registered (the line died), never for a page only paged out or, in
 *     shmem, dropped (its page comes back): the oracle follows each
 *     registration of a line id in the line pages, and which of them died;
 *   - a port never has more points than max_points (PORT_STATS);
 *   - a successful read returns whole records; EPOLLPRI only on an
 *     imminent port;
 *   - a CLAIM hands out at most the count asked and at most one chunk (64)
 *     of waits; only on an imminent port; each a wait of this port that
 *     predicts (only those are raised), not ended before the claim, not
 *     handed out before while its lease runs, described as submitted
 *     (line, address, slot, target), leased no later than its backstop,
 *     its entry's tail zeroed, and, where its word is one only kfuzz
 *     stores and none was stored meanwhile, not done;
 *   - WAIT_READY says ETIME only once its deadline passed, and never for
 *     a deadline past the clock's range (>= 2^63: no deadline);
 *   - a register with its argument read-only fails (EFAULT);
 *   - the kernel's log (/dev/kmsg, where readable) shows no report the VM
 *     runner fails a run on (a WARN, KASAN, lockdep, ...).
 *
 *   kfuzz [--seed N] [--calls N] [--seconds S] [--racers N]
 *         [--mix CALL:MIX]...
 *
 * Defaults: a seed from the clock, 100000 calls or 480 s, whichever comes
 * first (so the suites' run ends well inside the runner's per-binary
 * timeout on a slow debug kernel; the line says how many calls it made),
 * two racer threads beside the main one. The environment's
 * GPUAR_KFUZZ_SECONDS, if set, bounds the run instead and lifts the call
 * count. Prints "kfuzz: <calls> calls, <waits> waits, seed <seed>" last
 * (after comments with the waits that ended by their line's death, what
 * the imminent and racing calls did, and the run's time) and TAP (one
 * test), so the VM runner counts it as a suite. Exit status 0 when the
 * oracle held. Calls count every thread's.
 *
 * With both a call count and a time bound, the run keeps pace: where the
 * full mix of operations would not make the count in time (a debug
 * kernel, where a fork or a port's creation costs tens of milliseconds),
 * the main thread's dearest operations are drawn more seldom, never to
 * none (kfuzz_mix.h). Each change of the mix is printed as the --mix that
 * replays it. Before the last line, a profile (TAP comments) gives each
 * operation's count and time, the main thread's and the racers' apart.
 *
 * Replay. Every thread draws from its own generator, seeded from the seed
 * and its number, and so does the device thread: each replays its own
 * sequence of draws. With --racers 0 a seed, the call count and the run's
 * --mix lines replay the run as far as the kernel answers alike (an
 * unregistration is refused while waits on the line pend, which the
 * device's pace decides). With racers the threads' calls interleave as
 * the scheduler pleases, and their answers (which line ids exist, which
 * records a read finds) steer what each thread does next: a replay makes
 * the same kinds of calls at about the same rates and reaches the same
 * races again, but not the same interleaving. A finding that needs a race
 * may take a few replays, or a longer run (make fuzz-kmod).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kfuzz.h"
#include "kfuzz_mix.h"
#include "port_fixture.h"
#include "testfence_fixture.h"

__thread uint64_t rng_state;
static uint64_t device_rng_state, seed, max_calls = 100000;
__u64 *mem;
long page;
int fences[FENCES];
static int timeline = -1, stop_device;
static __u64 fence_seqno;

uint64_t splitmix(uint64_t *state)
{
	/* splitmix64: tiny, and the same sequence everywhere. */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rnd(void)
{
	return splitmix(&rng_state);
}

uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

bool chance(unsigned int pct)
{
	return below(100) < pct;
}

static void *device_run(void *arg)
{
	size_t words = LINE_PAGES * (size_t)page / 8;

	(void)arg;
	while (!__atomic_load_n(&stop_device, __ATOMIC_RELAXED)) {
		/* One draw: the word, the step, whether and how long to rest. */
		uint64_t r = splitmix(&device_rng_state);

		__atomic_fetch_add(&mem[(uint32_t)r % words], 1 + (r >> 32) % 3,
				   __ATOMIC_RELEASE);
		if ((r >> 40) % 100 < 5)
			usleep((r >> 48) % 200);
	}
	return NULL;
}

/* ------------------------------------------- the main thread's own calls */

static void op_create(int p)
{
	struct kport *kp = &ports[p];
	__u32 flags = chance(90) ? GPUAR_PORT_CLOEXEC |
				   (chance(50) ? GPUAR_PORT_NONBLOCK : 0) |
				   (chance(40) ? GPUAR_PORT_IMMINENT : 0) |
				   (chance(40) ? GPUAR_PORT_AREA : 0) :
				   (__u32)rnd();
	int fd = area_port_create(flags);
	struct gpuar_area *a;
	size_t len = 0;

	if (fd < 0)
		return;
	a = area_map(fd, flags & GPUAR_PORT_AREA, &len);
	pthread_rwlock_wrlock(&kp->use);
	if (kp->fd < 0) {
		port_opened(p, fd, flags);
		kp->area = a;
		kp->area_len = len;
		line_event(p, 'O', 0, fd);
		fd = -1;
		a = NULL;
	}
	pthread_rwlock_unlock(&kp->use);
	if (a)
		munmap(a, len);
	if (fd >= 0)
		close(fd);
}

/* Half the time the area's mapping goes before the port's fd. */
static void area_unmap(struct kport *kp)
{
	if (kp->area && chance(50)) {
		munmap(kp->area, kp->area_len);
		kp->area = NULL;
	}
}

/* Close (or swap for a dup): what was committed and unread is gone. */
static void op_close(int p)
{
	struct kport *kp = &ports[p];
	int dupfd;

	pthread_rwlock_wrlock(&kp->use);
	if (chance(50)) {
		dupfd = dup(kp->fd);
		if (dupfd >= 0) {
			close(kp->fd);
			kp->fd = dupfd;
		}
	} else {
		area_unmap(kp);
		close(kp->fd);
		kp->fd = -1;
		if (kp->area) {
			munmap(kp->area, kp->area_len);
			kp->area = NULL;
		}
		port_closed(p);
		line_event(p, 'C', 0, 0);
	}
	pthread_rwlock_unlock(&kp->use);
	call_done();
}

/* A forked child: register, unregister, submit words are EPERM there. */
static void op_fork(int p)
{
	struct kport *kp = &ports[p];
	__u32 line = 0;
	__u64 addr;
	pid_t pid;
	int status;

	pthread_rwlock_rdlock(&kp->use);
	pick_line(p, -1, &line, &addr);
	pid = fork();
	call_done();
	if (!pid) {
		__u32 id;
		int bad = 0;

		if (line_register(kp->fd, mem, &id) != -1 || errno != EPERM)
			bad |= 1;
		if (line && (line_unregister(kp->fd, line) != -1 ||
			     errno != EPERM))
			bad |= 2;
		if (submit_word(kp->fd, word_wait(line ?: 1, 0, 1, 1, 0,
						  plan_poll())) != -1 ||
		    errno != EPERM)
			bad |= 4;
		_exit(bad);
	}
	pthread_rwlock_unlock(&kp->use);
	if (pid < 0)
		return;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		finding("forked child was let in", WEXITSTATUS(status), 0);
}

/* Map page @k of the lines afresh: shmem for SHM_PAGE, else anonymous. */
static void *page_map(unsigned int k, int flags)
{
	return mmap((char *)mem + k * page, page, PROT_READ | PROT_WRITE,
		    (k == SHM_PAGE ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS |
		    flags, -1, 0);
}

/*
 * Replace a page of lines under the waits (and claims) on it: a fresh
 * page mapped over it (in one step, so the device thread never meets a
 * hole), or its contents dropped (MADV_DONTNEED). Either way the lines
 * registered in it die, except in the shmem page, whose dropped page
 * stays in its file and comes back: those lines live.
 */
static void op_remap(void)
{
	unsigned int k = below(MEM_PAGES);
	char *at = (char *)mem + k * page;
	bool drop = chance(50);
	int p;

	call_done();
	for (p = 0; p < PORTS; p++) {
		lines_lock(p);
		lines_begin(p, 0, NULL);
	}
	if (k == IMM_PAGE)
		imm_begin();
	if (!drop || k != SHM_PAGE)
		page_dropped(k);
	for (p = 0; p < PORTS; p++)
		line_event(p, 'M', k, 0);
	if (drop)
		madvise(at, page, MADV_DONTNEED);
	else if (page_map(k, MAP_FIXED) == MAP_FAILED)
		finding("remap", -1, errno);
	if (k == IMM_PAGE)
		imm_end();
	for (p = 0; p < PORTS; p++) {
		lines_end(p, 0);
		lines_unlock(p);
	}
}

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

/*
 * Reclaim over some of the lines' pages (MADV_PAGEOUT): a pinned page
 * stays where it is (a shmem one is unmapped and faulted back), so no
 * line dies, and the watch's looks at them go to each port's one verify
 * work. Errors are ignored (a kernel without it says EINVAL).
 */
static void op_pageout(void)
{
	unsigned int k = below(MEM_PAGES), n = 1 + below(MEM_PAGES - k);

	call_done();
	madvise((char *)mem + k * page, n * page, MADV_PAGEOUT);
}

/* New fences, the old ones signalled (some with an error). */
static void op_fences(void)
{
	int i;

	call_done();
	if (timeline < 0)
		return;
	for (i = 0; i < FENCES; i++) {
		int old = fences[i];

		if (old >= 0 && chance(50))
			continue;
		__atomic_store_n(&fences[i], testfence_fence(timeline,
							     ++fence_seqno),
				 __ATOMIC_RELAXED);
		if (old >= 0)
			close(old);
	}
	if (chance(50))
		testfence_signal(timeline, fence_seqno - below(FENCES),
				 chance(20) ? -EIO : 0);
}

/* ------------------------------------------------------------- the mix */

/*
 * The operations and their weights in the full mix: the main thread's
 * and the racers' (out of about 100 each). Creating a port is not drawn:
 * it is what a main thread's call does on a port that is closed. The
 * calls that change the fd table or the fences (create, close, fork,
 * remap, fences) are the main thread's alone.
 */
enum op {
	OP_REGISTER, OP_UNREGISTER, OP_WORDS, OP_FENCE_WAITS, OP_FENCES,
	OP_CANCEL, OP_STATS, OP_READ, OP_POLL, OP_CLOSE, OP_FORK, OP_REMAP,
	OP_CREATE, OP_IMM_WORDS, OP_IMM_STORE, OP_CLAIM, OP_WAIT_READY,
	OP_READ_BLOCK, OP_REGISTER_RO, OP_UNREG_HINT, OP_URING, OP_DUP,
	OP_PAGEOUT, OP_AREA_REAP, OP_SCRIBBLE, OPS
};

static const struct mix_op main_ops[OPS] = {
	[OP_REGISTER] = { "register", 7 },
	[OP_UNREGISTER] = { "unregister", 3 },
	[OP_WORDS] = { "submit_words", 24 },
	[OP_FENCE_WAITS] = { "submit_fences", 5 },
	[OP_FENCES] = { "fences", 3 },
	[OP_CANCEL] = { "cancel", 5 },
	[OP_STATS] = { "stats", 4 },
	[OP_READ] = { "read", 17 },
	[OP_POLL] = { "poll", 3 },
	[OP_CLOSE] = { "close", 2 },
	[OP_FORK] = { "fork", 1 },
	[OP_REMAP] = { "remap", 1 },
	[OP_CREATE] = { "create", 0 },
	[OP_IMM_WORDS] = { "imm_words", 6 },
	[OP_IMM_STORE] = { "imm_store", 5 },
	[OP_CLAIM] = { "claim", 5 },
	[OP_WAIT_READY] = { "wait_ready", 3 },
	[OP_READ_BLOCK] = { "read_block", 2 },
	[OP_REGISTER_RO] = { "register_ro", 3 },
	[OP_UNREG_HINT] = { "unreg_hint", 0 },
	[OP_URING] = { "uring", 2 },
	[OP_DUP] = { "dup", 1 },
	[OP_PAGEOUT] = { "pageout", 1 },
	[OP_AREA_REAP] = { "area_reap", 6 },
	[OP_SCRIBBLE] = { "scribble", 1 },
};

static const struct mix_op racer_ops[OPS] = {
	[OP_REGISTER] = { "register", 2 },
	[OP_UNREGISTER] = { "unregister", 2 },
	[OP_WORDS] = { "submit_words", 10 },
	[OP_FENCE_WAITS] = { "submit_fences", 3 },
	[OP_FENCES] = { "fences", 0 },
	[OP_CANCEL] = { "cancel", 6 },
	[OP_STATS] = { "stats", 2 },
	[OP_READ] = { "read", 12 },
	[OP_POLL] = { "poll", 3 },
	[OP_CLOSE] = { "close", 0 },
	[OP_FORK] = { "fork", 0 },
	[OP_REMAP] = { "remap", 0 },
	[OP_CREATE] = { "create", 0 },
	[OP_IMM_WORDS] = { "imm_words", 8 },
	[OP_IMM_STORE] = { "imm_store", 6 },
	[OP_CLAIM] = { "claim", 12 },
	[OP_WAIT_READY] = { "wait_ready", 8 },
	[OP_READ_BLOCK] = { "read_block", 4 },
	[OP_REGISTER_RO] = { "register_ro", 0 },
	[OP_UNREG_HINT] = { "unreg_hint", 10 },
	[OP_URING] = { "uring", 6 },
	[OP_DUP] = { "dup", 3 },
	[OP_PAGEOUT] = { "pageout", 0 },
	[OP_AREA_REAP] = { "area_reap", 8 },
	[OP_SCRIBBLE] = { "scribble", 0 },
};

static struct mix mix = { .ops = main_ops, .n = OPS };

/* One call on port slot @s, of any thread. */
static void port_call(struct kctx *c, enum op which, struct pslot *s)
{
	switch (which) {
	case OP_REGISTER:
		op_register(s);
		break;
	case OP_UNREGISTER:
		op_unregister(s);
		break;
	case OP_WORDS:
		op_submit_words(s);
		break;
	case OP_FENCE_WAITS:
		op_submit_fences(s);
		break;
	case OP_CANCEL:
		op_cancel(s);
		break;
	case OP_STATS:
		op_stats(s);
		break;
	case OP_POLL:
		op_poll(s);
		break;
	case OP_IMM_WORDS:
		op_imm_submit(s);
		break;
	case OP_CLAIM:
		op_claim(s);
		break;
	case OP_WAIT_READY:
		op_wait_ready(c, s);
		break;
	case OP_READ_BLOCK:
		op_read_block(c, s);
		break;
	case OP_REGISTER_RO:
		op_register_ro(s);
		break;
	case OP_UNREG_HINT:
		op_unreg_hint(s);
		break;
	case OP_URING:
		op_uring(c, s);
		break;
	case OP_AREA_REAP:
		op_area_reap(s);
		break;
	case OP_SCRIBBLE:
		op_scribble(s);
		break;
	default:
		op_read(s);
		break;
	}
}

/*
 * Through a dup of the port's fd, held without the port's lock: the
 * main thread may close the port's own fd meanwhile, and then this
 * call's close ends the port.
 */
static void dup_call(struct kctx *c, struct pslot *s)
{
	static const enum op via_dup[] = { OP_READ, OP_WAIT_READY, OP_CLAIM,
					   OP_WORDS, OP_CANCEL, OP_POLL };
	int fd = dup(s->fd);

	pthread_rwlock_unlock(&ports[s->p].use);
	call_done();
	if (fd < 0)
		return;
	s->fd = fd;
	s->area = NULL;		/* the mapping is the port's, not held here */
	port_call(c, via_dup[below(sizeof(via_dup) / sizeof(*via_dup))], s);
	close(fd);
}

/* One draw of thread @c from mix @m: the op, or OPS for none made. */
static enum op draw_call(struct kctx *c, const struct mix *m)
{
	int p = (int)below(PORTS);
	enum op op = (enum op)mix_draw(m, rnd());
	struct kport *kp = &ports[p];
	struct pslot s;

	if (!c->tid && kp->fd < 0)
		op = OP_CREATE;
	__atomic_store_n(&c->op, op, __ATOMIC_RELAXED);
	switch (op) {
	case OP_CREATE:
		op_create(p);
		return op;
	case OP_CLOSE:
		op_close(p);
		return op;
	case OP_FORK:
		op_fork(p);
		return op;
	case OP_REMAP:
		op_remap();
		return op;
	case OP_PAGEOUT:
		op_pageout();
		return op;
	case OP_FENCES:
		op_fences();
		return op;
	case OP_IMM_STORE:
		op_imm_store();
		return op;
	default:
		break;
	}
	pthread_rwlock_rdlock(&kp->use);
	if (kp->fd < 0) {
		pthread_rwlock_unlock(&kp->use);
		return OPS;
	}
	s.p = p;
	s.fd = kp->fd;
	s.inc = kp->inc;
	s.imminent = kp->imminent;
	s.nonblock = kp->nonblock;
	s.area = kp->area;
	s.area_len = kp->area_len;
	if (op == OP_DUP) {
		dup_call(c, &s);
		return op;
	}
	port_call(c, op, &s);
	pthread_rwlock_unlock(&kp->use);
	return op;
}

/*
 * The watchdog: every call ends within its timer's signals, its cancel's
 * wait, or the kernel's own bounds, so a thread in one call for STUCK_S
 * is a finding (the kernel did not let it go). The run ends there, with
 * the call named, rather than at the runner's timeout.
 */
#define STUCK_S 60
static struct kctx ctxs[RACERS_MAX + 1];	/* by thread number */

static enum op one_call(struct kctx *c, const struct mix *m, __u64 now)
{
	uint64_t key = seed ^ (uint64_t)c->tid << 56 ^
		       c->draws++ * 0xd1342543de82ef95ULL;
	enum op op;

	/*
	 * Each call draws from its own generator (the seed, the thread,
	 * the call's number): how many draws one call made, which its
	 * answers decide, never moves the next call's.
	 */
	rng_state = splitmix(&key);
	__atomic_store_n(&c->since, now, __ATOMIC_RELAXED);
	op = draw_call(c, m);
	__atomic_store_n(&c->op, OPS, __ATOMIC_RELAXED);
	return op;
}

static void *watchdog_run(void *arg)
{
	unsigned int i;

	(void)arg;
	while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
		__u64 now = mono_ns();

		sleep(1);
		for (i = 0; i <= RACERS_MAX; i++) {
			unsigned int op = __atomic_load_n(&ctxs[i].op,
							  __ATOMIC_RELAXED);
			__u64 since = __atomic_load_n(&ctxs[i].since,
						      __ATOMIC_RELAXED);

			if (op >= OPS || now < since ||
			    now - since < STUCK_S * 1000000000ULL)
				continue;
			printf("# kfuzz: thread %d is in a %s call for %llu s\n",
			       (int)i, main_ops[op].name,
			       (unsigned long long)((now - since) / 1000000000ULL));
			finding("a call that never returned", 0, 0);
			kmsg_check();
			findings_summary();
			printf("not ok 1 kfuzz # a call never returned\n");
			fflush(stdout);
			_exit(1);
		}
	}
	return NULL;
}


/* Thread @tid's context: its generator, ring and timer. */
static struct kctx *kctx_init(int tid)
{
	struct kctx *c = &ctxs[tid];

	memset(c, 0, sizeof(*c));
	c->tid = tid;
	kfuzz_tid = tid;
	c->op = OPS;
	c->ring_ok = !io_uring_queue_init(8, &c->ring, 0);
	alarm_setup(c);
	c->idle_fd = t_port_open(GPUAR_PORT_CLOEXEC |
				 (tid % 2 ? GPUAR_PORT_IMMINENT : 0));
	return c;
}

static void kctx_fini(struct kctx *c)
{
	uring_finish(c);
	if (c->idle_fd >= 0)
		close(c->idle_fd);
	if (c->alarm_ok)
		timer_delete(c->alarm);
}

struct racer {
	pthread_t thread;
	int tid;
	struct mix mix;
};

static void *racer_run(void *arg)
{
	struct racer *r = arg;
	struct kctx *c = kctx_init(r->tid);
	unsigned int idle = 0;
	__u64 now;

	now = mono_ns();
	while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED) &&
	       ncalls() < max_calls) {
		enum op op = one_call(c, &r->mix, now);
		__u64 after = mono_ns();

		if (op == OPS) {
			if (++idle % 8 == 0)
				usleep(100);	/* every port closed: wait */
		} else {
			mix_account(&r->mix, op, after - now);
		}
		now = after;
	}
	kctx_fini(c);
	return NULL;
}

/* End: every fence signalled, backstops past, every record read. */
static void drain(void)
{
	__u64 deadline = mono_ns() + 5000000000ULL;
	struct gpuar_record r[64];
	uint64_t left = 0, unread;
	int p;

	if (timeline >= 0)
		testfence_signal(timeline, fence_seqno, 0);
	for (p = 0; p < PORTS; p++) {
		if (ports[p].fd < 0)
			continue;
		fcntl(ports[p].fd, F_SETFL, O_NONBLOCK);
		for (;;) {
			ssize_t got;
			bool owed;

			orc_lock();
			unread = ports[p].unread;
			/* A scribbled port owes nothing: read what is there. */
			owed = !inc_scribbled(ports[p].inc);
			orc_unlock();
			if (!owed) {
				unread = 0;
				while (read(ports[p].fd, r, sizeof(r)) > 0)
					;
				break;
			}
			if (!unread || mono_ns() >= deadline)
				break;
			if (!fd_readable(ports[p].fd, 100))
				continue;
			got = read(ports[p].fd, r, sizeof(r));
			if (got > 0)
				records_account(ports[p].inc, r,
						(int)(got / sizeof(r[0])));
		}
		left += unread;
	}
	if (left)
		finding("committed waits without a record", (long)left, 0);
}

/*
 * The mix over the run: every PACE_EVERY calls, if the calls target is out
 * of reach at the pace so far, re-planned (kfuzz_mix.h); or, replaying,
 * set as each --mix given says from its call on. A change is printed as
 * the --mix that replays it. The racers' calls count toward the target:
 * the main thread plans for its own share of what is left.
 */
#define PACE_EVERY 2000
#define REPLAYS_MAX 64

static struct {
	uint64_t at;
	const char *text;
} replays[REPLAYS_MAX];
static unsigned int nreplays, replayed;
static uint64_t next_pace = PACE_EVERY;

static void keep_pace(__u64 now, __u64 end, uint64_t main_calls)
{
	uint64_t calls = ncalls();
	bool changed = false;
	char text[512];

	if (nreplays) {
		while (replayed < nreplays && calls >= replays[replayed].at)
			changed = !mix_parse(&mix, replays[replayed++].text);
	} else if (calls >= next_pace) {
		next_pace = calls + PACE_EVERY;
		if (max_calls != UINT64_MAX && end != UINT64_MAX &&
		    calls < max_calls && now < end)
			changed = mix_pace(&mix, (max_calls - calls) *
					   main_calls / calls, end - now);
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
	uint64_t seconds = 480, main_calls = 0;
	struct racer racers[RACERS_MAX];
	unsigned int nracers = 2, i;
	bool seconds_given = false;
	const char *env = getenv("GPUAR_KFUZZ_SECONDS");
	__u64 now, start, end;
	struct mix racer_mix;
	struct kctx *c;
	pthread_t dev, dog;

	seed = mono_ns() ^ ((uint64_t)getpid() << 32);
	for (i = 1; i + 1 < (unsigned int)argc; i += 2) {
		if (!strcmp(argv[i], "--seed")) {
			seed = strtoull(argv[i + 1], NULL, 0);
		} else if (!strcmp(argv[i], "--calls")) {
			max_calls = strtoull(argv[i + 1], NULL, 0);
		} else if (!strcmp(argv[i], "--seconds")) {
			seconds = strtoull(argv[i + 1], NULL, 0);
			seconds_given = true;
		} else if (!strcmp(argv[i], "--racers")) {
			nracers = (unsigned int)strtoul(argv[i + 1], NULL, 0);
			if (nracers > RACERS_MAX)
				nracers = RACERS_MAX;
		} else if (!strcmp(argv[i], "--mix") &&
			   add_replay(argv[i + 1])) {
			printf("kfuzz: bad --mix %s\n", argv[i + 1]);
			return 2;
		}
	}
	if (env && *env && !seconds_given) {
		seconds = strtoull(env, NULL, 0);
		max_calls = UINT64_MAX;
	}
	device_rng_state = ~seed;
	printf("1..1\n# kfuzz: seed %llu, %u racers\n",
	       (unsigned long long)seed, nracers);
	fflush(stdout);

	page = sysconf(_SC_PAGESIZE);
	mem = lines_map(MEM_PAGES);
	if (mem && page_map(SHM_PAGE, MAP_FIXED) == MAP_FAILED)
		mem = NULL;
	if (!mem) {
		printf("not ok 1 kfuzz # setup\n");
		return 1;
	}
	oracle_init();
	ro_args_map();
	for (i = 0; i < PORTS; i++) {
		pthread_rwlockattr_t a;

		pthread_rwlockattr_init(&a);
		/* A close must not wait for racers that keep reading. */
		pthread_rwlockattr_setkind_np(&a,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&ports[i].use, &a);
	}
	for (i = 0; i < FENCES; i++)
		fences[i] = -1;
	timeline = testfence_timeline();
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i <= RACERS_MAX; i++)
		ctxs[i].op = OPS;
	c = kctx_init(0);
	kmsg_open();
	pthread_create(&dev, NULL, device_run, NULL);
	pthread_create(&dog, NULL, watchdog_run, NULL);
	for (i = 0; i < nracers; i++) {
		racers[i].tid = (int)i + 1;
		racers[i].mix = (struct mix){ .ops = racer_ops, .n = OPS };
		pthread_create(&racers[i].thread, NULL, racer_run, &racers[i]);
	}

	start = now = mono_ns();
	end = seconds ? now + seconds * 1000000000ULL : UINT64_MAX;
	while (ncalls() < max_calls && now < end) {
		enum op op;
		__u64 after;

		keep_pace(now, end, main_calls + 1);
		op = one_call(c, &mix, now);
		kmsg_check();
		after = mono_ns();
		mix_account(&mix, op, after - now);
		main_calls++;
		now = after;
	}
	__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
	racer_mix = (struct mix){ .ops = racer_ops, .n = OPS };
	for (i = 0; i < nracers; i++) {
		unsigned int op;

		pthread_join(racers[i].thread, NULL);
		for (op = 0; op < OPS; op++) {
			racer_mix.count[op] += racers[i].mix.count[op];
			racer_mix.ns[op] += racers[i].mix.ns[op];
		}
	}
	pthread_join(dog, NULL);
	kctx_fini(c);
	drain();
	__atomic_store_n(&stop_device, 1, __ATOMIC_RELAXED);
	pthread_join(dev, NULL);
	kmsg_check();

	mix_print_profile(&mix, "kfuzz");
	if (nracers)
		mix_print_profile(&racer_mix, "kfuzz racers");
	imminent_summary();
	race_summary();
	area_summary();
	findings_summary();
	printf("# kfuzz: %llu waits ended by their line's death\n",
	       (unsigned long long)dead_records);
	printf("# kfuzz: %.1f s\n", (double)(mono_ns() - start) / 1e9);
	printf("kfuzz: %llu calls, %llu waits, seed %llu\n",
	       (unsigned long long)ncalls(), (unsigned long long)waits,
	       (unsigned long long)seed);
	if (findings)
		printf("not ok 1 kfuzz # %llu findings\n",
		       (unsigned long long)findings);
	else
		printf("ok 1 kfuzz\n");
	return findings ? 1 : 0;
}
