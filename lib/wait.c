// SPDX-License-Identifier: MIT
/*
 * The wait driver: one wait on one source under one plan, in the calling
 * thread (see <gpuar/wait.h>). Outcomes and learning come from the same
 * state machine as both engines' ports (core/word_state.c).
 */
#include "internal.h"
#include "backoff.h"
#include "word_state.h"
#include "word_record.h"
#include "defaults.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct gpuar_waiter {
	const struct gpuar_clock *clock;
	u64 poll_interval_ns;
	pthread_mutex_t lock;	/* the estimator table and the counters */
	struct gpuar_est_table tab;
	struct gpuar_est_entry *entries;
	u32 *index;
	struct gpuar_waiter_stats st;
	int intr_fd;		/* gpuar_waiter_set_interrupt()'s, or -1 */
};

GPUAR_EXPORT int gpuar_waiter_new(struct gpuar_waiter **out,
				  const struct gpuar_waiter_options *opts,
				  struct gpuar_error *diag)
{
	struct gpuar_waiter_options o = { 0 };
	const char *args[2] = { "waiter", "must not be NULL" };
	struct gpuar_waiter *w;
	u32 cap;
	int ret;

	gpuar_diag_clear(diag);
	if (!out)
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	*out = NULL;
	ret = opts ? GPUAR_OPTIONS_IN(&o, opts, GPUAR_WAITER_OPTIONS_SIZE_1_0,
				      "gpuar_waiter_options", diag) : 0;
	if (ret)
		return ret;
	if (!o.max_points)
		o.max_points = GPUAR_WAITER_DEFAULT_MAX_POINTS;
	if (o.max_points > GPUAR_WAITER_MAX_POINTS_MAX) {
		args[0] = "gpuar_waiter_options.max_points";
		args[1] = "above 16777216";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	cap = gpuar_est_table_cap(o.max_points);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->intr_fd = -1;
	w->entries = calloc(o.max_points, sizeof(*w->entries));
	w->index = calloc(cap, sizeof(*w->index));
	if (!w->entries || !w->index) {
		free(w->entries);
		free(w->index);
		free(w);
		return -ENOMEM;
	}
	w->clock = o.clock ? o.clock : gpuar_clock_monotonic();
	w->poll_interval_ns = o.poll_interval_ns ? o.poll_interval_ns :
			      GPUAR_DEFAULT_POLL_INTERVAL_US * GPUAR_NSEC_PER_USEC;
	gpuar_est_table_init(&w->tab, w->entries, w->index, cap,
			     o.max_points);
	gpuar_est_table_evict_idle(&w->tab);
	pthread_mutex_init(&w->lock, NULL);
	*out = w;
	return 0;
}

GPUAR_EXPORT void gpuar_waiter_free(struct gpuar_waiter *w)
{
	if (!w)
		return;
	pthread_mutex_destroy(&w->lock);
	free(w->entries);
	free(w->index);
	free(w);
}

static u64 now_of(const struct gpuar_clock *c)
{
	return c->ops->now(c->ctx);
}

static int source_error(struct gpuar_waiter *w, struct gpuar_record *rec,
			int err, const char *where, struct gpuar_error *diag)
{
	char num[24];
	const char *args[4] = { "source", num, where, "" };

	snprintf(num, sizeof(num), "%d", err);
	args[3] = strerror(-err);
	rec->status = err;
	rec->outcome = 0;
	pthread_mutex_lock(&w->lock);
	w->st.errors++;
	pthread_mutex_unlock(&w->lock);
	gpuar_diag_set(diag, GPUAR_E_BACKEND, -err, args, 4);
	return err;
}

static int wait_block(struct gpuar_waiter *w, const struct gpuar_src *src,
		      struct gpuar_word_state *ws, struct gpuar_record *rec,
		      struct gpuar_error *diag)
{
	uint64_t value = 0;
	int ret;

	if (!src->ops->block) {
		const char *args[2] = { "plan", "block needs a source with a blocking wait" };

		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EOPNOTSUPP,
				      args, 2);
	}
	ret = src->ops->block(src->ctx);
	if (ret < 0)
		return source_error(w, rec, ret, "blocking wait", diag);
	src->ops->check(src->ctx, &value);
	ws->complete_ns = now_of(w->clock);
	ws->outcome = GPUAR_OUTCOME_EXACT;
	ws->checks = 0;
	rec->complete_ns = ws->complete_ns;
	rec->outcome = GPUAR_OUTCOME_EXACT;
	rec->checks = 0;
	rec->value = value;
	return 0;
}

/* One check, counted; returns 1 done, 0 pending, < 0 source error. */
static int check(struct gpuar_waiter *w, const struct gpuar_src *src,
		 uint64_t *value)
{
	int r = src->ops->check(src->ctx, value);

	pthread_mutex_lock(&w->lock);
	w->st.checks++;
	pthread_mutex_unlock(&w->lock);
	return r;
}

static bool stepped(struct gpuar_waiter *w, struct gpuar_word_state *ws,
		    struct gpuar_est_entry *e, u64 now, bool done)
{
	bool end;

	pthread_mutex_lock(&w->lock);
	end = gpuar_word_checked(ws, gpuar_backoff_est(ws, &e->est, now), now,
				 done);
	if (end)
		e->outcomes[ws->outcome]++;
	else
		gpuar_backoff_step(ws, now);
	pthread_mutex_unlock(&w->lock);
	return end;
}

static void count(struct gpuar_waiter *w, uint64_t *ctr)
{
	pthread_mutex_lock(&w->lock);
	(*ctr)++;
	pthread_mutex_unlock(&w->lock);
}

/*
 * Park a flag wait until its next check, with a status query every
 * @backstop_ns (the plan's, or the default backstop for backstop_us=0, as
 * a port's).
 */
static int park(struct gpuar_waiter *w, const struct gpuar_src *src,
		struct gpuar_word_state *ws, u64 backstop_ns, u64 *next_status)
{
	const struct gpuar_clock *c = w->clock;
	u64 now = now_of(c), until = ws->next_ns;
	int ret;

	if (src->ops->status && now >= *next_status) {
		count(w, &w->st.status_queries);
		ret = src->ops->status(src->ctx);
		if (ret < 0)
			return ret;
		*next_status = now + backstop_ns;
	}
	if (src->ops->status && *next_status < until)
		until = *next_status;
	count(w, &w->st.parks);
	if (src->ops->park)
		return src->ops->park(src->ctx, c, until);
	c->ops->sleep_until(c->ctx, until);
	return 0;
}

GPUAR_EXPORT void gpuar_waiter_set_interrupt(struct gpuar_waiter *w,
					     const struct gpuar_interrupt *intr)
{
	if (w)
		__atomic_store_n(&w->intr_fd, gpuar_interrupt_fd_of(intr),
				 __ATOMIC_RELEASE);
}

/* The interrupt's fd if it is set now, else -1; *@fd: the fd to sleep on. */
static bool wait_interrupted(struct gpuar_waiter *w, int *fd)
{
	*fd = __atomic_load_n(&w->intr_fd, __ATOMIC_ACQUIRE);
	return *fd >= 0 && gpuar_interrupt_fd_set(*fd);
}

/*
 * The wait proper, on its point @e (held: no other wait's new point can
 * evict it meanwhile); @rec has its identity and start already.
 */
static int wait_on_point(struct gpuar_waiter *w, const struct gpuar_src *src,
			 const struct gpuar_plan *plan,
			 struct gpuar_est_entry *e, struct gpuar_record *rec,
			 struct gpuar_error *diag)
{
	const struct gpuar_clock *c = w->clock;
	struct gpuar_word_state ws;
	uint64_t value = 0;
	u64 next_status = 0;
	/* The driver never times out: its backstop is the status query. */
	struct gpuar_word_cfg cfg = {
		.poll_interval_ns = w->poll_interval_ns,
		.floor_ns = GPUAR_WAITER_CHECK_FLOOR_NS,
		.backstop_ns = GPUAR_DEFAULT_BACKSTOP_US * GPUAR_NSEC_PER_USEC,
	};
	u64 backstop;
	bool done;
	int r;

	memset(&ws, 0, sizeof(ws));
	if (plan->park == GPUAR_PARK_BLOCK) {
		r = wait_block(w, src, &ws, rec, diag);
		if (r == 0) {
			pthread_mutex_lock(&w->lock);
			w->st.outcomes[GPUAR_OUTCOME_EXACT]++;
			e->outcomes[GPUAR_OUTCOME_EXACT]++;
			pthread_mutex_unlock(&w->lock);
		}
		return r;
	}
	r = check(w, src, &value);
	if (r < 0)
		return source_error(w, rec, r, "check", diag);
	pthread_mutex_lock(&w->lock);
	done = gpuar_word_begin(&ws, plan, &e->est, rec->start_ns, false,
				now_of(c), r > 0, &cfg);
	if (done)
		e->outcomes[ws.outcome]++;
	pthread_mutex_unlock(&w->lock);
	if (!done && plan->park == GPUAR_PARK_FLAG && src->ops->arm) {
		r = src->ops->arm(src->ctx);
		if (r < 0)
			return source_error(w, rec, r, "arm", diag);
	}
	while (!done) {
		int intr_fd;

		if (wait_interrupted(w, &intr_fd))
			return gpuar_diag_sys(diag, "gpuar_wait (interrupted)",
					      EINTR);
		if (ws.phase == GPUAR_WORD_SLEEP) {
			count(w, &w->st.sleeps);
			gpuar_sleep_interruptible(c, ws.next_ns, intr_fd);
		} else if (plan->park == GPUAR_PARK_FLAG) {
			backstop = gpuar_word_backstop_ns(plan, &cfg);
			if (!next_status)
				next_status = ws.park_from_ns + backstop;
			r = park(w, src, &ws, backstop, &next_status);
			if (r < 0)
				return source_error(w, rec, r, "status query", diag);
		} else {
			c->ops->sleep_until(c->ctx, ws.next_ns);
		}
		r = check(w, src, &value);
		if (r < 0)
			return source_error(w, rec, r, "check", diag);
		done = stepped(w, &ws, e, now_of(c), r > 0);
	}
	gpuar_word_record(&ws, rec, rec->user_data, rec->point, value);
	rec->source = (src->ops->fd && !src->ops->word) ? GPUAR_SOURCE_FENCE :
		      GPUAR_SOURCE_WORD;
	pthread_mutex_lock(&w->lock);
	w->st.outcomes[ws.outcome]++;
	pthread_mutex_unlock(&w->lock);
	return 0;
}

GPUAR_EXPORT int gpuar_wait(struct gpuar_waiter *w,
			    const struct gpuar_src *src,
			    const struct gpuar_plan *plan, uint64_t point,
			    uint64_t user_data, struct gpuar_record *rec,
			    struct gpuar_error *diag)
{
	struct gpuar_est_entry *e;
	enum gpuar_plan_fault fault;
	int r;

	gpuar_diag_clear(diag);
	plan = gpuar_plan_or_default(plan);
	if (!w || !src || !src->ops || !src->ops->check || !rec) {
		const char *args[2] = { "wait", "waiter, source (with check) and record are required" };

		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	fault = gpuar_plan_check(plan);
	if (fault != GPUAR_PLAN_OK) {
		char label[GPUAR_PLAN_LABEL_MAX];
		const char *args[3] = { label, gpuar_plan_fault_str(fault), "0" };

		gpuar_plan_label(plan, label, sizeof(label));
		return gpuar_diag_set(diag, GPUAR_E_INVALID_PLAN, EINVAL, args, 3);
	}
	memset(rec, 0, sizeof(*rec));
	rec->user_data = user_data;
	rec->start_ns = now_of(w->clock);
	rec->point = point;
	rec->version = GPUAR_RECORD_VERSION_1;
	rec->source = (src->ops->fd && !src->ops->word) ? GPUAR_SOURCE_FENCE :
			GPUAR_SOURCE_WORD;
	/*
	 * A full table gives its least recently used idle point to a new one
	 * (as the module's port); the waits in progress hold theirs.
	 */
	pthread_mutex_lock(&w->lock);
	w->st.waits++;
	e = gpuar_word_point(&w->tab, point, plan);
	if (e)
		gpuar_est_entry_hold(&w->tab, e);
	pthread_mutex_unlock(&w->lock);
	if (!e) {
		const char *args[2] = { "point", "every point of the waiter's full table is in a wait" };

		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, ENOSPC, args, 2);
	}
	r = wait_on_point(w, src, plan, e, rec, diag);
	pthread_mutex_lock(&w->lock);
	gpuar_est_entry_release(e);
	pthread_mutex_unlock(&w->lock);
	return r;
}

GPUAR_EXPORT void gpuar_waiter_stats(struct gpuar_waiter *w,
				     struct gpuar_waiter_stats *stats)
{
	if (!stats)
		return;
	if (!w) {
		memset(stats, 0, sizeof(*stats));
		return;
	}
	pthread_mutex_lock(&w->lock);
	*stats = w->st;
	pthread_mutex_unlock(&w->lock);
}

GPUAR_EXPORT int gpuar_waiter_prediction(struct gpuar_waiter *w,
					 uint64_t point, uint64_t *ns)
{
	struct gpuar_est_entry *e;
	u64 p = 0;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->lock);
	e = gpuar_est_table_find(&w->tab, point);
	if (e)
		gpuar_est_predict(&e->est, &p);
	pthread_mutex_unlock(&w->lock);
	if (ns)
		*ns = p;
	return e ? 0 : -ENOENT;
}
