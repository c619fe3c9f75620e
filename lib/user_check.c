// SPDX-License-Identifier: MIT
/*
 * One word wait's check, and its end: the record queued, the estimator
 * point given back, the slab entry freed. Below the engine's run, its
 * submit and cancel, and the imminent claim, which all end waits this way.
 * Every function runs under the port's lock.
 */
#include "engine_user.h"
#include "backoff.h"
#include "word_record.h"

void uport_word_end(struct uport *u, struct uwait *w, u64 value)
{
	struct gpuar_record rec;

	gpuar_word_record(&w->ws, &rec, w->user_data, w->point, value);
	if (w->pt) {
		if (rec.outcome < GPUAR_OUTCOME_COUNT)
			w->pt->outcomes[rec.outcome]++;
		gpuar_est_entry_release(w->pt);	/* held since take_points() */
		w->pt = NULL;
	}
	w->line->pending--;
	uport_enqueue(u, &rec);
	uport_wait_release(u, w);
}

bool uport_word_check(struct uport *u, struct uwait *w, u64 now)
{
	u64 seen = gpuar_word_load(w->word);
	bool done = gpuar_reached(seen, w->target);

	/*
	 * Done: the completion is timed after the load that saw it. The
	 * run's @now was read before the timer's drain and this load, and a
	 * store that landed between them would be recorded as completing
	 * before it was made (seen 0.8 and 1.5 us early).
	 */
	if (done)
		now = gpuar_now_ns();
	w->seen = seen;
	u->st.checks++;
	if (w->reader_due) {
		u->st.busy_read_checks++;
		w->reader_due = false;
	}
	if (!gpuar_word_checked(&w->ws,
				gpuar_backoff_est(&w->ws,
						  w->pt ? &w->pt->est : NULL,
						  now),
				now, done)) {
		gpuar_backoff_step(&w->ws, now);
		uport_wait_reindex(u, w);
		return false;
	}
	uport_word_end(u, w, seen);
	return true;
}
