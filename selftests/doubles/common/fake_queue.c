// SPDX-License-Identifier: MIT
/* TEST DOUBLE: the fake streams' in-order queues (see fake_queue.h). */
#include "fake_queue.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often a fake wait-value looks at its word again. */
#define FQ_WAIT_POLL_NS 20000
#define FQ_STREAMS_MAX 1024

/* Every started stream, for fq_streams_touching. */
static pthread_mutex_t fq_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fq_stream *fq_registry[FQ_STREAMS_MAX];

static bool fq_registry_set(struct fq_stream *old, struct fq_stream *new);

void fq_domain_init(struct fq_domain *d)
{
	pthread_mutex_init(&d->lock, NULL);
	d->sticky = 0;
}

unsigned int fq_domain_error(struct fq_domain *d)
{
	unsigned int code;

	pthread_mutex_lock(&d->lock);
	code = d->sticky;
	pthread_mutex_unlock(&d->lock);
	return code;
}

void fq_domain_clear(struct fq_domain *d)
{
	pthread_mutex_lock(&d->lock);
	d->sticky = 0;
	pthread_mutex_unlock(&d->lock);
}

static void fq_domain_poison(struct fq_domain *d, unsigned int code)
{
	pthread_mutex_lock(&d->lock);
	if (!d->sticky)
		d->sticky = code;
	pthread_mutex_unlock(&d->lock);
}

static void fq_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts))
		;
}

/* A condition wait of at most 1 ms (callers look at a domain's sticky
 * error between waits, which nobody signals them). */
static void fq_cond_wait_1ms(pthread_cond_t *cond, pthread_mutex_t *lock)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(cond, lock, &ts);
}

static bool fq_wait_done(const struct fq_op *op)
{
	uint64_t word = __atomic_load_n(op->word, __ATOMIC_ACQUIRE);

	if (op->kind == FQ_WAIT_WRAPPING)
		return (int64_t)(word - op->value) >= 0;
	return (word & op->mask) >= op->value;
}

/* Run one op; false when the domain got (or was) poisoned meanwhile. */
static bool fq_run(struct fq_stream *s, const struct fq_op *op)
{
	switch (op->kind) {
	case FQ_WORK:
		fq_sleep_ns(op->ns);
		break;
	case FQ_WRITE:
		/*
		 * The store is the op's last touch of host memory, so it is
		 * done and the op stops counting as touching (current) in one
		 * hold of the lock: a host that sees the value and unregisters
		 * the page is safe, as on a device, and fq_streams_touching
		 * never counts a write whose store it could already see (a
		 * vCPU switch between the two made free_line_waits_for_
		 * pending_work fail under single-threaded TCG).
		 */
		pthread_mutex_lock(&s->lock);
		if (s->drop_writes) {
			s->drop_writes--;
			pthread_mutex_unlock(&s->lock);
			break;
		}
		__atomic_store_n(op->word, op->value, __ATOMIC_RELEASE);
		s->current = NULL;
		pthread_mutex_unlock(&s->lock);
		break;
	case FQ_WAIT_WRAPPING:
	case FQ_WAIT_PLAIN:
		while (!fq_wait_done(op)) {
			if (fq_domain_error(s->domain) ||
			    __atomic_load_n(&s->dropping, __ATOMIC_ACQUIRE))
				return false;
			fq_sleep_ns(FQ_WAIT_POLL_NS);
		}
		break;
	case FQ_FAULT:
		fq_domain_poison(s->domain, op->code);
		return false;
	case FQ_CALL: {
		unsigned int code = op->call(s, op->args);

		if (code) {
			fq_domain_poison(s->domain, code);
			return false;
		}
		break;
	}
	}
	return !fq_domain_error(s->domain);
}

static void *fq_worker(void *arg)
{
	struct fq_stream *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct fq_op *op;

		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head)
			break;
		op = s->head;
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		s->current = op;
		pthread_mutex_unlock(&s->lock);

		/* A poisoned domain drops its queued work, as a dead context
		 * does; so does a reset that destroyed the stream. */
		if (!fq_domain_error(s->domain) &&
		    !__atomic_load_n(&s->dropping, __ATOMIC_ACQUIRE))
			fq_run(s, op);

		if (op->finish)
			op->finish(op->args);
		pthread_mutex_lock(&s->lock);
		s->current = NULL;
		free(op);
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->lock);
	/* Retired: nobody joins; its ops are done, so it touches nothing. */
	if (s->retired)
		fq_registry_set(s, NULL);
	return NULL;
}

static bool fq_registry_set(struct fq_stream *old, struct fq_stream *new)
{
	bool done = false;

	pthread_mutex_lock(&fq_registry_lock);
	for (int i = 0; i < FQ_STREAMS_MAX && !done; i++) {
		if (fq_registry[i] == old) {
			fq_registry[i] = new;
			done = true;
		}
	}
	pthread_mutex_unlock(&fq_registry_lock);
	return done;
}

/*
 * A GPU is not one of the host's CPUs: a worker runs on the CPUs the
 * creating thread is not confined to, where there are any (a benchmark
 * pins its waiter to one CPU, and a worker sharing it would answer only
 * when the waiter is preempted), else on every CPU. Best effort: where the
 * system refuses, the worker keeps the creator's affinity.
 */
static void fq_place_worker(pthread_t worker)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t creator, set;

	CPU_ZERO(&creator);
	CPU_ZERO(&set);
	if (pthread_getaffinity_np(pthread_self(), sizeof(creator), &creator))
		return;
	for (long i = 0; i < cpus && i < CPU_SETSIZE; i++)
		if (!CPU_ISSET((int)i, &creator))
			CPU_SET((int)i, &set);
	if (!CPU_COUNT(&set))
		for (long i = 0; i < cpus && i < CPU_SETSIZE; i++)
			CPU_SET((int)i, &set);
	pthread_setaffinity_np(worker, sizeof(set), &set);
}

int fq_stream_start(struct fq_stream *s, struct fq_domain *d, int device)
{
	memset(s, 0, sizeof(*s));
	s->domain = d;
	s->device = device;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (!fq_registry_set(NULL, s))
		goto fail;
	if (pthread_create(&s->worker, NULL, fq_worker, s)) {
		fq_registry_set(s, NULL);
		goto fail;
	}
	fq_place_worker(s->worker);
	return 0;
fail:
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	return -1;
}

void fq_stream_stop(struct fq_stream *s)
{
	fq_registry_set(s, NULL);
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->worker, NULL);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}

/* Stop taking work: the worker drains the queue and leaves on its own. */
static void fq_stream_retire(struct fq_stream *s, unsigned int code,
			     bool drop)
{
	pthread_mutex_lock(&s->lock);
	if (s->retired) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	__atomic_store_n(&s->gone, code, __ATOMIC_RELEASE);
	__atomic_store_n(&s->dropping, drop, __ATOMIC_RELEASE);
	s->retired = true;
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_detach(s->worker);
}

void fq_stream_close_handle(struct fq_stream *s, unsigned int code)
{
	fq_stream_retire(s, code, false);
}

void fq_stream_kill(struct fq_stream *s, unsigned int code)
{
	fq_stream_retire(s, code, true);
}

unsigned int fq_stream_gone(struct fq_stream *s)
{
	return __atomic_load_n(&s->gone, __ATOMIC_ACQUIRE);
}

void fq_stream_drop_writes(struct fq_stream *s, unsigned int n)
{
	pthread_mutex_lock(&s->lock);
	s->drop_writes += n;
	pthread_mutex_unlock(&s->lock);
}

static int fq_stream_push(struct fq_stream *s, const struct fq_op *op)
{
	struct fq_op *copy = malloc(sizeof(*copy));

	if (!copy)
		return -1;
	*copy = *op;
	copy->next = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = copy;
	else
		s->head = copy;
	s->tail = copy;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

unsigned int fq_stream_enqueue(struct fq_stream *s, const struct fq_op *op,
			       unsigned int capture_refused,
			       unsigned int no_memory)
{
	unsigned int sticky = fq_domain_error(s->domain);

	if (fq_stream_gone(s))
		return fq_stream_gone(s);
	if (sticky)
		return sticky;
	if (op->kind != FQ_FAULT && fq_stream_capturing(s))
		return capture_refused;
	return fq_stream_push(s, op) ? no_memory : 0;
}

bool fq_stream_capturing(struct fq_stream *s)
{
	bool on;

	pthread_mutex_lock(&s->lock);
	on = s->capturing;
	pthread_mutex_unlock(&s->lock);
	return on;
}

unsigned int fq_stream_query(struct fq_stream *s, unsigned int not_ready)
{
	/* Idle first: a fault that drained the queue poisoned the domain
	 * before, so an idle stream's sticky error is seen after it. */
	bool idle = fq_stream_idle(s);
	unsigned int sticky = fq_domain_error(s->domain);

	if (fq_stream_gone(s))
		return fq_stream_gone(s);
	if (sticky)
		return sticky;
	return idle ? 0 : not_ready;
}

bool fq_stream_idle(struct fq_stream *s)
{
	bool idle;

	pthread_mutex_lock(&s->lock);
	idle = !s->head && !s->current;
	pthread_mutex_unlock(&s->lock);
	return idle;
}

unsigned int fq_stream_sync(struct fq_stream *s)
{
	unsigned int code;

	if (fq_stream_gone(s))
		return fq_stream_gone(s);
	pthread_mutex_lock(&s->lock);
	/* Timed, so a fault in another stream of the domain is seen. */
	while ((s->head || s->current) && !fq_domain_error(s->domain))
		fq_cond_wait_1ms(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	code = fq_domain_error(s->domain);
	return code;
}

static bool fq_op_touches(const struct fq_op *op, uintptr_t lo, uintptr_t hi)
{
	uintptr_t w = (uintptr_t)op->word;

	if (op->kind != FQ_WRITE && op->kind != FQ_WAIT_WRAPPING &&
	    op->kind != FQ_WAIT_PLAIN)
		return false;
	return w >= lo && w < hi;
}

static bool fq_stream_touches(struct fq_stream *s, const void *addr,
			      uint64_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + (uintptr_t)len;
	bool hit = false;
	struct fq_op *op;

	pthread_mutex_lock(&s->lock);
	if (s->current && fq_op_touches(s->current, lo, hi))
		hit = true;
	for (op = s->head; op && !hit; op = op->next)
		hit = fq_op_touches(op, lo, hi);
	pthread_mutex_unlock(&s->lock);
	return hit;
}

unsigned int fq_streams_touching(const void *addr, uint64_t len)
{
	unsigned int n = 0;

	pthread_mutex_lock(&fq_registry_lock);
	for (int i = 0; i < FQ_STREAMS_MAX; i++)
		n += fq_registry[i] && fq_stream_touches(fq_registry[i], addr, len);
	pthread_mutex_unlock(&fq_registry_lock);
	return n;
}

unsigned int fq_stream_error(struct fq_stream *s)
{
	return fq_domain_error(s->domain);
}

struct fq_thread_streams {
	struct fq_thread_streams *next;
	void *stream[FQ_THREAD_STREAM_DEVICES];
};

static pthread_once_t fq_thread_streams_once = PTHREAD_ONCE_INIT;
static pthread_key_t fq_thread_streams_key;
static struct fq_thread_streams *fq_thread_streams_all;

static void fq_thread_streams_key_make(void)
{
	pthread_key_create(&fq_thread_streams_key, NULL);
}

void **fq_thread_stream_slot(int device)
{
	struct fq_thread_streams *t;

	pthread_once(&fq_thread_streams_once, fq_thread_streams_key_make);
	t = pthread_getspecific(fq_thread_streams_key);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		pthread_mutex_lock(&fq_registry_lock);
		t->next = fq_thread_streams_all;
		fq_thread_streams_all = t;
		pthread_mutex_unlock(&fq_registry_lock);
		pthread_setspecific(fq_thread_streams_key, t);
	}
	return &t->stream[device];
}

struct fq_event *fq_event_new(void)
{
	struct fq_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	e->refs = 1;
	return e;
}

/* Take a reference for an op about to be queued. */
static void fq_event_get(struct fq_event *e)
{
	pthread_mutex_lock(&e->lock);
	e->refs++;
	pthread_mutex_unlock(&e->lock);
}

void fq_event_release(struct fq_event *e)
{
	bool last;

	pthread_mutex_lock(&e->lock);
	last = --e->refs == 0;
	pthread_mutex_unlock(&e->lock);
	if (!last)
		return;
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

/* A queued record or wait ran or was dropped: its reference goes. */
static void fq_event_op_finish(const uint64_t *args)
{
	fq_event_release((struct fq_event *)(uintptr_t)args[0]);
}

static unsigned int fq_event_fire(struct fq_stream *s, const uint64_t *args)
{
	struct fq_event *e = (struct fq_event *)(uintptr_t)args[0];

	(void)s;
	pthread_mutex_lock(&e->lock);
	if (args[1] > e->fired)
		e->fired = args[1];
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

unsigned int fq_event_record(struct fq_event *e, struct fq_stream *s,
			     unsigned int capture_refused,
			     unsigned int no_memory)
{
	struct fq_op op = { .kind = FQ_CALL, .call = fq_event_fire,
			    .finish = fq_event_op_finish };
	unsigned int rc;

	fq_event_get(e);
	pthread_mutex_lock(&e->lock);
	op.args[0] = (uint64_t)(uintptr_t)e;
	op.args[1] = ++e->recorded;
	e->domain = s->domain;
	rc = fq_stream_enqueue(s, &op, capture_refused, no_memory);
	if (rc)
		e->recorded--;
	pthread_mutex_unlock(&e->lock);
	if (rc)
		fq_event_release(e);
	return rc;
}

/* Until @e reaches record @target or its domain dies (timed, so a fault
 * that drops the record is seen). Called with e->lock held. */
static unsigned int fq_event_wait_locked(struct fq_event *e, uint64_t target)
{
	unsigned int rc = 0;

	while (e->fired < target) {
		if (e->domain && (rc = fq_domain_error(e->domain)))
			break;
		fq_cond_wait_1ms(&e->cond, &e->lock);
	}
	return rc;
}

static unsigned int fq_event_await(struct fq_stream *s, const uint64_t *args)
{
	struct fq_event *e = (struct fq_event *)(uintptr_t)args[0];
	unsigned int rc;

	(void)s;
	pthread_mutex_lock(&e->lock);
	rc = fq_event_wait_locked(e, args[1]);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

unsigned int fq_stream_wait_event(struct fq_stream *s, struct fq_event *e,
				  unsigned int capture_refused,
				  unsigned int no_memory)
{
	struct fq_op op = { .kind = FQ_CALL, .call = fq_event_await,
			    .finish = fq_event_op_finish };
	unsigned int rc;

	fq_event_get(e);
	pthread_mutex_lock(&e->lock);
	op.args[0] = (uint64_t)(uintptr_t)e;
	op.args[1] = e->recorded;
	pthread_mutex_unlock(&e->lock);
	rc = fq_stream_enqueue(s, &op, capture_refused, no_memory);
	if (rc)
		fq_event_release(e);
	return rc;
}

unsigned int fq_event_sync(struct fq_event *e)
{
	unsigned int rc;

	pthread_mutex_lock(&e->lock);
	rc = fq_event_wait_locked(e, e->recorded);
	pthread_mutex_unlock(&e->lock);
	return rc;
}

unsigned int fq_event_query(struct fq_event *e, unsigned int not_ready)
{
	unsigned int rc;

	pthread_mutex_lock(&e->lock);
	rc = e->domain ? fq_domain_error(e->domain) : 0;
	if (!rc && e->fired < e->recorded)
		rc = not_ready;
	pthread_mutex_unlock(&e->lock);
	return rc;
}

#define FQ_CAPTURES_MAX 16
static pthread_mutex_t fq_capture_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fq_stream *fq_captures[FQ_CAPTURES_MAX];
static FQ_THREAD_LOCAL unsigned int fq_thread_mode;	/* FQ_CAPTURE_GLOBAL */

unsigned int fq_capture_exchange_mode(unsigned int mode)
{
	unsigned int old = fq_thread_mode;

	fq_thread_mode = mode;
	return old;
}

bool fq_capture_begin(struct fq_stream *s, unsigned int mode)
{
	bool done = false;

	pthread_mutex_lock(&fq_capture_lock);
	for (int i = 0; i < FQ_CAPTURES_MAX && !done && !fq_stream_capturing(s); i++) {
		if (fq_captures[i])
			continue;
		fq_captures[i] = s;
		pthread_mutex_lock(&s->lock);
		s->capturing = true;
		s->capture_mode = mode;
		s->capture_thread = pthread_self();
		s->capture_invalidated = false;
		pthread_mutex_unlock(&s->lock);
		done = true;
	}
	pthread_mutex_unlock(&fq_capture_lock);
	return done;
}

bool fq_capture_end(struct fq_stream *s, bool *invalidated)
{
	bool was;

	pthread_mutex_lock(&fq_capture_lock);
	for (int i = 0; i < FQ_CAPTURES_MAX; i++)
		if (fq_captures[i] == s)
			fq_captures[i] = NULL;
	pthread_mutex_lock(&s->lock);
	was = s->capturing;
	*invalidated = s->capture_invalidated;
	s->capturing = false;
	s->capture_invalidated = false;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&fq_capture_lock);
	return was;
}

bool fq_capture_invalidated(struct fq_stream *s)
{
	bool inv;

	pthread_mutex_lock(&s->lock);
	inv = s->capturing && s->capture_invalidated;
	pthread_mutex_unlock(&s->lock);
	return inv;
}

bool fq_capture_permits_unsafe_call(void)
{
	pthread_t self = pthread_self();
	bool permitted = true;

	if (fq_thread_mode == FQ_CAPTURE_RELAXED)
		return true;
	pthread_mutex_lock(&fq_capture_lock);
	for (int i = 0; i < FQ_CAPTURES_MAX; i++) {
		struct fq_stream *c = fq_captures[i];
		bool prohibits;

		if (!c)
			continue;
		pthread_mutex_lock(&c->lock);
		prohibits = pthread_equal(c->capture_thread, self) ?
			    c->capture_mode != FQ_CAPTURE_RELAXED :
			    fq_thread_mode == FQ_CAPTURE_GLOBAL &&
			    c->capture_mode == FQ_CAPTURE_GLOBAL;
		if (prohibits) {
			c->capture_invalidated = true;
			permitted = false;
		}
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&fq_capture_lock);
	return permitted;
}

bool fq_env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}
