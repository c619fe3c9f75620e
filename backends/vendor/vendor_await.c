// SPDX-License-Identifier: MIT
/*
 * Awaiting a stream through a port: record the word store and submit the
 * word wait in one call; reap records, resolving each backstop timeout
 * with the stream's status (the error authority).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "port.h"	/* gpuar_port_on_close */
#include "vendor.h"

/* Why an await ends without its store (struct gv_await.why). */
enum gv_end {
	GV_END_STREAM,	/* the stream (or its domain) failed: -EIO */
	GV_END_RESET,	/* a reset destroyed the line's registration: -EIO */
	GV_END_LOST,	/* the stream went idle, the word short: -ENODATA */
};

struct gv_await {
	struct gv_await *next;	/* in its port's bucket */
	bool listed;		/* in the registry (registry lock) */
	struct gpuar_vendor_line *line;	/* its backend: line->b */
	void *stream;	/* asked for the status (the error authority) */
	/* @stream is the domain's stream, which says nothing about when
	 * the awaited work ends: only whether the domain failed. */
	bool thread_relative;
	uint64_t user_data;
	uint64_t target;
	uint64_t point;
	uint32_t slot;
	unsigned int failed;	/* vendor status that made us cancel it */
	enum gv_end why;	/* with failed: how it ends */
	uint32_t idle_short;	/* looks in a row: stream idle, word short */
	uint32_t resubmits;	/* backstop timeouts resolved as "late" */
	uint32_t checks;	/* word checks of the earlier submissions */
	uint32_t queries;	/* status queries in flight (registry lock) */
	struct gpuar_plan plan;
};

/*
 * How many looks in a row (backstops, or unguarded checks) must find the
 * stream idle and the word still short of its target before the store
 * counts as lost: the first may race the store on its way to the host.
 */
#define GV_IDLE_STRIKES 2

/*
 * How long one blocking gpuar_reap may run before the backend looks at the
 * streams of its pending waits that have no backstop of their own (poll
 * plans): a failed stream never stores, so without this look its wait
 * would never end.
 */
#define GV_REAP_SLICE_NS ((int64_t)50000000)

/*
 * Every await of every backend handle, in one registry: a port may carry
 * the awaits of several handles (one per GPU), and whichever reaps a
 * record (any handle's reap, or gpuar_vendor_resolve after the caller's
 * own read) must find its await. The registry keeps a table per port,
 * hashed on user_data (matched with the point), so a record finds its
 * await in a few steps however many are pending; closing the port drops
 * its table (gv_port_closed), so a port opened later, even at the same
 * address, never meets its awaits. One lock, never held across a driver
 * call.
 */
struct gv_port_awaits {
	struct gv_port_awaits *next;
	struct gpuar_port *port;
	uint32_t count;		/* awaits in the table */
	uint32_t nbuckets;	/* a power of two */
	uint32_t cursor;	/* the bucket the next unguarded check starts at */
	struct gv_await **buckets;
};

#define GV_BUCKETS_MIN 64u

static pthread_mutex_t gv_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gv_queries_done = PTHREAD_COND_INITIALIZER;
static struct gv_port_awaits *gv_ports;
static uint64_t gv_steps;	/* entries lookups stepped over */
static uint64_t gv_lookups;	/* lookups of a record's await */
static pthread_once_t gv_observe_once = PTHREAD_ONCE_INIT;

static uint32_t gv_bucket(const struct gv_port_awaits *pa, uint64_t user_data)
{
	/* Fibonacci hashing: user_data counters spread over the buckets. */
	return (uint32_t)((user_data * 0x9e3779b97f4a7c15ull) >> 32) &
	       (pa->nbuckets - 1);
}

/* @port's table, made (and @port's close observed) when @make. Locked. */
static struct gv_port_awaits *gv_port_table(struct gpuar_port *port, bool make)
{
	struct gv_port_awaits *pa;

	for (pa = gv_ports; pa; pa = pa->next)
		if (pa->port == port)
			return pa;
	if (!make)
		return NULL;
	pa = calloc(1, sizeof(*pa));
	if (pa)
		pa->buckets = calloc(GV_BUCKETS_MIN, sizeof(*pa->buckets));
	if (!pa || !pa->buckets) {
		free(pa);
		return NULL;
	}
	pa->port = port;
	pa->nbuckets = GV_BUCKETS_MIN;
	pa->next = gv_ports;
	gv_ports = pa;
	return pa;
}

/* Double the buckets once the chains grow past two on average. Locked. */
static void gv_port_table_grow(struct gv_port_awaits *pa)
{
	uint32_t old = pa->nbuckets;
	struct gv_await **was = pa->buckets, **now;

	if (pa->count <= 2 * old || old > UINT32_MAX / 4)
		return;
	now = calloc(2 * (size_t)old, sizeof(*now));
	if (!now)
		return;	/* longer chains, still correct */
	pa->buckets = now;
	pa->nbuckets = 2 * old;
	pa->cursor = 0;
	for (uint32_t i = 0; i < old; i++) {
		while (was[i]) {
			struct gv_await *a = was[i];
			uint32_t k = gv_bucket(pa, a->user_data);

			was[i] = a->next;
			a->next = now[k];
			now[k] = a;
		}
	}
	free(was);
}

/*
 * Free an await once no status query of its stream is in flight: the
 * caller may destroy the stream as soon as it has the await's record.
 * Under the registry lock.
 */
static void gv_await_free_locked(struct gv_await *a)
{
	while (a->queries)
		pthread_cond_wait(&gv_queries_done, &gv_registry_lock);
	free(a);
}

static void gv_await_free(struct gv_await *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&gv_registry_lock);
	gv_await_free_locked(a);
	pthread_mutex_unlock(&gv_registry_lock);
}

/*
 * Unlink and free the awaits of @pa (those of backend @drop only, unless
 * NULL). Their lines keep counting them, so none of those lines is freed
 * through a port that is gone (-EBUSY). Locked.
 */
static void gv_port_table_drop(struct gv_port_awaits *pa,
			       const struct gv_backend *drop)
{
	for (uint32_t i = 0; i < pa->nbuckets; i++) {
		struct gv_await **pp = &pa->buckets[i];

		while (*pp) {
			struct gv_await *a = *pp;

			if (drop && a->line->b != drop) {
				pp = &a->next;
				continue;
			}
			*pp = a->next;
			a->listed = false;
			pa->count--;
			gv_await_free_locked(a);
		}
	}
}

void gv_awaits_drop(struct gv_backend *b)
{
	pthread_mutex_lock(&gv_registry_lock);
	for (struct gv_port_awaits *pa = gv_ports; pa; pa = pa->next)
		gv_port_table_drop(pa, b);
	pthread_mutex_unlock(&gv_registry_lock);
}

/* gpuar_port_close is closing @port: its awaits go, records unread. */
static void gv_port_closed(struct gpuar_port *port)
{
	struct gv_port_awaits **pp, *pa = NULL;

	pthread_mutex_lock(&gv_registry_lock);
	for (pp = &gv_ports; *pp; pp = &(*pp)->next) {
		if ((*pp)->port == port) {
			pa = *pp;
			*pp = pa->next;
			break;
		}
	}
	if (pa)
		gv_port_table_drop(pa, NULL);
	pthread_mutex_unlock(&gv_registry_lock);
	if (pa)
		free(pa->buckets);
	free(pa);
	/* Its vendor lines outlive it, to be freed safely (vendor_line.c). */
	gv_lines_port_closed(port);
}

static void gv_observe_ports(void)
{
	gpuar_port_on_close(gv_port_closed);
}

void gv_observe_ports_once(void)
{
	pthread_once(&gv_observe_once, gv_observe_ports);
}

uint64_t gv_registry_awaits(void)
{
	uint64_t n = 0;

	pthread_mutex_lock(&gv_registry_lock);
	for (struct gv_port_awaits *pa = gv_ports; pa; pa = pa->next)
		n += pa->count;
	pthread_mutex_unlock(&gv_registry_lock);
	return n;
}

uint64_t gv_registry_steps(void)
{
	uint64_t n;

	pthread_mutex_lock(&gv_registry_lock);
	n = gv_steps;
	pthread_mutex_unlock(&gv_registry_lock);
	return n;
}

uint64_t gv_registry_lookups(void)
{
	uint64_t n;

	pthread_mutex_lock(&gv_registry_lock);
	n = gv_lookups;
	pthread_mutex_unlock(&gv_registry_lock);
	return n;
}

/* Take the await for @rec off the registry; NULL when it is not one. */
static struct gv_await *gv_await_take(struct gpuar_port *port,
				      const struct gpuar_record *rec)
{
	struct gv_port_awaits *pa;
	struct gv_await **pp, *a = NULL;

	if (rec->source != GPUAR_SOURCE_WORD)
		return NULL;
	pthread_mutex_lock(&gv_registry_lock);
	pa = gv_port_table(port, false);
	if (!pa) {
		pthread_mutex_unlock(&gv_registry_lock);
		return NULL;
	}
	gv_lookups++;
	for (pp = &pa->buckets[gv_bucket(pa, rec->user_data)]; *pp;
	     pp = &(*pp)->next) {
		gv_steps++;
		if ((*pp)->user_data == rec->user_data &&
		    (*pp)->point == rec->point) {
			a = *pp;
			*pp = a->next;
			a->listed = false;
			pa->count--;
			break;
		}
	}
	pthread_mutex_unlock(&gv_registry_lock);
	return a;
}

/* Put @a in its port's table: 0, or -ENOMEM (no table for the port). */
static int gv_await_put(struct gv_await *a)
{
	struct gv_port_awaits *pa;
	uint32_t k;

	pthread_once(&gv_observe_once, gv_observe_ports);
	pthread_mutex_lock(&gv_registry_lock);
	pa = gv_port_table(a->line->port, true);
	if (!pa) {
		pthread_mutex_unlock(&gv_registry_lock);
		return -ENOMEM;
	}
	pa->count++;
	gv_port_table_grow(pa);
	k = gv_bucket(pa, a->user_data);
	a->next = pa->buckets[k];
	pa->buckets[k] = a;
	a->listed = true;
	pthread_mutex_unlock(&gv_registry_lock);
	return 0;
}

static void gv_line_awaits_add(struct gpuar_vendor_line *l, int n)
{
	pthread_mutex_lock(&gv_registry_lock);
	l->awaits = (uint32_t)((int)l->awaits + n);
	pthread_mutex_unlock(&gv_registry_lock);
}

void gv_line_awaits_forget(struct gpuar_vendor_line *l)
{
	pthread_mutex_lock(&gv_registry_lock);
	l->awaits = 0;
	pthread_mutex_unlock(&gv_registry_lock);
}

uint32_t gv_line_awaits(struct gpuar_vendor_line *l)
{
	uint32_t n;

	pthread_mutex_lock(&gv_registry_lock);
	n = l->awaits;
	pthread_mutex_unlock(&gv_registry_lock);
	return n;
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

int gv_await_store(struct gpuar_vendor_line *l, uint32_t slot, void *stream,
		   const struct gv_store *store, const struct gpuar_plan *plan,
		   uint64_t point, uint64_t user_data, uint64_t *target,
		   struct gpuar_error *diag)
{
	struct gv_stream_id id = { 0 };
	struct gv_backend *b;
	struct gpuar_plan submit_plan;
	struct gv_await *a;
	uint64_t recorded;
	int rc;

	gv_diag_clear(diag);
	if (!l)
		return gv_refuse(diag, "line");
	plan = gpuar_plan_or_default(plan);
	b = l->b;
	a = calloc(1, sizeof(*a));
	if (!a)
		return gv_fail(b, diag, ENOMEM, GV_NO_VENDOR_STATUS,
			       "out of memory for an await");
	rc = gv_record_store(l, slot, stream, store, &id, &a->target, diag);
	if (rc) {
		free(a);
		return rc;
	}
	recorded = a->target;
	a->line = l;
	/* A thread-relative handle names another stream in the reaper's
	 * thread: there the domain's own stream answers for sticky errors,
	 * which are what stops a store. */
	a->stream = id.thread_relative ? b->ops->domain_stream : stream;
	a->thread_relative = id.thread_relative;
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
	gv_line_awaits_add(l, 1);
	if (gv_await_put(a)) {
		gv_line_awaits_add(l, -1);
		free(a);
		return gv_fail(b, diag, ENOMEM, GV_NO_VENDOR_STATUS,
			       "the store is enqueued but no memory was left to "
			       "register the await");
	}
	rc = gv_submit(a, 0, &submit_plan);
	if (rc < 0) {
		struct gpuar_record r = { .user_data = user_data,
					  .source = GPUAR_SOURCE_WORD,
					  .point = point };

		a = gv_await_take(l->port, &r);
		gv_line_awaits_add(l, -1);
		gv_await_free(a);
		return gv_fail(b, diag, -rc, GV_NO_VENDOR_STATUS,
			       "the store is enqueued but the port refused the "
			       "word wait (errno %d)", -rc);
	}
	if (target)
		*target = recorded;
	return 0;
}

int gv_await(struct gpuar_vendor_line *l, uint32_t slot, void *stream,
	     const struct gpuar_plan *plan, uint64_t point, uint64_t user_data,
	     uint64_t *target, struct gpuar_error *diag)
{
	return gv_await_store(l, slot, stream, NULL, plan, point, user_data,
			      target, diag);
}

static struct gpuar_port *port_of(const struct gv_await *a)
{
	return a->line->port;
}

static void gv_await_done(struct gv_await *a)
{
	gv_line_awaits_add(a->line, -1);
	gv_await_free(a);
}

/* What asking the device about an await whose word is short found. */
enum gv_look {
	GV_LOOK_WAIT,	/* pending, late, or done since: wait on */
	GV_LOOK_FAILED,	/* the stream (its domain) failed */
	GV_LOOK_RESET,	/* the line's registration is gone */
	GV_LOOK_IDLE,	/* the stream is idle, the word short */
};

/*
 * Ask about an await (its line @l, @slot, @target; @stream, and whether
 * that is the domain's) with driver calls only, no lock held: the
 * stream's status, the word after it, and, where the status cannot tell
 * (the domain's stream, or an idle stream), whether the device still has
 * the line. *@gone: the stream's handle is no longer valid (destroyed
 * while awaited, or reset away), so the domain's stream was asked and
 * should be from now on. *@status: the vendor status behind FAILED or
 * RESET.
 */
static enum gv_look gv_look(struct gpuar_vendor_line *l, uint32_t slot,
			    uint64_t target, void *stream, bool thread_relative,
			    bool *gone, unsigned int *status)
{
	struct gv_backend *b = l->b;
	const struct gv_ops *ops = b->ops;
	unsigned int st = gv_query(b, stream);
	const char *what;
	bool idle;

	*gone = false;
	if (st == ops->invalid_handle && !thread_relative) {
		/* Its work still finishes (or died in a reset): the domain
		 * answers from now on. */
		*gone = true;
		thread_relative = true;
		st = gv_query(b, ops->domain_stream);
	}
	if (st && st != ops->not_ready && !ops->status_not_now(st)) {
		*status = st;
		return GV_LOOK_FAILED;
	}
	/* After the status: a store the idle stream made is visible now. */
	if (gpuar_reached(gpuar_word_load(&l->words[slot]), target))
		return GV_LOOK_WAIT;
	idle = !st && !thread_relative;
	if ((idle || thread_relative) && gv_line_lost(l, status, &what))
		return GV_LOOK_RESET;
	return idle ? GV_LOOK_IDLE : GV_LOOK_WAIT;
}

/*
 * Apply a look to @a (held exclusively: taken off the registry, or under
 * its lock): the domain's stream after a gone handle, the count of idle
 * looks. True when @a ends, with a->failed and a->why set.
 */
static bool gv_look_apply(struct gv_await *a, enum gv_look look, bool gone,
			  unsigned int status)
{
	if (gone) {
		a->stream = a->line->b->ops->domain_stream;
		a->thread_relative = true;
	}
	a->idle_short = look == GV_LOOK_IDLE ? a->idle_short + 1 : 0;
	switch (look) {
	case GV_LOOK_FAILED:
		a->why = GV_END_STREAM;
		break;
	case GV_LOOK_RESET:
		a->why = GV_END_RESET;
		break;
	case GV_LOOK_IDLE:
		if (a->idle_short < GV_IDLE_STRIKES)
			return false;
		a->why = GV_END_LOST;
		status = GV_NO_VENDOR_STATUS;
		break;
	default:
		return false;
	}
	a->failed = status ? status : GV_NO_VENDOR_STATUS;
	return true;
}

/* *@out for an await that ends without its store (a->failed, a->why). */
static void gv_end(struct gv_await *a, struct gpuar_vendor_completion *out,
		   struct gpuar_error *diag)
{
	struct gv_backend *b = a->line->b;
	unsigned int st = a->failed;
	const char *what = "";

	switch (a->why) {
	case GV_END_LOST:
		gv_slot_lost(a->line, a->slot, a->target);
		out->record.status = -ENODATA;
		gv_fail(b, diag, ENODATA, GV_NO_VENDOR_STATUS,
			"store lost: the stream went idle %u times in a row with "
			"slot %u's word short of %llu; the number it stored never "
			"reached the host", a->idle_short, a->slot,
			(unsigned long long)a->target);
		return;
	case GV_END_RESET:
		gv_line_lost(a->line, &st, &what);
		gv_fail(b, diag, EIO, st, "the awaited store never lands: %s",
			what);
		break;
	case GV_END_STREAM:
		gv_vendor_fail(b, diag, st, "the awaited stream");
		break;
	}
	out->record.status = -EIO;
	if (st != GV_NO_VENDOR_STATUS) {
		out->vendor_status = (int32_t)st;
		out->vendor_name = b->ops->status_name(b, st);
	}
}

/*
 * Resolve one of our records. Returns 1 when *@out is a completion for the
 * caller, 0 when the wait was resubmitted (nothing to hand out).
 */
static int gv_resolve(struct gv_await *a, const struct gpuar_record *rec,
		      struct gpuar_vendor_completion *out,
		      struct gpuar_error *diag)
{
	struct gv_backend *b = a->line->b;
	unsigned int st = 0;
	enum gv_look look;
	bool gone;
	int rc;

	memset(out, 0, sizeof(*out));
	out->record = *rec;
	if (rec->outcome == GPUAR_OUTCOME_CANCELLED && a->failed)
		goto end;
	if (rec->outcome != GPUAR_OUTCOME_TIMEOUT) {
		/* A resubmission found done at once was seen pending before:
		 * to the caller that is EXACT, with every check counted. */
		if (a->resubmits) {
			out->record.checks += a->checks;
			if (rec->outcome == GPUAR_OUTCOME_IMMEDIATE)
				out->record.outcome = GPUAR_OUTCOME_EXACT;
		}
		gv_await_done(a);
		return 1;
	}
	look = gv_look(a->line, a->slot, a->target, a->stream,
		       a->thread_relative, &gone, &st);
	if (!gv_look_apply(a, look, gone, st)) {
		/* Merely late (or done since), or a graph capture elsewhere
		 * forbade the question: wait again from the original start,
		 * so the estimator sees the true duration. */
		a->resubmits++;
		a->checks += rec->checks;
		rc = gv_await_put(a);
		if (rc) {	/* not listed: ours still */
			gv_await_done(a);
			a = NULL;
		} else {
			struct gpuar_plan again = a->plan;

			/* Less and less often (lib/backoff.c): it may never end. */
			if (again.park == GPUAR_PARK_FLAG)
				again.park_ns = gpuar_backoff_park_ns(again.park_ns,
								      a->resubmits);
			rc = gv_submit(a, rec->start_ns, &again);
			if (rc >= 0)
				return 0;
			a = gv_await_take(port_of(a), rec);
		}
		out->record.status = rc;
		gv_fail(b, diag, -rc, GV_NO_VENDOR_STATUS,
			"resubmitting a late wait failed (errno %d)", -rc);
		if (a)
			gv_await_done(a);
		return 1;
	}
end:
	gv_end(a, out, diag);
	gv_await_done(a);
	return 1;
}

/*
 * Ask the stream of every pending wait on @port without a backstop
 * timeout; cancel those whose stream failed (their CANCELLED record then
 * becomes the error record). The awaits are noted under the registry
 * lock and their streams asked outside it: a driver call never holds up
 * other threads' records, awaits and reaps. An await being asked about is
 * not freed, nor its record handed out, until the answer is in: the caller
 * may destroy its stream as soon as it has the record.
 */
#define GV_UNGUARDED_MAX 32

static void gv_check_unguarded(struct gpuar_port *port)
{
	struct {
		struct gv_await *a;
		void *stream;
		bool thread_relative;
		bool gone;
		enum gv_look look;
		unsigned int status;
	} seen[GV_UNGUARDED_MAX];
	uint64_t cancel[GV_UNGUARDED_MAX];
	uint32_t n = 0, ncancel = 0;

	struct gv_port_awaits *pa;

	pthread_mutex_lock(&gv_registry_lock);
	pa = gv_port_table(port, false);
	/* From where the last check stopped, so every await gets its turn. */
	for (uint32_t i = 0; pa && i < pa->nbuckets && n < GV_UNGUARDED_MAX; i++) {
		uint32_t k = (pa->cursor + i) & (pa->nbuckets - 1);

		for (struct gv_await *a = pa->buckets[k]; a; a = a->next) {
			if (a->failed || a->plan.park == GPUAR_PARK_FLAG)
				continue;
			a->queries++;	/* not freed, nor handed out, until answered */
			seen[n].a = a;
			seen[n].stream = a->stream;
			seen[n++].thread_relative = a->thread_relative;
			if (n == GV_UNGUARDED_MAX) {
				pa->cursor = k + 1;
				break;
			}
		}
	}
	pthread_mutex_unlock(&gv_registry_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct gv_await *a = seen[i].a;

		seen[i].status = 0;
		seen[i].look = gv_look(a->line, a->slot, a->target,
				       seen[i].stream, seen[i].thread_relative,
				       &seen[i].gone, &seen[i].status);
	}
	pthread_mutex_lock(&gv_registry_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct gv_await *a = seen[i].a;

		/* Not being resolved by a reaper meanwhile: ours to change. */
		if (!a->failed && a->listed &&
		    gv_look_apply(a, seen[i].look, seen[i].gone, seen[i].status))
			cancel[ncancel++] = a->user_data;
		a->queries--;
	}
	pthread_cond_broadcast(&gv_queries_done);
	pthread_mutex_unlock(&gv_registry_lock);
	for (uint32_t i = 0; i < ncancel; i++)
		gpuar_cancel(port, cancel[i]);	/* -EALREADY: it finished */
}

int gv_resolve_record(struct gpuar_port *port, const struct gpuar_record *rec,
		      struct gpuar_vendor_completion *out,
		      struct gpuar_error *diag)
{
	struct gv_await *a = gv_await_take(port, rec);

	if (!a) {
		memset(out, 0, sizeof(*out));
		out->record = *rec;
		return 1;
	}
	return gv_resolve(a, rec, out, diag);
}

GPUAR_EXPORT int gpuar_vendor_resolve(struct gpuar_port *port,
				      const struct gpuar_record *rec,
				      struct gpuar_vendor_completion *out,
				      struct gpuar_error *diag)
{
	gv_diag_clear(diag);
	if (!port || !rec || !out)
		return gv_refuse(diag, !port ? "port" : !rec ? "record" : "out");
	return gv_resolve_record(port, rec, out, diag);
}

#define GV_REAP_BATCH 32u

/*
 * Resolve into @out (room for @max) the records a reap of up to
 * GV_REAP_BATCH got, then reap without waiting while a batch came back
 * full and there is room: every record queued, up to @max. The first
 * batch is @recs' @n. Returns the completions (0: every record was
 * resubmitted).
 */
static uint32_t gv_reap_drain(struct gpuar_port *port,
			      struct gpuar_record *recs, int n, uint32_t asked,
			      struct gpuar_vendor_completion *out, uint32_t max,
			      struct gpuar_error *diag)
{
	uint32_t k = 0;

	for (;;) {
		for (int i = 0; i < n; i++)
			k += (uint32_t)gv_resolve_record(port, &recs[i], &out[k],
							 diag);
		if ((uint32_t)n < asked || k >= max)
			return k;
		asked = max - k < GV_REAP_BATCH ? max - k : GV_REAP_BATCH;
		n = gpuar_reap(port, recs, asked, 0);
		if (n <= 0)
			return k;
	}
}

int gv_reap(struct gv_backend *b, struct gpuar_port *port,
	    struct gpuar_vendor_completion *out, uint32_t max,
	    int64_t timeout_ns, struct gpuar_error *diag)
{
	struct gpuar_record recs[GV_REAP_BATCH];
	uint64_t deadline = 0;

	(void)b;	/* every handle's awaits on @port are resolved */
	gv_diag_clear(diag);
	if (!port || !out || !max)
		return -EINVAL;
	if (max > INT32_MAX)	/* the count is returned as an int */
		max = INT32_MAX;
	if (timeout_ns > 0)
		deadline = gpuar_now_ns() + (uint64_t)timeout_ns;
	for (;;) {
		uint32_t asked = max < GV_REAP_BATCH ? max : GV_REAP_BATCH;
		int64_t left = timeout_ns;
		uint32_t k;
		int n;

		if (timeout_ns > 0) {
			uint64_t now = gpuar_now_ns();

			if (now >= deadline)
				return -ETIME;
			left = (int64_t)(deadline - now);
		}
		if (left < 0 || left > GV_REAP_SLICE_NS)
			left = GV_REAP_SLICE_NS;
		n = gpuar_reap(port, recs, asked, left);
		if (n == -ETIME) {
			gv_check_unguarded(port);
			continue;
		}
		if (n == -EAGAIN && timeout_ns == 0)
			gv_check_unguarded(port);
		if (n < 0)
			return n;
		k = gv_reap_drain(port, recs, n, asked, out, max, diag);
		if (k)
			return (int)k;
		if (timeout_ns == 0)
			return -EAGAIN;
	}
}
