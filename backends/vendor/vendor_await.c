// SPDX-License-Identifier: MIT
/*
 * Awaiting a stream through a port: record the word store and submit the
 * word wait in one call; reap records, resolving each backstop timeout
 * with the stream's status (the error authority).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vendor.h"

struct gv_await {
	struct gv_await *next;
	struct gpuar_vendor_line *line;
	void *stream;
	uint64_t user_data;
	uint64_t target;
	uint64_t point;
	uint32_t slot;
	unsigned int failed;	/* vendor status that made us cancel it */
	uint32_t resubmits;	/* backstop timeouts resolved as "late" */
	uint32_t checks;	/* word checks of the earlier submissions */
	struct gpuar_plan plan;
};

/*
 * How long one blocking gpuar_reap may run before the backend looks at the
 * streams of its pending waits that have no backstop of their own (poll
 * plans): a failed stream never stores, so without this look its wait
 * would never end.
 */
#define GV_REAP_SLICE_NS ((int64_t)50000000)

void gv_awaits_drop(struct gv_backend *b)
{
	while (b->awaits) {
		struct gv_await *next = b->awaits->next;

		free(b->awaits);
		b->awaits = next;
	}
}

/* Take the await for @rec off the list; NULL when it is not ours. */
static struct gv_await *gv_await_take(struct gv_backend *b,
				      struct gpuar_port *port,
				      const struct gpuar_record *rec)
{
	struct gv_await **pp, *a = NULL;

	pthread_mutex_lock(&b->lock);
	for (pp = &b->awaits; *pp; pp = &(*pp)->next) {
		if ((*pp)->user_data == rec->user_data &&
		    (*pp)->line->port == port && rec->source == GPUAR_SOURCE_WORD &&
		    rec->point == (*pp)->point) {
			a = *pp;
			*pp = a->next;
			break;
		}
	}
	pthread_mutex_unlock(&b->lock);
	return a;
}

static void gv_await_put(struct gv_backend *b, struct gv_await *a)
{
	pthread_mutex_lock(&b->lock);
	a->next = b->awaits;
	b->awaits = a;
	pthread_mutex_unlock(&b->lock);
}

static int gv_submit(struct gv_await *a, uint64_t start_ns,
		     const struct gpuar_plan *plan)
{
	struct gpuar_word_wait w;

	memset(&w, 0, sizeof(w));
	w.user_data = a->user_data;
	w.target = a->target;
	w.point = a->point;
	w.start_ns = start_ns;
	w.line = gpuar_line_id(a->line->line);
	w.slot = a->slot;
	w.plan = *plan;
	return gpuar_submit_word_waits(a->line->port, &w, 1, NULL);
}

int gv_await(struct gpuar_vendor_line *l, uint32_t slot, void *stream,
	     const struct gpuar_plan *plan, uint64_t point, uint64_t user_data,
	     uint64_t *target, struct gpuar_error *diag)
{
	struct gv_backend *b;
	struct gpuar_plan submit_plan;
	struct gv_await *a;
	uint64_t recorded;
	int rc;

	gv_diag_clear(diag);
	if (!l || !plan)
		return -EINVAL;
	b = l->b;
	a = calloc(1, sizeof(*a));
	if (!a)
		return gv_fail(b, diag, ENOMEM, GV_NO_VENDOR_STATUS,
			       "out of memory for an await");
	rc = gv_record(l, slot, stream, &a->target, diag);
	if (rc) {
		free(a);
		return rc;
	}
	recorded = a->target;
	a->line = l;
	a->stream = stream;
	a->user_data = user_data;
	a->point = point;
	a->slot = slot;
	submit_plan = *plan;
	if (plan->park == GPUAR_PARK_BLOCK) {
		/* block is the vendor's blocking wait; the port then gets a
		 * poll wait that its first check completes (IMMEDIATE), so the
		 * caller reaps one record whatever the plan. */
		rc = gv_stream_synchronize(b, stream, diag);
		if (rc) {
			free(a);
			return rc;
		}
		memset(&submit_plan, 0, sizeof(submit_plan));
		submit_plan.park = GPUAR_PARK_POLL;
	}
	a->plan = submit_plan;
	pthread_mutex_lock(&b->lock);
	l->awaits++;
	pthread_mutex_unlock(&b->lock);
	gv_await_put(b, a);
	rc = gv_submit(a, 0, &submit_plan);
	if (rc < 0) {
		struct gpuar_record r = { .user_data = user_data,
					  .source = GPUAR_SOURCE_WORD,
					  .point = point };

		a = gv_await_take(b, l->port, &r);
		pthread_mutex_lock(&b->lock);
		l->awaits--;
		pthread_mutex_unlock(&b->lock);
		free(a);
		return gv_fail(b, diag, -rc, GV_NO_VENDOR_STATUS,
			       "the store is enqueued but the port refused the "
			       "word wait (errno %d)", -rc);
	}
	if (target)
		*target = recorded;
	return 0;
}

static struct gpuar_port *port_of(const struct gv_await *a)
{
	return a->line->port;
}

static void gv_await_done(struct gv_backend *b, struct gv_await *a)
{
	pthread_mutex_lock(&b->lock);
	a->line->awaits--;
	pthread_mutex_unlock(&b->lock);
	free(a);
}

/*
 * Resolve one of our records. Returns 1 when *@out is a completion for the
 * caller, 0 when the wait was resubmitted (nothing to hand out).
 */
static int gv_resolve(struct gv_backend *b, struct gv_await *a,
		      const struct gpuar_record *rec,
		      struct gpuar_vendor_completion *out,
		      struct gpuar_error *diag)
{
	unsigned int st;
	int rc;

	memset(out, 0, sizeof(*out));
	out->record = *rec;
	if (rec->outcome == GPUAR_OUTCOME_CANCELLED && a->failed) {
		st = a->failed;
		goto failed;
	}
	if (rec->outcome != GPUAR_OUTCOME_TIMEOUT) {
		/* A resubmission found done at once was seen pending before:
		 * to the caller that is EXACT, with every check counted. */
		if (a->resubmits) {
			out->record.checks += a->checks;
			if (rec->outcome == GPUAR_OUTCOME_IMMEDIATE)
				out->record.outcome = GPUAR_OUTCOME_EXACT;
		}
		gv_await_done(b, a);
		return 1;
	}
	st = gv_query(b, a->stream);
	if (!st || st == b->ops->not_ready) {
		/* Merely late (or done since): wait again from the original
		 * start, so the estimator sees the true duration. */
		a->resubmits++;
		a->checks += rec->checks;
		gv_await_put(b, a);
		rc = gv_submit(a, rec->start_ns, &a->plan);
		if (rc >= 0)
			return 0;
		a = gv_await_take(b, port_of(a), rec);
		out->record.status = rc;
		gv_fail(b, diag, -rc, GV_NO_VENDOR_STATUS,
			"resubmitting a late wait failed (errno %d)", -rc);
		if (a)
			gv_await_done(b, a);
		return 1;
	}
failed:
	out->record.status = -EIO;
	out->vendor_status = (int32_t)st;
	out->vendor_name = b->ops->status_name(b, st);
	gv_vendor_fail(b, diag, st, "the awaited stream");
	gv_await_done(b, a);
	return 1;
}

/*
 * Ask the stream of every pending wait on @port without a backstop
 * timeout; cancel those whose stream failed (their CANCELLED record then
 * becomes the error record).
 */
static void gv_check_unguarded(struct gv_backend *b, struct gpuar_port *port)
{
	uint64_t cancel[32];
	uint32_t n = 0;

	pthread_mutex_lock(&b->lock);
	for (struct gv_await *a = b->awaits; a && n < 32; a = a->next) {
		unsigned int st;

		if (a->line->port != port || a->failed ||
		    a->plan.park == GPUAR_PARK_FLAG)
			continue;
		st = gv_query(b, a->stream);
		if (st && st != b->ops->not_ready) {
			a->failed = st;
			cancel[n++] = a->user_data;
		}
	}
	pthread_mutex_unlock(&b->lock);
	for (uint32_t i = 0; i < n; i++)
		gpuar_cancel(port, cancel[i]);	/* -EALREADY: it finished */
}

int gv_reap(struct gv_backend *b, struct gpuar_port *port,
	    struct gpuar_vendor_completion *out, uint32_t max,
	    int64_t timeout_ns, struct gpuar_error *diag)
{
	struct gpuar_record recs[32];
	uint64_t deadline = 0;

	gv_diag_clear(diag);
	if (!port || !out || !max)
		return -EINVAL;
	if (max > sizeof(recs) / sizeof(recs[0]))
		max = sizeof(recs) / sizeof(recs[0]);
	if (timeout_ns > 0)
		deadline = gpuar_now_ns() + (uint64_t)timeout_ns;
	for (;;) {
		int64_t left = timeout_ns;
		uint32_t k = 0;
		int n;

		if (timeout_ns > 0) {
			uint64_t now = gpuar_now_ns();

			if (now >= deadline)
				return -ETIME;
			left = (int64_t)(deadline - now);
		}
		if (left < 0 || left > GV_REAP_SLICE_NS)
			left = GV_REAP_SLICE_NS;
		n = gpuar_reap(port, recs, max, left);
		if (n == -ETIME) {
			gv_check_unguarded(b, port);
			continue;
		}
		if (n == -EAGAIN && timeout_ns == 0)
			gv_check_unguarded(b, port);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			struct gv_await *a = gv_await_take(b, port, &recs[i]);

			if (!a) {
				memset(&out[k], 0, sizeof(out[k]));
				out[k++].record = recs[i];
				continue;
			}
			k += (uint32_t)gv_resolve(b, a, &recs[i], &out[k], diag);
		}
		if (k)
			return (int)k;
		if (timeout_ns == 0)
			return -EAGAIN;
	}
}
