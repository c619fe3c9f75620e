// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz's imminent waits and its waits for records: predicted word waits
 * on the imminent page (whose words only kfuzz's threads store, so the
 * oracle knows whether one was done when a claim handed it out), batches
 * large enough that more are raised than one claim may take, CLAIM with
 * good, faulting and huge entries, counts and leases (and claimed waits
 * then watched and read, or left for their lease to run out), WAIT_READY
 * with deadlines at the clock's extremes, and blocking reads that
 * busy-read. A call that may block forever (WAIT_READY without a
 * deadline, a blocking read with nothing to come) is ended by a signal
 * from the thread's own timer: EINTR.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kfuzz.h"
#include "port_fixture.h"

#define IMM_POINT 0x1000	/* estimator points of the imminent waits */
#define CLAIM_BUF (512 * 1024)	/* 4096 entries of 104 bytes fit */
#define KERNEL_ADDR 0xffff888000000000ULL
#define NS_2_63 (1ULL << 63)

static const int claim_ok[] = { EINVAL, EFAULT, E2BIG, ENOMEM, 0 };
static const int ready_ok[] = { ETIME, EINTR, EINVAL, EFAULT, 0 };
static const int read_block_ok[] = { EINTR, EAGAIN, EINVAL, EFAULT, 0 };

static struct {
	uint64_t claims, handed, entries, most, faulting;
	uint64_t ready, etime, eintr;	/* answers: a record queued, ETIME, EINTR */
	uint64_t ready_far;	/* with a deadline >= 2^63 */
	uint64_t ready_idle;	/* of those, on the idle port */
	uint64_t idle_sleeps[2];	/* most sleeps of one idle wait: near, far */
} st;

static void count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static void count_max(uint64_t *m, uint64_t v)
{
	uint64_t cur = __atomic_load_n(m, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(m, &cur, v, false,
						      __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
}

/* ---------------------------------------------------------------- alarm */

static void alarm_handler(int sig)
{
	(void)sig;	/* only to interrupt the call */
}

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* The thread's timer, signalling the thread itself (SIGUSR1). */
void alarm_setup(struct kctx *c)
{
	struct sigaction sa;
	struct sigevent sev;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alarm_handler;	/* no SA_RESTART: the call ends */
	sigaction(SIGUSR1, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	c->alarm_ok = !timer_create(CLOCK_MONOTONIC, &sev, &c->alarm);
	if (!c->alarm_ok)
		printf("# kfuzz: thread %d has no timer (%s): it never blocks\n",
		       c->tid, strerror(errno));
}

/*
 * Signal the thread @ns from now and every @ns after, until set to 0:
 * a thread descheduled past the first signal (a loaded TCG host) is
 * still interrupted once it blocks.
 */
static void alarm_set(struct kctx *c, __u64 ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(ns / 1000000000ULL);
	its.it_value.tv_nsec = (long)(ns % 1000000000ULL);
	its.it_interval = its.it_value;
	timer_settime(c->alarm, 0, &its, NULL);
}

/* ------------------------------------------------------ imminent waits */

/* A word of the imminent page: line @addr's @slot. */
static __u64 *imm_word(__u64 addr, __u32 slot)
{
	return (__u64 *)(uintptr_t)addr + slot;
}

/*
 * Predicted waits on a line of the imminent page, at one of two points
 * that learn from kfuzz's own stores (op_imm_store): their early wakes
 * raise them while their words are not done. One batch in six is larger
 * than a claim may take.
 */
void op_imm_submit(const struct pslot *s)
{
	struct gpuar_word_wait w[IMM_BATCH_MAX];
	int n = chance(15) ? CLAIM_CHUNK + 1 +
			     (int)below(IMM_BATCH_MAX - CLAIM_CHUNK) :
			     1 + (int)below(8);
	struct gpuar_plan pl = plan_predict(1 + below(4));
	__u32 line, slot = below(GPUAR_LINE_SLOTS), idx;
	struct line_snap snap;
	__u64 addr, point = IMM_POINT + below(2);
	int i, ret;

	if (!pick_line(s->p, IMM_PAGE, &line, &addr)) {
		op_register(s);	/* the next one may find a line there */
		return;
	}
	pl.park_ns = 10000 + below(190000);
	pl.margin_ns = 20000 + below(80000);
	pl.backstop_ns = 20000000 + below(280000000);
	for (i = 0; i < n; i++) {
		__u32 sl = chance(70) ? slot : below(GPUAR_LINE_SLOTS);
		__u64 word = __atomic_load_n(imm_word(addr, sl),
					     __ATOMIC_ACQUIRE);

		w[i] = word_wait(line, sl, word + 1 + below(3), point, 0, pl);
	}
	words_reserve(s, w, n, &snap);
	ret = submit_words(s->fd, w, n, &idx);
	expect_errno("SUBMIT_WORD(imminent)", ret, (const int[]){ EFAULT,
		     ENOENT, ENOSPC, ENOMEM, EINVAL, 0 });
	words_settle(s, w, n, ret, idx, &snap);
}

/* Store @target into @word unless it is there already (wrapping order). */
static void imm_reach(__u64 *word, __u64 target)
{
	__u64 cur = __atomic_load_n(word, __ATOMIC_ACQUIRE);

	while ((__s64)(cur - target) < 0 &&
	       !__atomic_compare_exchange_n(word, &cur, target, false,
					    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
		;
}

/* The device of the imminent page: a word of a line there moves on. */
void op_imm_store(void)
{
	int p = (int)below(PORTS);
	__u64 addr;
	__u32 line;

	call_done();
	if (!pick_line(p, IMM_PAGE, &line, &addr) || !in_imm_page(addr))
		addr = (__u64)(uintptr_t)line_at(mem, IMM_PAGE * page / 64 +
						 below((uint32_t)page / 64));
	imm_begin();
	__atomic_fetch_add(imm_word(addr, below(GPUAR_LINE_SLOTS)),
			   1 + below(3), __ATOMIC_RELEASE);
	imm_end();
}

/* ---------------------------------------------------------------- claim */

/*
 * Each thread's claim buffer: CLAIM_BUF bytes, then a read-only page,
 * then a page that cannot be touched (PROT_NONE: an unmapped page would
 * soon hold another thread's mapping, a ring or a buffer).
 */
static char *claim_buf(void)
{
	static __thread char *buf;
	char *m;

	if (buf)
		return buf;
	m = mmap(NULL, CLAIM_BUF + 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	mprotect(m + CLAIM_BUF, page, PROT_READ);
	mprotect(m + CLAIM_BUF + page, page, PROT_NONE);
	buf = m;
	return buf;
}

/*
 * The claimer saw its words done: the imminent ones it stores itself,
 * as a device would, and reads; a read checks the claimed waits first.
 */
static void claim_watch(const struct pslot *s, const struct gpuar_claim *c,
			int n)
{
	const char *at = (const char *)(uintptr_t)c->entries;
	struct gpuar_record r[16];
	struct iovec v = { .iov_base = r, .iov_len = sizeof(r) };
	ssize_t got;
	int i;

	imm_begin();
	for (i = 0; i < n; i++, at += c->entry_size) {
		struct gpuar_claim_entry e;

		memcpy(&e, at, sizeof(e));
		if (in_imm_page(e.addr) && e.slot < GPUAR_LINE_SLOTS)
			imm_reach(imm_word(e.addr, e.slot), e.target);
	}
	imm_end();
	got = preadv2(s->fd, &v, 1, -1, RWF_NOWAIT);
	expect_errno("read(claimed)", got, (const int[]){ EAGAIN, 0 });
	if (got > 0)
		records_account(s->inc, r, (int)(got / sizeof(r[0])));
}

void op_claim(const struct pslot *s)
{
	char *buf = claim_buf();
	struct claim_call cc = { .s = s };
	struct gpuar_claim c;
	unsigned int r = below(100);
	bool good = false;
	int ret, err;

	if (!buf)
		return;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = chance(3) ? 1u << below(32) : 0;
	c.count = r < 45 ? 1 + below(8) : r < 75 ? 1 + below(4096) :
		  r < 85 ? CLAIM_CHUNK + below(200) : r < 92 ? 0 :
		  chance(50) ? 4097 + below(100000) : UINT32_MAX;
	r = below(100);
	c.entry_size = r < 85 ? sizeof(struct gpuar_claim_entry) :
		       r < 93 ? sizeof(struct gpuar_claim_entry) +
				8 * (1 + below(8)) :
		       r < 97 ? below(GPUAR_CLAIM_ENTRY_SIZE_VER1) :
		       (__u32)page + 1 + below(64);
	r = below(100);
	c.lease_ns = r < 30 ? 0 : r < 70 ? 1 + below(10000000) :
		     r < 90 ? below(100000000) : rnd();
	r = below(100);
	if (r < 70) {
		c.entries = (__u64)(uintptr_t)buf;
		good = (uint64_t)c.count * c.entry_size <= CLAIM_BUF;
	} else if (r < 80) {	/* room for one to three, then read-only */
		c.entries = (__u64)(uintptr_t)buf + CLAIM_BUF -
			    (__u64)c.entry_size * (1 + below(3));
	} else if (r < 88) {
		c.entries = (__u64)(uintptr_t)buf + CLAIM_BUF;
	} else if (r < 93) {
		c.entries = (__u64)(uintptr_t)buf + CLAIM_BUF + page;
	} else if (r < 97) {
		c.entries = KERNEL_ADDR;
	}
	cc.c = &c;
	cc.read_before = records_read();
	imm_snap(&cc.imm);
	ret = ioctl(s->fd, GPUAR_IOC_CLAIM, &c);
	err = errno;
	cc.t_after = mono_ns();
	expect_errno("CLAIM", ret, claim_ok);
	count(&st.claims, 1);
	if (ret < 0) {
		if (err == EFAULT) {
			count(&st.faulting, 1);
			if (good)
				finding("CLAIM EFAULT into a good buffer", ret,
					err);
		}
		return;
	}
	if (!s->imminent)
		finding("CLAIM on a port that is not imminent", ret, 0);
	if ((unsigned int)ret > c.count)
		finding("CLAIM wrote more entries than asked", ret, 0);
	if (ret > CLAIM_CHUNK)
		finding("CLAIM handed out more than one chunk (64) of waits",
			ret, 0);
	if (!ret || (unsigned int)ret > c.count)
		return;
	count(&st.handed, 1);
	count(&st.entries, (uint64_t)ret);
	count_max(&st.most, (uint64_t)ret);
	claim_account(&cc, ret);
	/* Watched and read, or left for the lease to run out. */
	if (chance(60))
		claim_watch(s, &c, ret);
}

/* ----------------------------------------------------------- WAIT_READY */

/* A deadline, from the clock's extremes as often as from near ones. */
static __u64 random_deadline(void)
{
	__u64 now = mono_ns();

	switch (below(12)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return now;
	case 3:
		return now + below(2000000);
	case 4:
		return now - below(1000000000);
	case 5:
		return now + 2000000 + below(18000000);
	case 6:
		return INT64_MAX;
	case 7:
		return NS_2_63;
	case 8:
		return NS_2_63 + (rnd() >> 2);
	case 9:
		return UINT64_MAX - 1;
	case 10:
		return UINT64_MAX;
	default:
		return rnd();
	}
}

/*
 * A WAIT_READY on the idle port sleeps once, until its deadline or the
 * signal (IDLE_WAIT_NS): nothing else can wake it. The times it slept
 * (the thread's voluntary context switches) are counted, by whether the
 * deadline lies past the clock's range, and more than IDLE_SLEEPS_MAX is
 * a finding (a sleep whose timer ends it again and again).
 */
#define IDLE_WAIT_NS 40000000ULL
#define IDLE_SLEEPS_MAX 4
static void idle_wakes(const struct gpuar_wait_ready *wr, long n)
{
	bool far = wr->deadline_ns >= NS_2_63 && wr->deadline_ns != UINT64_MAX;

	count_max(&st.idle_sleeps[far], (uint64_t)n);
	if (n > IDLE_SLEEPS_MAX)
		finding("WAIT_READY on a port with nothing to wait for slept again and again",
			n, 0);
}

/*
 * WAIT_READY: 0 once a record is queued, ETIME only once the deadline
 * passed, never for a deadline past the clock's range (>= 2^63, beyond
 * KTIME_MAX: no deadline), EINTR from the thread's timer. One in six
 * waits on the thread's idle port, where nothing is queued and no early
 * wake comes first, so it sleeps to the deadline itself (on a busy port
 * the sleep ends at the next predicted wait's early wake), and where 0
 * would be a record of no wait.
 */
void op_wait_ready(struct kctx *c, const struct pslot *s)
{
	bool bad = chance(2), idle = c->idle_fd >= 0 && chance(16);
	struct gpuar_wait_ready wr;
	struct rusage ru0, ru1;
	__u64 after;
	int ret, err;

	if (!c->alarm_ok)
		return;
	memset(&wr, 0, sizeof(wr));
	wr.size = sizeof(wr);
	wr.flags = chance(3) ? 1u << below(32) : 0;
	wr.deadline_ns = random_deadline();
	getrusage(RUSAGE_THREAD, &ru0);
	alarm_set(c, idle ? IDLE_WAIT_NS : 1000000 + below(19000000));
	ret = ioctl(idle ? c->idle_fd : s->fd, GPUAR_IOC_WAIT_READY,
		    bad ? (void *)8 : (void *)&wr);
	err = errno;
	alarm_set(c, 0);
	after = mono_ns();
	getrusage(RUSAGE_THREAD, &ru1);
	errno = err;
	expect_errno("WAIT_READY", ret, ready_ok);
	if (bad)
		return;
	if (idle)
		idle_wakes(&wr, ru1.ru_nvcsw - ru0.ru_nvcsw);
	if (wr.deadline_ns >= NS_2_63) {
		count(&st.ready_far, 1);
		if (idle)
			count(&st.ready_idle, 1);
	}
	if (!ret && idle) {
		finding("WAIT_READY ready on a port that never had a wait",
			ret, 0);
	} else if (!ret) {
		count(&st.ready, 1);
		if (chance(50))
			op_read(s);
		return;
	}
	if (err == EINTR)
		count(&st.eintr, 1);
	if (err != ETIME)
		return;
	count(&st.etime, 1);
	if (wr.deadline_ns >= NS_2_63)
		finding("WAIT_READY ETIME for a deadline past the clock's range",
			ret, err);
	else if (wr.deadline_ns && after < wr.deadline_ns)
		finding("WAIT_READY ETIME before its deadline", ret, err);
}

/* A blocking read: busy-reads predicted waits, ended by the timer. */
void op_read_block(struct kctx *c, const struct pslot *s)
{
	struct gpuar_record r[16];
	ssize_t got;
	int err;

	if (!c->alarm_ok || s->nonblock) {
		op_read(s);
		return;
	}
	alarm_set(c, 1000000 + below(19000000));
	got = read(s->fd, r, 64 * (1 + below(16)));
	err = errno;
	alarm_set(c, 0);
	errno = err;
	expect_errno("read(blocking)", got, read_block_ok);
	if (got > 0) {
		if (got % sizeof(r[0]))
			finding("read of a partial record", got, 0);
		records_account(s->inc, r, (int)(got / sizeof(r[0])));
	}
}

void imminent_summary(void)
{
	printf("# kfuzz: CLAIM: %llu calls, %llu handed out %llu waits (at most %llu in one), %llu faulted\n",
	       (unsigned long long)st.claims, (unsigned long long)st.handed,
	       (unsigned long long)st.entries, (unsigned long long)st.most,
	       (unsigned long long)st.faulting);
	printf("# kfuzz: WAIT_READY: %llu with a record queued, %llu ETIME, %llu EINTR, %llu with a deadline >= 2^63 (%llu on an idle port)\n",
	       (unsigned long long)st.ready, (unsigned long long)st.etime,
	       (unsigned long long)st.eintr,
	       (unsigned long long)st.ready_far,
	       (unsigned long long)st.ready_idle);
	printf("# kfuzz: WAIT_READY on an idle port slept at most %llu times in one call (deadline < 2^63 or none), %llu (2^63 <= deadline < 2^64-1)\n",
	       (unsigned long long)st.idle_sleeps[0],
	       (unsigned long long)st.idle_sleeps[1]);
}
