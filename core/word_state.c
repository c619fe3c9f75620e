// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* The word-wait state machine (see word_state.h). */
#include "word_state.h"
#include "plan.h"

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

bool gpuar_word_entry_valid(const struct gpuar_word_wait *e, u64 now)
{
	if (e->flags || e->pad || e->slot >= GPUAR_LINE_SLOTS)
		return false;
	if (gpuar_plan_check(&e->plan) != GPUAR_PLAN_OK)
		return false;
	if (e->plan.park == GPUAR_PARK_BLOCK)
		return false;
	if (e->start_ns > now)
		return false;
	return !e->start_ns || now - e->start_ns <= GPUAR_START_AGE_NS_MAX;
}

u64 gpuar_word_interval_ns(const struct gpuar_plan *plan,
			   const struct gpuar_word_cfg *cfg)
{
	u64 iv = plan->park == GPUAR_PARK_FLAG ? plan->park_ns :
		 cfg->poll_interval_ns;

	return iv < cfg->floor_ns ? cfg->floor_ns : iv;
}

u64 gpuar_word_backstop_ns(const struct gpuar_plan *plan,
			   const struct gpuar_word_cfg *cfg)
{
	if (plan->park == GPUAR_PARK_FLAG && plan->backstop_ns)
		return plan->backstop_ns;
	return cfg->backstop_ns;
}

/* Schedule the next check of a parked wait, entering PARK if need be. */
static void park_next(struct gpuar_word_state *ws, u64 now)
{
	if (ws->phase != GPUAR_WORD_PARK)
		ws->park_from_ns = now;
	ws->phase = GPUAR_WORD_PARK;
	ws->next_ns = min_u64(gpuar_add_sat(now, ws->interval_ns),
			      ws->backstop_at_ns);
}

static void finish(struct gpuar_word_state *ws, u8 outcome, u64 now)
{
	ws->phase = GPUAR_WORD_DONE;
	ws->outcome = outcome;
	ws->complete_ns = now;
	ws->next_ns = GPUAR_U64_MAX;
}

static u64 since(u64 from, u64 now)
{
	return now > from ? now - from : 0;
}

bool gpuar_word_begin(struct gpuar_word_state *ws,
		      const struct gpuar_plan *plan, struct gpuar_est *est,
		      u64 start_ns, bool resubmit, u64 now, bool done,
		      const struct gpuar_word_cfg *cfg)
{
	u64 sleep = 0;

	*ws = (struct gpuar_word_state){ 0 };
	ws->plan = *plan;
	ws->start_ns = start_ns;
	ws->submit_ns = now;
	ws->checks = 1;
	ws->interval_ns = gpuar_word_interval_ns(plan, cfg);
	ws->backstop_at_ns = GPUAR_U64_MAX;
	if (cfg->backstop_timeout)
		ws->backstop_at_ns = gpuar_add_sat(now,
						   gpuar_word_backstop_ns(plan, cfg));
	if (done) {
		if (resubmit) {
			if (est)
				gpuar_est_exact(est, since(start_ns, now));
			finish(ws, GPUAR_OUTCOME_EXACT, now);
		} else {
			finish(ws, GPUAR_OUTCOME_IMMEDIATE, now);
		}
		return true;
	}
	if (est)
		sleep = gpuar_est_sleep_ns(est, plan);
	/* A resubmission keeps its start: a sleep already over is skipped. */
	if (sleep && gpuar_add_sat(start_ns, sleep) > now) {
		ws->phase = GPUAR_WORD_SLEEP;
		ws->sleep_ns = sleep;
		ws->predicted_at_ns = gpuar_add_sat(gpuar_add_sat(start_ns, sleep),
						    plan->margin_ns);
		ws->next_ns = min_u64(gpuar_add_sat(start_ns, sleep),
				      ws->backstop_at_ns);
		return false;
	}
	park_next(ws, now);
	return false;
}

bool gpuar_word_checked(struct gpuar_word_state *ws, struct gpuar_est *est,
			u64 now, bool done)
{
	if (ws->phase == GPUAR_WORD_DONE)
		return true;
	ws->checks++;
	if (ws->phase == GPUAR_WORD_SLEEP)
		ws->slept_ns = since(ws->submit_ns, now);
	if (done) {
		if (ws->phase == GPUAR_WORD_SLEEP) {
			if (est)
				gpuar_est_late(est, since(ws->start_ns, now));
			finish(ws, GPUAR_OUTCOME_LATE, now);
		} else {
			if (est)
				gpuar_est_exact(est, since(ws->start_ns, now));
			finish(ws, GPUAR_OUTCOME_EXACT, now);
		}
		return true;
	}
	if (now >= ws->backstop_at_ns) {
		finish(ws, GPUAR_OUTCOME_TIMEOUT, now);
		return true;
	}
	park_next(ws, now);
	return false;
}

bool gpuar_word_raise_checked(struct gpuar_word_state *ws,
			      struct gpuar_est *est, u64 now, bool done)
{
	u64 sleep_end = ws->next_ns;

	if (ws->phase != GPUAR_WORD_SLEEP)
		return gpuar_word_checked(ws, est, now, done);
	if (gpuar_word_checked(ws, est, now, done))
		return true;
	if (ws->next_ns < sleep_end)
		ws->next_ns = sleep_end;
	return false;
}

u64 gpuar_word_early_ns(const struct gpuar_word_state *ws, u64 wakelat_ns)
{
	if (ws->phase != GPUAR_WORD_SLEEP)
		return 0;
	return ws->start_ns +
	       gpuar_est_early_wake_ns(ws->sleep_ns,
				       min_u64(wakelat_ns, ws->sleep_ns / 2));
}

u64 gpuar_word_claim_until(const struct gpuar_word_state *ws, u64 now,
			   u64 lease_ns)
{
	u64 from = ws->predicted_at_ns > now ? ws->predicted_at_ns : now;

	return min_u64(gpuar_add_sat(from, lease_ns), ws->backstop_at_ns);
}

bool gpuar_word_busy_candidate(const struct gpuar_word_state *ws)
{
	return ws->sleep_ns && ws->phase != GPUAR_WORD_DONE;
}

struct gpuar_est_entry *gpuar_word_point(struct gpuar_est_table *tab,
					 u64 point,
					 const struct gpuar_plan *plan)
{
	struct gpuar_est_entry *e;

	e = gpuar_est_table_get(tab, point, plan->window ? plan->window : 1);
	if (e)
		gpuar_word_point_fit(e, plan);
	return e;
}

void gpuar_word_point_fit(struct gpuar_est_entry *e,
			  const struct gpuar_plan *plan)
{
	if (gpuar_plan_predicts(plan) && e->est.window < plan->window)
		gpuar_est_set_window(&e->est, plan->window);
}
