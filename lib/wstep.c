// SPDX-License-Identifier: MIT
/* The word-wait state machine (see wstep.h). */
#include "wstep.h"

#include <errno.h>
#include <string.h>

/* Schedule the next check of a parked wait (entering the phase if need be). */
static void park_begin(struct gpuar_wstep *ws, u64 now)
{
	if (ws->phase != GPUAR_WSTEP_PARK)
		ws->park_from_ns = now;
	ws->phase = GPUAR_WSTEP_PARK;
	ws->next_ns = now + ws->interval_ns;
	if (ws->next_ns > ws->backstop_at_ns)
		ws->next_ns = ws->backstop_at_ns;
}

static void finish(struct gpuar_wstep *ws, u8 outcome, u64 now)
{
	ws->phase = GPUAR_WSTEP_DONE;
	ws->outcome = outcome;
	ws->complete_ns = now;
	ws->next_ns = GPUAR_U64_MAX;
}

bool gpuar_wstep_begin(struct gpuar_wstep *ws, const struct gpuar_plan *plan,
		       struct gpuar_est *est, u64 start_ns, bool resubmit,
		       u64 now, bool done, const struct gpuar_wstep_cfg *cfg)
{
	u64 sleep = 0, iv;

	memset(ws, 0, sizeof(*ws));
	ws->plan = *plan;
	ws->start_ns = start_ns;
	ws->checks = 1;
	iv = plan->park == GPUAR_PARK_FLAG ? plan->park_ns : cfg->poll_interval_ns;
	ws->interval_ns = iv < cfg->floor_ns ? cfg->floor_ns : iv;
	ws->backstop_at_ns = GPUAR_U64_MAX;
	if (cfg->backstop_timeout)
		ws->backstop_at_ns = now + (plan->park == GPUAR_PARK_FLAG &&
					    plan->backstop_ns ?
					    plan->backstop_ns : cfg->backstop_ns);
	if (done && resubmit) {
		/*
		 * The checks before the resubmit saw it pending: done now is
		 * a check that saw it pending then done, timed from the
		 * original start (the ABI's rule for start_ns).
		 */
		if (est)
			gpuar_est_exact(est, now > start_ns ? now - start_ns : 0);
		finish(ws, GPUAR_OUTCOME_EXACT, now);
		return true;
	}
	if (done) {
		finish(ws, GPUAR_OUTCOME_IMMEDIATE, now);
		return true;
	}
	if (est)
		sleep = gpuar_est_sleep_ns(est, plan);
	/* A resubmission keeps its start; a sleep already over is skipped. */
	if (sleep && start_ns + sleep > now) {
		ws->phase = GPUAR_WSTEP_SLEEP;
		ws->sleep_from_ns = now;
		ws->next_ns = start_ns + sleep;
		if (ws->next_ns > ws->backstop_at_ns)
			ws->next_ns = ws->backstop_at_ns;
		return false;
	}
	park_begin(ws, now);
	return false;
}

bool gpuar_wstep_checked(struct gpuar_wstep *ws, struct gpuar_est *est,
			 u64 now, bool done)
{
	u64 since = now > ws->start_ns ? now - ws->start_ns : 0;

	if (ws->phase == GPUAR_WSTEP_DONE)
		return true;
	ws->checks++;
	if (ws->phase == GPUAR_WSTEP_SLEEP)
		ws->slept_ns = now - ws->sleep_from_ns;
	if (done) {
		if (ws->phase == GPUAR_WSTEP_SLEEP) {
			if (est)
				gpuar_est_late(est, since);
			finish(ws, GPUAR_OUTCOME_LATE, now);
		} else {
			if (est)
				gpuar_est_exact(est, since);
			finish(ws, GPUAR_OUTCOME_EXACT, now);
		}
		return true;
	}
	if (now >= ws->backstop_at_ns) {
		finish(ws, GPUAR_OUTCOME_TIMEOUT, now);
		return true;
	}
	park_begin(ws, now);
	return false;
}

struct gpuar_est_entry *gpuar_wstep_point(struct gpuar_est_table *tab,
					  u64 point,
					  const struct gpuar_plan *plan)
{
	bool predicts = gpuar_plan_predicts(plan);
	struct gpuar_est_entry *e;

	/*
	 * As the module: a new point's window is the plan's, or 1, and it
	 * only grows (to the largest window of the predicting plans that
	 * used it): shrinking drops samples, so plans with different windows
	 * at one point would keep discarding each other's.
	 */
	e = gpuar_est_table_get(tab, point, plan->window ? plan->window : 1);
	if (e && predicts && e->est.window < plan->window)
		gpuar_est_set_window(&e->est, plan->window);
	return e;
}

void gpuar_wstep_record(const struct gpuar_wstep *ws, struct gpuar_record *rec,
			u64 user_data, u64 point, u64 value)
{
	memset(rec, 0, sizeof(*rec));
	rec->user_data = user_data;
	rec->start_ns = ws->start_ns;
	rec->complete_ns = ws->complete_ns;
	rec->slept_ns = ws->slept_ns;
	rec->point = point;
	rec->value = value;
	rec->status = ws->outcome == GPUAR_OUTCOME_TIMEOUT ? -ETIME : 0;
	rec->checks = ws->checks;
	rec->version = GPUAR_RECORD_VERSION_1;
	rec->source = GPUAR_SOURCE_WORD;
	rec->outcome = ws->outcome;
}
