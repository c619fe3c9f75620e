// SPDX-License-Identifier: MIT
/*
 * The user engine's imminent readiness (GPUAR_PORT_IMMINENT), as the
 * module's: a flag wait whose completion the estimator predicts turns
 * imminent at its early wake (the port's wake-up latency before its
 * sleep ends, uport_due_ns), where the port's timer makes the fd
 * readable (the module raises EPOLLPRI); a claim gives it its post-sleep
 * check at once (LATE if the work is already done) and leases the rest
 * to the claimer, who watches their words; the engine's next run checks
 * a claimed wait whose word moved (EXACT). Each wait is claimed once: a
 * lease that runs out leaves it to the timer's park checks.
 */
#include "engine_user.h"

static bool imminent(const struct uport *u, const struct uwait *w, u64 now)
{
	if (!uwait_busy_candidate(w) || w->claimed)
		return false;
	if (w->ws.phase == GPUAR_WORD_PARK)
		return true;
	return w->ws.phase == GPUAR_WORD_SLEEP &&
	       uport_due_ns(w, u->wakelat_ns) <= now;
}

/* The imminent wait due first, or NULL. */
static struct uwait *first_imminent(struct uport *u, u64 now)
{
	struct uwait *best = NULL;
	u32 i;

	for (i = 0; i < u->npend; i++) {
		struct uwait *w = &u->pend[i];

		if (w->kind == UW_WORD && imminent(u, w, now) &&
		    (!best || uport_due_ns(w, u->wakelat_ns) <
			      uport_due_ns(best, u->wakelat_ns)))
			best = w;
	}
	return best;
}

int uport_claim(struct gpuar_port *port, struct gpuar_claim_entry *entries,
		u32 max, u64 lease_ns)
{
	struct uport *u = uport_of(port);
	bool ended = false;
	struct uwait *w;
	u64 now, lease_end;
	u32 n = 0;

	if (!lease_ns)
		lease_ns = u->busy_budget_ns ? u->busy_budget_ns :
			   GPUAR_DEFAULT_BUSY_READ_US * GPUAR_NSEC_PER_USEC;
	pthread_mutex_lock(&u->lock);
	now = gpuar_now_ns();
	while (n < max && (w = first_imminent(u, now))) {
		w->claimed = true;
		/* Its post-sleep check, now rather than at the sleep's end. */
		if (w->ws.phase == GPUAR_WORD_SLEEP) {
			w->reader_due = true;
			if (uport_word_check(u, w, now)) {
				ended = true;
				continue;
			}
		}
		/* The backstop still ends it: no lease runs past it. */
		lease_end = now + lease_ns < w->ws.backstop_at_ns ?
			    now + lease_ns : w->ws.backstop_at_ns;
		w->lease_end_ns = lease_end;
		if (w->ws.next_ns < lease_end)
			w->ws.next_ns = lease_end;
		entries[n++] = (struct gpuar_claim_entry){
			.user_data = w->user_data,
			.addr = (u64)(uintptr_t)w->line->words,
			.target = w->target,
			.lease_end_ns = lease_end,
			.line = w->line->id,
			.slot = (u32)(w->word - w->line->words),
		};
	}
	if (ended)
		uport_compact(u);
	uport_arm_timer(u, false);
	uport_sync_eventfd(u);
	pthread_mutex_unlock(&u->lock);
	return (int)n;
}
