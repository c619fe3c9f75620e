// SPDX-License-Identifier: MIT
/*
 * The user engine's imminent readiness (GPUAR_PORT_IMMINENT), as the
 * module's: a flag wait whose completion the estimator predicts turns
 * imminent at its early wake (the port's wake-up latency before its
 * sleep ends, uport_early_key), where the port's timer makes the fd
 * readable (the module raises EPOLLPRI); a claim gives it its post-sleep
 * check at once (LATE if the work is already done) and leases the rest
 * to the claimer, who watches their words; the engine's next run checks
 * a claimed wait whose word moved (EXACT). Each wait is claimed once: a
 * lease that runs out leaves it to the timer's park checks.
 *
 * The port's statistics count as the module's do: imminent, the waits
 * raised (here: first found imminent, by a run or by a claim); claims,
 * the waits handed out; lease_expiries, the claims' leases that ran out
 * (the module's busy reads lease too; this engine's reapers do not).
 */
#include "engine_user.h"

#include <unistd.h>

/*
 * The imminent wait due first, or NULL: unclaimed flag waits parked
 * (UH_SPIN, by their next check) or past their early wake (UH_EARLY),
 * among each heap's first UHEAP_FIRST_MAX entries, so a claim costs the
 * same however many are pending (one further back is left to the timer's
 * park checks, as one whose lease ran out is).
 */
static struct uwait *first_imminent(struct uport *u, u64 now)
{
	u32 idx[UHEAP_FIRST_MAX], n, i;
	struct uwait *best = NULL, *w;

	n = uheap_first(&u->heap[UH_SPIN], u, idx, UHEAP_FIRST_MAX);
	for (i = 0; i < n && !best; i++) {
		w = &u->slab[idx[i]];
		if (!w->claimed)
			best = w;
	}
	n = uheap_first(&u->heap[UH_EARLY], u, idx, UHEAP_FIRST_MAX);
	for (i = 0; i < n; i++) {
		w = &u->slab[idx[i]];
		if (w->key[UH_EARLY] > now)
			break;
		if (w->claimed)
			continue;
		if (!best || w->key[UH_EARLY] < best->ws.next_ns)
			best = w;
		break;
	}
	return best;
}

/* @w is imminent: the port's imminent counter counts it, once. */
static void raise_once(struct uport *u, struct uwait *w)
{
	if (w->raised)
		return;
	w->raised = true;
	u->st.imminent++;
}

/*
 * The module raises a wait (EPOLLPRI) when its timer finds it at its
 * early wake; here the run that the fd's early readiness brings finds
 * it, among the waits first_imminent() would offer: parked, or past
 * their early wake, and not claimed.
 */
void uport_raise_imminent(struct uport *u, u64 now)
{
	u32 idx[UHEAP_FIRST_MAX], n, i;
	struct uwait *w;

	n = uheap_first(&u->heap[UH_SPIN], u, idx, UHEAP_FIRST_MAX);
	for (i = 0; i < n; i++) {
		w = &u->slab[idx[i]];
		if (!w->claimed)
			raise_once(u, w);
	}
	n = uheap_first(&u->heap[UH_EARLY], u, idx, UHEAP_FIRST_MAX);
	for (i = 0; i < n; i++) {
		w = &u->slab[idx[i]];
		if (w->key[UH_EARLY] > now)
			break;
		if (!w->claimed)
			raise_once(u, w);
	}
}

int uport_claim(struct gpuar_port *port, struct gpuar_claim_entry *entries,
		u32 max, u64 lease_ns)
{
	struct uport *u = uport_of(port);
	struct uwait *w;
	u64 now, lease_end;
	u32 n = 0;

	if (!lease_ns)
		lease_ns = u->busy_budget_ns ? u->busy_budget_ns :
			   GPUAR_DEFAULT_BUSY_READ_US * GPUAR_NSEC_PER_USEC;
	pthread_mutex_lock(&u->lock);
	now = gpuar_now_ns();
	while (n < max && (w = first_imminent(u, now))) {
		/* A claim before any run found it raises it itself. */
		raise_once(u, w);
		w->claimed = true;
		/* Past its predicted completion, never past its backstop. */
		lease_end = gpuar_word_claim_until(&w->ws, now, lease_ns);
		/* Its post-sleep check, now rather than at the sleep's end. */
		if (w->ws.phase == GPUAR_WORD_SLEEP) {
			w->reader_due = true;
			if (uport_word_check(u, w, now))
				continue;
		}
		w->lease_end_ns = lease_end;
		if (w->ws.next_ns < lease_end)
			w->ws.next_ns = lease_end;
		uport_wait_reindex(u, w);
		uheap_set(&u->heap[UH_CLAIM], u, uwait_index(u, w), lease_end);
		entries[n++] = (struct gpuar_claim_entry){
			.user_data = w->user_data,
			.addr = (u64)(uintptr_t)w->line->words,
			.target = w->target,
			.lease_end_ns = lease_end,
			.line = w->line->id,
			.slot = (u32)(w->word - w->line->words),
		};
	}
	u->st.claims += n;
	uport_arm_timer(u, false);
	uport_sync_eventfd(u);
	pthread_mutex_unlock(&u->lock);
	return (int)n;
}

/*
 * The claimer (lib/imminent.c) stopped at its slice with claims still
 * watched, or let go of the last: the fd stays readable meanwhile, so
 * the caller's loop serves its other fds and comes back to resume them.
 * Each slice's end writes the eventfd again where it is set already: a
 * poller that wakes on new events only (io_uring's multishot poll on the
 * fd, EPOLLET) would otherwise sleep until the lease's end.
 */
void uport_claim_held(struct gpuar_port *port, bool held)
{
	struct uport *u = uport_of(port);
	u64 v = 1;

	pthread_mutex_lock(&u->lock);
	u->claim_held = held;
	if (held && u->ev_set && write(u->evfd, &v, sizeof(v)) != sizeof(v)) {
		/* Still readable: only the edge is lost, never the level. */
	}
	uport_sync_eventfd(u);
	pthread_mutex_unlock(&u->lock);
}

void uport_claims_moved(struct uport *u, u64 now)
{
	struct uheap *h = &u->heap[UH_CLAIM];
	struct uwait *w;
	u32 i;

	/* A lease that ran out leaves its wait to the timer's park checks. */
	while ((w = uheap_top(h, u)) && w->lease_end_ns <= now) {
		uheap_remove(h, u, uwait_index(u, w));
		u->st.lease_expiries++;
	}
	for (i = 0; i < h->n; i++) {
		w = &u->slab[h->at[i]];
		if (gpuar_word_load(w->word) == w->seen)
			continue;
		w->reader_due = true;
		w->ws.next_ns = now;
		uport_wait_reindex(u, w);
	}
}
