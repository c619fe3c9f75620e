// SPDX-License-Identifier: MIT
/*
 * Vendor line pages: a gpuar line registered for the device, its per-slot
 * sequence numbers, recording, the reverse direction, and freeing only
 * once the device can no longer touch the page.
 */
#include <errno.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "port.h"	/* gpuar_line_keep */
#include "vendor.h"

/* How often freeing a line looks at the streams again while they settle. */
#define GV_SETTLE_POLL_NS 100000ull

/*
 * Lines leaked on purpose (the device may still touch them) stay on this
 * list for the life of the process: never freed, never reused, and still
 * reachable, so leak checkers report only real leaks.
 */
static pthread_mutex_t gv_leak_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpuar_vendor_line *gv_leaked;

/*
 * Lines allocated and neither freed nor leaked yet, so that a port closed
 * before its lines (gv_lines_port_closed) finds them.
 */
static pthread_mutex_t gv_lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpuar_vendor_line *gv_lines;

static void gv_line_list(struct gpuar_vendor_line *l)
{
	pthread_mutex_lock(&gv_lines_lock);
	l->live_next = gv_lines;
	gv_lines = l;
	pthread_mutex_unlock(&gv_lines_lock);
}

static void gv_line_unlist(struct gpuar_vendor_line *l)
{
	pthread_mutex_lock(&gv_lines_lock);
	for (struct gpuar_vendor_line **pp = &gv_lines; *pp; pp = &(*pp)->live_next) {
		if (*pp == l) {
			*pp = l->live_next;
			break;
		}
	}
	pthread_mutex_unlock(&gv_lines_lock);
}

/*
 * @port is closing with vendor lines still on it (the caller skipped
 * gpuar_cuda_line_free): the device may still store into their pages, so
 * each keeps its page (gpuar_line_keep: the port neither unmaps nor frees
 * it) and is marked port_closed. Its awaits went with the port's table.
 * Freeing the line later waits for the device as ever, then unmaps.
 */
void gv_lines_port_closed(struct gpuar_port *port)
{
	pthread_mutex_lock(&gv_lines_lock);
	for (struct gpuar_vendor_line *l = gv_lines; l; l = l->live_next) {
		if (l->port != port || l->port_closed)
			continue;
		gpuar_line_keep(port, l->line);
		l->port_closed = true;
		gv_line_awaits_forget(l);
	}
	pthread_mutex_unlock(&gv_lines_lock);
}

/* A kept line's page and struct, once the device is done with it. */
static void gv_line_unmap_kept(struct gpuar_vendor_line *l)
{
	munmap(l->line->words, l->page_bytes);
	free(l->line);	/* a kept line's struct is its keeper's (port.h) */
}

static void gv_line_leak(struct gpuar_vendor_line *l)
{
	gv_line_unlist(l);
	l->b->leaked_lines++;
	pthread_mutex_lock(&gv_leak_lock);
	l->leaked_next = gv_leaked;
	gv_leaked = l;
	pthread_mutex_unlock(&gv_leak_lock);
}

/*
 * Leak a line the device may still store into: its gpuar line is kept
 * too, detached from its port, so closing the port later neither unmaps
 * the page nor lets its address range be reused while the device's
 * registration (and a late store) still covers it.
 */
static void gv_line_keep(struct gpuar_vendor_line *l)
{
	if (!l->port_closed)	/* else its closing port kept it already */
		gpuar_line_keep(l->port, l->line);
	gv_line_leak(l);
}

void gv_backend_init(struct gv_backend *b, const struct gv_ops *ops, int device)
{
	memset(b, 0, sizeof(*b));
	b->ops = ops;
	b->device = device;
	pthread_mutex_init(&b->lock, NULL);
	pthread_mutex_init(&b->event_lock, NULL);
}

void gv_backend_destroy(struct gv_backend *b)
{
	gv_awaits_drop(b);
	pthread_mutex_destroy(&b->event_lock);
	pthread_mutex_destroy(&b->lock);
}

static uint64_t *gv_fence_word(struct gpuar_vendor_line *l, uint32_t i)
{
	return &l->words[GV_FENCE_WORD0 + i];
}

int gv_line_alloc(struct gv_backend *b, struct gpuar_port *port,
		  struct gpuar_vendor_line **out, struct gpuar_error *diag)
{
	struct gpuar_vendor_line *l;
	unsigned int st;
	int rc;

	gv_diag_clear(diag);
	if (!port || !out)
		return gv_fail(b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "line_alloc needs a port and an out pointer");
	l = calloc(1, sizeof(*l));
	if (!l)
		return gv_fail(b, diag, ENOMEM, GV_NO_VENDOR_STATUS,
			       "out of memory for a line");
	l->b = b;
	l->port = port;
	l->page_bytes = (size_t)sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&l->lock, NULL);
	rc = gpuar_line_alloc(port, &l->line);
	if (rc) {
		gv_fail(b, diag, -rc, GV_NO_VENDOR_STATUS,
			"gpuar_line_alloc failed (errno %d)", -rc);
		goto err_free;
	}
	l->words = gpuar_line_words(l->line);
	st = b->ops->line_hold(b);
	if (st) {
		rc = gv_vendor_fail(b, diag, st, "retaining the device context");
		goto err_line;
	}
	/* The whole page: the line sits alone in it, nothing else shares it. */
	st = b->ops->page_register(b, l->words, l->page_bytes, &l->devaddr);
	if (st) {
		rc = gv_vendor_fail(b, diag, st, "registering the line page");
		goto err_hold;
	}
	for (int i = 0; i < GPUAR_LINE_SLOTS; i++)
		l->seq[i] = gpuar_word_load(&l->words[i]);
	for (uint32_t i = 0; i < GV_FENCES; i++)
		l->fence_seq[i] = gpuar_word_load(gv_fence_word(l, i));
	gv_observe_ports_once();
	gv_line_list(l);
	*out = l;
	return 0;

err_hold:
	b->ops->line_release(b);
err_line:
	gpuar_line_free(port, l->line);
err_free:
	pthread_mutex_destroy(&l->lock);
	free(l);
	return rc;
}

static uint64_t gv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Clear the busy bits of fences whose store has landed. Under l->lock. */
static void gv_fences_reap(struct gpuar_vendor_line *l)
{
	for (uint32_t i = 0; i < GV_FENCES; i++)
		if ((l->fence_busy >> i & 1) &&
		    gpuar_reached(gpuar_word_load(gv_fence_word(l, i)), l->fence_seq[i]))
			l->fence_busy &= ~(1ull << i);
}

/*
 * The domain's first sticky status, asking the domain's own default
 * stream (never a caller's stream) when none has been seen yet.
 */
static unsigned int gv_domain_poisoned(struct gv_backend *b)
{
	unsigned int st;

	pthread_mutex_lock(&b->lock);
	st = b->sticky;
	pthread_mutex_unlock(&b->lock);
	if (st)
		return st;
	st = gv_query(b, b->ops->domain_stream);
	return st && st != b->ops->not_ready && b->ops->status_sticky(st) ?
	       st : 0;
}

/*
 * Whether the device will never store into @l again although stores are
 * pending: its context (device) is poisoned, or a reset destroyed the
 * page's registration and the pending work with it. The status in *@bad,
 * what happened in *@what.
 */
bool gv_line_lost(struct gpuar_vendor_line *l, unsigned int *bad,
		  const char **what)
{
	struct gv_backend *b = l->b;

	*bad = gv_domain_poisoned(b);
	if (*bad) {
		*what = "the device's context failed, so its device "
			"operations may never finish";
		return true;
	}
	*bad = b->ops->page_registered(b, l->words, l->devaddr);
	if (*bad) {
		*what = "the device's registration of the line is gone (a "
			"device or context reset destroyed it, and the stores "
			"it had pending with it)";
		return true;
	}
	return false;
}

/*
 * 1 when no device operation can touch the page any more, judged from
 * the line's own words only: every store the backend enqueued has landed
 * (a slot's word reached its last sequence number, each fence behind a
 * reverse wait reached its number). No stream of the caller is asked: it
 * may have been destroyed while its work still finishes. 0 while
 * something is pending. Negative when it never will be: the device's
 * context is poisoned or was reset (gv_line_lost), or a reverse wait
 * could not be fenced.
 */
static int gv_line_settled(struct gpuar_vendor_line *l, unsigned int *bad,
			   const char **what)
{
	int settled = 1;

	pthread_mutex_lock(&l->lock);
	for (int i = 0; i < GPUAR_LINE_SLOTS; i++)
		if (l->owned[i] && !gpuar_reached(gpuar_word_load(&l->words[i]), l->seq[i]))
			settled = 0;
	gv_fences_reap(l);
	if (l->fence_busy)
		settled = 0;
	if (l->unfenced) {
		*bad = GV_NO_VENDOR_STATUS;
		*what = "a reverse wait could not be fenced, so when the "
			"device stops reading the line is unknown";
		settled = -1;
	}
	pthread_mutex_unlock(&l->lock);
	if (!settled && gv_line_lost(l, bad, what))
		settled = -1;
	return settled;
}

int gv_line_free(struct gpuar_vendor_line *l, uint64_t timeout_ns,
		 struct gpuar_error *diag)
{
	struct gv_backend *b;
	uint64_t deadline;
	unsigned int bad = 0;
	const char *what = NULL;
	int settled, rc;

	gv_diag_clear(diag);
	if (!l)
		return 0;
	b = l->b;
	rc = (int)gv_line_awaits(l);
	if (rc)
		return gv_fail(b, diag, EBUSY, GV_NO_VENDOR_STATUS,
			       "line has %d awaits not yet reaped; reap them first",
			       rc);

	/* UINT64_MAX is forever: a sum that would wrap saturates. */
	deadline = gpuar_add_sat(gv_now(), timeout_ns);
	while ((settled = gv_line_settled(l, &bad, &what)) == 0) {
		struct timespec ts = { 0, (long)GV_SETTLE_POLL_NS };

		if (gv_now() >= deadline)
			break;
		nanosleep(&ts, NULL);
	}
	/* Never unregister or unmap a page the device may still touch: leak
	 * it (page, registration, context reference) and say so. */
	if (settled < 0) {
		gv_line_keep(l);
		if (bad != GV_NO_VENDOR_STATUS)
			gv_vendor_fail(b, diag, bad, "freeing a line");
		return gv_fail(b, diag, EIO, bad, "line leaked, not freed: %s",
			       what);
	}
	if (!settled) {
		gv_line_keep(l);
		return gv_fail(b, diag, ETIMEDOUT, GV_NO_VENDOR_STATUS,
			       "line leaked, not freed: device operations on it "
			       "still pending after %llu ns",
			       (unsigned long long)timeout_ns);
	}
	bad = b->ops->page_unregister(b, l->words);
	if (bad) {
		gv_line_keep(l);
		rc = gv_vendor_fail(b, diag, bad, "unregistering the line page");
		return rc;
	}
	b->ops->line_release(b);
	if (l->port_closed) {
		gv_line_unlist(l);
		gv_line_unmap_kept(l);
		pthread_mutex_destroy(&l->lock);
		free(l);
		return 0;
	}
	/*
	 * A reaper spinning or parked on the line's words holds it busy for a
	 * moment: wait that out (to the same deadline) rather than leak.
	 */
	while ((rc = gpuar_line_free(l->port, l->line)) == -EBUSY &&
	       gv_now() < deadline) {
		struct timespec ts = { 0, (long)GV_SETTLE_POLL_NS };

		nanosleep(&ts, NULL);
	}
	if (rc) {
		/* The port still has waits on it: the page stays mapped, but it
		 * is no longer the device's. */
		gv_line_leak(l);
		return gv_fail(b, diag, -rc, GV_NO_VENDOR_STATUS,
			       "line unregistered from the device but gpuar_line_free "
			       "failed (errno %d): port waits on it are pending", -rc);
	}
	gv_line_unlist(l);
	pthread_mutex_destroy(&l->lock);
	free(l);
	return 0;
}

static int gv_check_slot(struct gpuar_vendor_line *l, uint32_t slot,
			 struct gpuar_error *diag)
{
	if (!l)
		return -EINVAL;
	if (l->port_closed)
		return gv_fail(l->b, diag, EBADF, GV_NO_VENDOR_STATUS,
			       "the line's port was closed before it: free the "
			       "line, it takes no more stores or waits");
	if (slot >= GPUAR_LINE_SLOTS)
		return gv_fail(l->b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "slot %u out of range (0..%d)", slot,
			       GPUAR_LINE_SLOTS - 1);
	return 0;
}

static unsigned int gv_store_default(struct gv_backend *b, void *stream,
				     uint64_t devaddr, uint64_t value, void *arg)
{
	(void)arg;
	return b->ops->stream_call(b, GV_WRITE_VALUE, stream, devaddr, value);
}

int gv_record_store(struct gpuar_vendor_line *l, uint32_t slot, void *stream,
		    const struct gv_store *store, struct gv_stream_id *idp,
		    uint64_t *target, struct gpuar_error *diag)
{
	static const struct gv_store plain = { .enqueue = gv_store_default };
	struct gv_stream_id own = { 0 }, *id = idp ? idp : &own;
	struct gv_backend *b;
	uint64_t next;
	unsigned int st;
	int rc;

	gv_diag_clear(diag);
	rc = gv_check_slot(l, slot, diag);
	if (rc)
		return rc;
	b = l->b;
	if (!store)
		store = &plain;
	rc = b->ops->stream_admit(b, stream, id, diag);
	if (rc)
		return rc;
	/* Under the line's lock: two records into one slot enqueue their
	 * stores in the order of their numbers. */
	pthread_mutex_lock(&l->lock);
	if (l->owned[slot] && l->owner[slot] != id->key &&
	    !gpuar_reached(gpuar_word_load(&l->words[slot]), l->seq[slot])) {
		pthread_mutex_unlock(&l->lock);
		return gv_fail(b, diag, EBUSY, GV_NO_VENDOR_STATUS,
			       "slot %u still has stores pending from another "
			       "stream; one stream per slot until they land",
			       slot);
	}
	next = l->seq[slot] + 1;
	st = store->enqueue(b, stream, l->devaddr + slot * sizeof(uint64_t),
			    next, store->arg);
	if (!st) {
		l->seq[slot] = next;
		l->owner[slot] = id->key;
		l->owned[slot] = true;
	}
	pthread_mutex_unlock(&l->lock);
	if (st && b->ops->status_not_now(st))
		return gv_fail(b, diag, EBUSY, st,
			       "a graph capture in progress forbade enqueueing "
			       "the word store; record after it ends");
	if (st)
		return gv_vendor_fail(b, diag, st, "enqueueing the word store");
	if (target)
		*target = next;
	return 0;
}

int gv_record(struct gpuar_vendor_line *l, uint32_t slot, void *stream,
	      uint64_t *target, struct gpuar_error *diag)
{
	return gv_record_store(l, slot, stream, NULL, NULL, target, diag);
}

void gv_slot_lost(struct gpuar_vendor_line *l, uint32_t slot, uint64_t target)
{
	pthread_mutex_lock(&l->lock);
	if (l->owned[slot] && l->seq[slot] == target)
		l->owned[slot] = false;
	pthread_mutex_unlock(&l->lock);
}

GPUAR_EXPORT uint64_t *gpuar_vendor_line_words(const struct gpuar_vendor_line *l)
{
	return l ? l->words : NULL;
}

GPUAR_EXPORT uint64_t gpuar_vendor_line_device_address(const struct gpuar_vendor_line *l)
{
	return l ? l->devaddr : 0;
}

GPUAR_EXPORT struct gpuar_line *gpuar_vendor_line_gpuar(const struct gpuar_vendor_line *l)
{
	return l ? l->line : NULL;
}

GPUAR_EXPORT uint64_t gpuar_vendor_line_sequence(const struct gpuar_vendor_line *l,
						 uint32_t slot)
{
	struct gpuar_vendor_line *m = (struct gpuar_vendor_line *)l;
	uint64_t v;

	if (!l || slot >= GPUAR_LINE_SLOTS)
		return 0;
	pthread_mutex_lock(&m->lock);
	v = m->seq[slot];
	pthread_mutex_unlock(&m->lock);
	return v;
}

GPUAR_EXPORT int gpuar_vendor_line_set_sequence(struct gpuar_vendor_line *l, uint32_t slot,
						uint64_t value)
{
	int rc = 0;

	if (!l || slot >= GPUAR_LINE_SLOTS)
		return -EINVAL;
	pthread_mutex_lock(&l->lock);
	if (l->owned[slot] &&
	    !gpuar_reached(gpuar_word_load(&l->words[slot]), l->seq[slot])) {
		rc = -EBUSY;
	} else {
		__atomic_store_n(&l->words[slot], value, __ATOMIC_RELEASE);
		l->seq[slot] = value;
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

int gv_stream_wait_word(struct gpuar_vendor_line *l, uint32_t slot,
			void *stream, uint64_t target, struct gpuar_error *diag)
{
	struct gv_backend *b;
	uint32_t fence;
	unsigned int st;
	int rc;

	gv_diag_clear(diag);
	rc = gv_check_slot(l, slot, diag);
	if (rc)
		return rc;
	b = l->b;
	rc = b->ops->stream_admit(b, stream, &(struct gv_stream_id){ 0 }, diag);
	if (rc)
		return rc;
	if (!b->ops->wait_wraps) {
		uint64_t now = gpuar_word_load(&l->words[slot]);

		/* A plain >= disagrees with wrapping order once the way from
		 * the word to the target crosses 2^64: the device would go
		 * early or never. Refuse rather than release work early. */
		if ((now >= target) != gpuar_reached(now, target))
			return gv_fail(b, diag, ERANGE, GV_NO_VENDOR_STATUS,
				       "reverse wait for %llu with the word at %llu "
				       "crosses 2^64; %s compares plainly, not in "
				       "wrapping order: restart the sequence "
				       "(gpuar_vendor_line_set_sequence)",
				       (unsigned long long)target,
				       (unsigned long long)now, b->ops->name);
	}
	pthread_mutex_lock(&l->lock);
	gv_fences_reap(l);
	if (l->fence_busy == ~0ull) {
		pthread_mutex_unlock(&l->lock);
		return gv_fail(b, diag, ENOSPC, GV_NO_VENDOR_STATUS,
			       "%d reverse waits on this line still pending",
			       GV_FENCES);
	}
	fence = (uint32_t)__builtin_ctzll(~l->fence_busy);
	st = b->ops->stream_call(b, GV_WAIT_VALUE, stream,
				 l->devaddr + slot * sizeof(uint64_t), target);
	if (!st) {
		uint64_t next = l->fence_seq[fence] + 1;

		/* Behind the wait on the same stream: it lands once the
		 * device no longer reads the slot. */
		st = b->ops->stream_call(b, GV_WRITE_VALUE, stream,
					 l->devaddr + (GV_FENCE_WORD0 + fence) *
					 sizeof(uint64_t), next);
		if (st) {
			l->unfenced = true;
		} else {
			l->fence_seq[fence] = next;
			l->fence_busy |= 1ull << fence;
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (st)
		return gv_vendor_fail(b, diag, st, "enqueueing the word wait");
	return 0;
}

int gv_stream_status(struct gv_backend *b, void *stream,
		     struct gpuar_error *diag)
{
	unsigned int st = gv_query(b, stream);

	if (!st)
		return 0;
	/* A capture elsewhere forbade the query: ask again later. */
	if (st == b->ops->not_ready || b->ops->status_not_now(st))
		return 1;
	return gv_vendor_fail(b, diag, st, "querying the stream");
}

int gv_stream_synchronize(struct gv_backend *b, void *stream,
			  struct gpuar_error *diag)
{
	unsigned int st = b->ops->stream_call(b, GV_SYNCHRONIZE, stream, 0,
					      0);

	if (st && b->ops->status_not_now(st))
		return gv_fail(b, diag, EBUSY, st,
			       "a graph capture in progress forbade "
			       "synchronizing the stream");
	return st ? gv_vendor_fail(b, diag, st, "synchronizing the stream") : 0;
}

/*
 * The slot's owner key while stores of its stream are pending in it, else
 * false: a second stream's store could land first and move the word back.
 */
static bool gv_slot_busy_with(struct gpuar_vendor_line *l, uint32_t slot,
			      uint64_t *key)
{
	bool busy;

	pthread_mutex_lock(&l->lock);
	busy = l->owned[slot] &&
	       !gpuar_reached(gpuar_word_load(&l->words[slot]), l->seq[slot]);
	*key = l->owner[slot];
	pthread_mutex_unlock(&l->lock);
	return busy;
}

/*
 * The private stream for an event await on @slot of @l, from the
 * backend's pool: the one the slot's pending stores are on (they must
 * land in order), else the first idle one, else a new one (up to
 * GV_EVENT_STREAMS), else the next in turn. So an event await waits only
 * for its own event, unless GV_EVENT_STREAMS others are pending at once.
 * Driver calls (queries, a create) are made outside the pool's lock.
 */
static int gv_event_stream(struct gpuar_vendor_line *l, uint32_t slot,
			   void **out, struct gpuar_error *diag)
{
	struct gv_backend *b = l->b;
	void *pool[GV_EVENT_STREAMS], *s = NULL;
	struct gv_stream_id id = { 0 };
	uint64_t owner;
	bool busy = gv_slot_busy_with(l, slot, &owner);
	uint32_t n;
	unsigned int st;
	int rc;

	pthread_mutex_lock(&b->event_lock);
	n = b->nevent_streams;
	for (uint32_t i = 0; i < n; i++) {
		pool[i] = b->event_streams[i];
		if (busy && b->event_keys[i] == owner)
			s = pool[i];
	}
	pthread_mutex_unlock(&b->event_lock);
	for (uint32_t i = 0; !s && i < n; i++) {
		st = gv_query(b, pool[i]);
		/* idle (or failed: the record will say so) */
		if (st != b->ops->not_ready && !b->ops->status_not_now(st))
			s = pool[i];
	}
	if (s) {
		*out = s;
		return 0;
	}
	if (n == GV_EVENT_STREAMS) {
		pthread_mutex_lock(&b->event_lock);
		*out = b->event_streams[b->event_next++ % GV_EVENT_STREAMS];
		pthread_mutex_unlock(&b->event_lock);
		return 0;
	}
	st = b->ops->stream_create(b, &s);
	if (st)
		return gv_vendor_fail(b, diag, st, "creating a private stream");
	rc = b->ops->stream_admit(b, s, &id, diag);
	pthread_mutex_lock(&b->event_lock);
	if (!rc && b->nevent_streams < GV_EVENT_STREAMS) {
		b->event_keys[b->nevent_streams] = id.key;
		b->event_streams[b->nevent_streams++] = s;
		*out = s;
		s = NULL;
	} else if (!rc) {	/* the pool filled meanwhile */
		*out = b->event_streams[b->event_next++ % GV_EVENT_STREAMS];
	}
	pthread_mutex_unlock(&b->event_lock);
	if (s)
		b->ops->stream_destroy(b, s);
	return rc;
}

void gv_event_streams_destroy(struct gv_backend *b)
{
	for (uint32_t i = 0; i < b->nevent_streams; i++)
		b->ops->stream_destroy(b, b->event_streams[i]);
	b->nevent_streams = 0;
}

struct gv_event_store {
	void *event;
};

/* Behind the event on the private stream, then the default store. */
static unsigned int gv_store_after_event(struct gv_backend *b, void *stream,
					 uint64_t devaddr, uint64_t value,
					 void *arg)
{
	struct gv_event_store *e = arg;
	unsigned int st = b->ops->stream_call(b, GV_WAIT_EVENT, stream, 0,
					      (uint64_t)(uintptr_t)e->event);

	return st ? st : gv_store_default(b, stream, devaddr, value, NULL);
}

int gv_await_event(struct gpuar_vendor_line *l, uint32_t slot, void *event,
		   const struct gpuar_plan *plan, uint64_t point,
		   uint64_t user_data, uint64_t *target,
		   struct gpuar_error *diag)
{
	struct gv_event_store e = { .event = event };
	struct gv_store store = { .enqueue = gv_store_after_event, .arg = &e };
	void *stream = NULL;
	int rc;

	gv_diag_clear(diag);
	rc = gv_check_slot(l, slot, diag);
	if (rc)
		return rc;
	if (!event)
		return gv_fail(l->b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "await_event needs an event");
	rc = gv_event_stream(l, slot, &stream, diag);
	if (rc)
		return rc;
	return gv_await_store(l, slot, stream, &store, plan, point, user_data,
			      target, diag);
}
