// SPDX-License-Identifier: MIT
/*
 * The user engine's timer: a timerfd in its epoll set, armed (absolute,
 * hrtimer-backed, so without timer slack) at the next time any pending
 * word wait is due, and drained when it fired, which gives the port its
 * wake-up latency samples. Every function runs under the port's lock.
 */
#include "engine_user.h"

#include <sys/timerfd.h>
#include <unistd.h>

#define WAKELAT_MAX_NS (GPUAR_DEFAULT_WAKELAT_MAX_US * GPUAR_NSEC_PER_USEC)

/*
 * Arm the timerfd at the next time the engine must run: the first word
 * check due (UH_DUE) or, while a reaper sleeps with spin budget left, the
 * first early wake (UH_EARLY), and on an imminent port always: the
 * timerfd wake runs late by about the port's wake-up latency, and that
 * reaper (or the claimer) should be watching the word by the time a flag
 * wait's sleep ends, not start then. @lazy: keep an
 * expiry that is earlier (or one armed with nothing left to check, or one
 * already past and left undrained), which costs at most a spurious
 * readiness, so that a reaper on its way back with a record makes no
 * system call; the engine's next run arms it exactly.
 */
void uport_arm_timer(struct uport *u, bool lazy)
{
	struct itimerspec its = { 0 };
	struct uwait *first = uheap_top(&u->heap[UH_DUE], u);
	u64 next = first ? first->ws.next_ns : GPUAR_U64_MAX;

	/* An imminent port wakes its loop early, as a busy sleeper. */
	if ((u->busy_sleepers || u->imminent) && u->wakelat_ns) {
		uport_early_refresh(u, gpuar_now_ns());
		first = uheap_top(&u->heap[UH_EARLY], u);
		if (first && first->key[UH_EARLY] < next)
			next = first->key[UH_EARLY];
	}
	if (lazy && u->armed_ns && u->armed_ns <= next)
		return;
	if (next == GPUAR_U64_MAX)
		next = 0;	/* disarm */
	if (next == u->armed_ns)
		return;
	/* An absolute expiry already past fires at once; 0 would disarm. */
	its.it_value.tv_sec = (time_t)(next / 1000000000ULL);
	its.it_value.tv_nsec = (long)(next % 1000000000ULL);
	if (GPUAR_SYS(timerfd_settime(u->tfd, TFD_TIMER_ABSTIME, &its, NULL)) == 0) {
		/* Setting it discards an expiry left undrained: count it. */
		if (u->expiry_left)
			u->st.timer_fires++;
		u->expiry_left = false;
		u->armed_ns = next;
	}
}

/*
 * Consume an expiry of the timerfd. @woken: the caller may have been woken
 * by it, so how late it runs is a wake-up latency sample; a reaper that
 * spun or parked up to the check is on time by construction and gives
 * none. A sample is capped, so one long stall (a preempted vCPU, a loop
 * that ran the engine late) cannot make blocked reapers wake absurdly
 * early.
 */
void uport_drain_timer(struct uport *u, u64 now, bool woken)
{
	bool left = u->expiry_left;
	u64 ticks, lat;

	/* Not expired (same clock), or disarmed: no read(2) to make. */
	if (!u->armed_ns || now < u->armed_ns)
		return;
	u->expiry_left = false;
	if (GPUAR_SYS(read(u->tfd, &ticks, sizeof(ticks))) == sizeof(ticks)) {
		u->st.timer_fires++;
		/* One left by a spin woke nobody: no sample. */
		if (woken && !left) {
			lat = now - u->armed_ns;
			if (lat > WAKELAT_MAX_NS)
				lat = WAKELAT_MAX_NS;
			gpuar_wakelat_record(&u->wakelat, lat);
			u->wakelat_ns = gpuar_wakelat_quantile(&u->wakelat);
		}
		u->armed_ns = 0;
	}
}

/*
 * After a lazy run (uport_run_locked with @lazy_arm): drain an expiry it
 * left, with no latency sample (the run was not a wake-up), and arm the
 * timer exactly, as a run that is not lazy leaves it.
 */
void uport_settle_timer(struct uport *u, u64 now)
{
	uport_drain_timer(u, now, false);
	uport_arm_timer(u, false);
}
