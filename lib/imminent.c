// SPDX-License-Identifier: MIT
/*
 * Imminent readiness, for both engines: a port opened with
 * GPUAR_PORT_IMMINENT turns ready at a predicted wait's early wake (the
 * module raises EPOLLPRI; the user engine's fd turns readable), and
 * whoever runs the port next claims the imminent waits and watches their
 * words in user mode (the CPU's hardware word wait where there is one,
 * else a load loop), so the store is seen at about a spin's latency
 * while the spin stays in the caller's thread, accounted to it, and lasts
 * one lease at most. A lease that runs out gives the wait back to the
 * port's timer.
 */
#include "port.h"
#include "defaults.h"

#include <errno.h>
#include <string.h>

/* The longest lease a caller may ask for (as the busy-read budget). */
#define CLAIM_LEASE_MAX_NS ((u64)GPUAR_BUSY_READ_MAX_US * GPUAR_NSEC_PER_USEC)

/*
 * One hardware word wait at most this long before the lease is looked at
 * again (umwait and mwaitx also end at the OS's own bound).
 */
#define CLAIM_HW_BOUND_NS 20000ULL

/* The load loop reads the clock once every this many passes. */
#define CLAIM_CLOCK_PASSES 16

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

int gpuar_imminent_check(u32 flags, const char *lacking, bool *imminent,
			 struct gpuar_error *diag)
{
	const char *args[2] = {
		"imminent readiness (GPUAR_PORT_IMMINENT)", lacking,
	};

	*imminent = false;
	if (!(flags & GPUAR_PORT_IMMINENT))
		return 0;
	if (!lacking) {
		*imminent = true;
		return 0;
	}
	if (flags & GPUAR_PORT_STRICT)
		return gpuar_diag_set(diag, GPUAR_E_FEATURE_UNAVAILABLE, EOPNOTSUPP,
				      args, 2);
	gpuar_diag_set(diag, GPUAR_W_FEATURE_FALLBACK, 0, args, 2);
	return 0;
}

/*
 * The word a claim entry names, if it is in one of this port's lines
 * (lines_lock held, which keeps the line mapped): the engine names a
 * line by the address it was registered at, which is ours.
 */
static const uint64_t *claimed_word(const struct gpuar_port *port,
				    const struct gpuar_claim_entry *e)
{
	u32 i;

	if (e->slot >= GPUAR_LINE_SLOTS)
		return NULL;
	for (i = 0; i < port->lines_cap; i++)
		if (port->lines[i] &&
		    (u64)(uintptr_t)port->lines[i]->words == e->addr)
			return &port->lines[i]->words[e->slot];
	return NULL;
}

static u32 count_reached(const uint64_t *const *word, const u64 *target, u32 n)
{
	u32 i, hit = 0;

	for (i = 0; i < n; i++)
		hit += gpuar_reached(gpuar_word_load(word[i]), target[i]);
	return hit;
}

/* A load loop over @n words until one reaches its target or @until. */
static u32 spin_watch(const uint64_t *const *word, const u64 *target, u32 n,
		      u64 until)
{
	u32 pass, hit;

	for (pass = 1;; pass++) {
		hit = count_reached(word, target, n);
		if (hit)
			return hit;
		gpuar_cpu_relax();
		if (pass % CLAIM_CLOCK_PASSES == 0 && gpuar_now_ns() >= until)
			return 0;
	}
}

/* One word in the hardware word wait, else (a bound it cannot keep) loads. */
static u32 hw_watch(const uint64_t *word, u64 target, u64 until)
{
	for (;;) {
		u64 seen = gpuar_word_load(word);

		if (gpuar_reached(seen, target))
			return 1;
		if (gpuar_now_ns() >= until)
			return 0;
		if (gpuar_hw_word_wait(word, seen, until, CLAIM_HW_BOUND_NS))
			return spin_watch(&word, &target, 1, until);
	}
}

/*
 * Watch the claimed words until one reaches its target, the earliest
 * lease ends, or @deadline. The port's lines lock is held meanwhile, so
 * no line is unmapped under the loads (another thread's line alloc or
 * free waits one lease at most). Returns how many reached.
 */
static int claimed_wait(struct gpuar_port *port,
			const struct gpuar_claim_entry *e, u32 n, u64 deadline)
{
	const uint64_t *word[GPUAR_BUSY_WAITS];
	u64 target[GPUAR_BUSY_WAITS];
	u64 until = deadline;
	u32 i, k = 0, hit;

	pthread_mutex_lock(&port->lines_lock);
	for (i = 0; i < n && k < GPUAR_BUSY_WAITS; i++) {
		word[k] = claimed_word(port, &e[i]);
		if (!word[k])
			continue;
		target[k++] = e[i].target;
		if (e[i].lease_end_ns < until)
			until = e[i].lease_end_ns;
	}
	if (!k)
		hit = 0;
	else if (k == 1 && gpuar_hw_word_wait_kind())
		hit = hw_watch(word[0], target[0], until);
	else
		hit = spin_watch(word, target, k, until);
	pthread_mutex_unlock(&port->lines_lock);
	return (int)hit;
}

u64 gpuar_imminent_slice_ns(u32 claim_slice_us, enum gpuar_engine engine)
{
	if (claim_slice_us == GPUAR_CLAIM_SLICE_OFF)
		return 0;
	if (!claim_slice_us) {
		/* The module lowers EPOLLPRI at the claim: no fd to keep ready. */
		if (engine == GPUAR_ENGINE_KERNEL)
			return 0;
		claim_slice_us = GPUAR_CLAIM_SLICE_DEFAULT_US;
	}
	return (u64)claim_slice_us * GPUAR_NSEC_PER_USEC;
}

/*
 * Forget the held claims that need no more watching (claim_lock held):
 * their lease ended (the timer checks them now), their word reached its
 * target (the engine's next run or read ends them), or their line went.
 */
static void held_prune(struct gpuar_port *port, u64 now)
{
	u32 i, k = 0;

	pthread_mutex_lock(&port->lines_lock);
	for (i = 0; i < port->nheld; i++) {
		const struct gpuar_claim_entry *e = &port->held[i];
		const uint64_t *word = claimed_word(port, e);

		if (!word || e->lease_end_ns <= now ||
		    gpuar_reached(gpuar_word_load(word), e->target))
			continue;
		port->held[k++] = *e;
	}
	pthread_mutex_unlock(&port->lines_lock);
	port->nheld = k;
}

/*
 * Tell the engine whether claims are held (claim_lock): when that changed,
 * and at the end of every slice that leaves them held (@renew), so a
 * poller that wakes on edges (io_uring's multishot poll, EPOLLET) sees
 * the fd turn ready again.
 */
static void held_ready(struct gpuar_port *port, bool renew)
{
	bool held = port->nheld != 0;

	if ((held == port->held_ready && !(held && renew)) ||
	    !port->ops->claim_held)
		return;
	port->ops->claim_held(port, held);
	port->held_ready = held;
}

/*
 * The claims to watch into @e: those held from a sliced call, and new
 * ones, as many as there is room for (a wait that turned imminent while
 * others were held is watched beside them). Returns how many, or the
 * claim's negative errno; with none, the engine is told that nothing is
 * held.
 */
static int held_or_claim(struct gpuar_port *port,
			 struct gpuar_claim_entry *e, u64 now)
{
	int n = 0;

	pthread_mutex_lock(&port->claim_lock);
	held_prune(port, now);
	if (port->nheld < GPUAR_BUSY_WAITS) {
		n = port->ops->claim(port, port->held + port->nheld,
				     GPUAR_BUSY_WAITS - port->nheld, 0);
		if (n == -EPERM) {
			/* Another address space's port: its lines are not ours. */
			__atomic_store_n(&port->imminent, false,
					 __ATOMIC_RELAXED);
			n = 0;
		}
		if (n > 0)
			port->nheld += (u32)n;
		else if (n < 0 && port->nheld)
			n = 0;	/* watch those held; the claim is tried again */
	}
	n = n < 0 ? n : (int)port->nheld;
	if (n > 0)
		memcpy(e, port->held, (size_t)n * sizeof(*e));
	else
		held_ready(port, false);
	pthread_mutex_unlock(&port->claim_lock);
	return n;
}

/*
 * A store ends the watch at once, the claims left as they are: the
 * record is the caller's first concern, and the next call that finds
 * no record lets the reached claims go. A watch that ran to its end
 * tells the engine whether claims are still held (the fd kept ready).
 */
int gpuar_imminent_serve(struct gpuar_port *port, u64 deadline_ns, bool sliced)
{
	struct gpuar_claim_entry e[GPUAR_BUSY_WAITS];
	u64 now = gpuar_now_ns(), until = deadline_ns;
	int n, hit;

	if (!__atomic_load_n(&port->imminent, __ATOMIC_RELAXED))
		return 0;
	if (sliced && port->claim_slice_ns)
		until = min_u64(until, gpuar_add_sat(now, port->claim_slice_ns));
	for (;;) {
		n = held_or_claim(port, e, now);
		if (n <= 0)
			return n;
		hit = claimed_wait(port, e, (u32)n, until);
		if (hit)
			return hit;
		now = gpuar_now_ns();
		pthread_mutex_lock(&port->claim_lock);
		held_prune(port, now);
		n = (int)port->nheld;
		if (!n || now >= until)
			held_ready(port, true);
		pthread_mutex_unlock(&port->claim_lock);
		/* The earliest lease ended: the others are watched on. */
		if (!n || now >= until)
			return 0;
	}
}

int gpuar_imminent_reap(struct gpuar_port *port, struct gpuar_record *records,
			u32 max, u64 deadline_ns, bool sliced)
{
	int ret = port->ops->reap(port, records, max, 0, -1);

	if (ret != -EAGAIN)
		return ret;
	ret = gpuar_imminent_serve(port, deadline_ns, sliced);
	if (ret < 0)
		return ret;
	/* The module checks claimed waits on read: this one has theirs. */
	return ret ? port->ops->reap(port, records, max, 0, -1) : -EAGAIN;
}

GPUAR_EXPORT bool gpuar_port_imminent(const struct gpuar_port *port)
{
	return port && __atomic_load_n(&port->imminent, __ATOMIC_RELAXED);
}

GPUAR_EXPORT int gpuar_port_claim(struct gpuar_port *port,
				  struct gpuar_claim_entry *entries,
				  uint32_t max, uint64_t lease_ns,
				  struct gpuar_error *diag)
{
	const char *args[2];
	u64 mark;
	int ret;

	gpuar_diag_clear(diag);
	args[1] = "must not be NULL or 0";
	if (!port)
		args[0] = "port";
	else if (!entries)
		args[0] = "entries";
	else if (!max)
		args[0] = "max";
	else if (lease_ns > CLAIM_LEASE_MAX_NS) {
		args[0] = "lease_ns";
		args[1] = "above 100 ms";
	} else {
		args[0] = NULL;
	}
	if (args[0])
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL,
				      args, 2);
	if (port_forked(port))
		return -EPERM;
	if (!gpuar_port_imminent(port)) {
		args[0] = "gpuar_port_claim";
		args[1] = "the port was not opened with GPUAR_PORT_IMMINENT, or runs without it";
		return gpuar_diag_set(diag, GPUAR_E_FEATURE_UNAVAILABLE, EOPNOTSUPP,
				      args, 2);
	}
	mark = gpuar_sys_mark();
	ret = port->ops->claim(port, entries, max, lease_ns);
	gpuar_sys_charge(port, mark);
	return ret;
}
