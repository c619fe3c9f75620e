// SPDX-License-Identifier: MIT
/*
 * The user engine's run: the checks that are due, made by whoever runs it
 * (gpuar_port_process(), a reaper, the watcher thread, a fence submit).
 * Every function runs under the port's lock.
 */
#include "engine_user.h"

/*
 * Run the engine: end the fence waits whose fence signalled (those the
 * epoll set reports ready) and check the word waits that are due, the
 * earliest due first (UH_DUE), so the cost is theirs, not every pending
 * wait's.
 * @woken: the caller may have been woken by the timer (a latency sample,
 * uport_drain_timer). @lazy_arm: arm the timer lazily (uport_arm_timer)
 * and leave an expiry for the next run to drain. The caller syncs the
 * eventfd once it has taken the records it wants.
 */
void uport_run_locked(struct uport *u, bool woken, bool lazy_arm)
{
	u64 now = gpuar_now_ns();
	struct uwait *w;

	if (!lazy_arm)
		uport_drain_timer(u, now, woken);
	else if (u->armed_ns && now >= u->armed_ns)
		u->expiry_left = true;
	if (u->nfences)
		uport_fence_harvest(u, now);
	if (u->imminent)
		uport_claims_moved(u, now);
	/* A check moves a wait past now (or ends it), so this ends. */
	while ((w = uheap_top(&u->heap[UH_DUE], u)) && w->ws.next_ns <= now)
		uport_word_check(u, w, now);
	/* After the checks: a wait one of them ended was never imminent. */
	if (u->imminent)
		uport_raise_imminent(u, now);
	uport_arm_timer(u, lazy_arm);
}

void uport_process_locked(struct uport *u, bool woken)
{
	uport_run_locked(u, woken, false);
	uport_sync_eventfd(u);
}
