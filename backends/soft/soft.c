// SPDX-License-Identifier: MIT
/*
 * The soft backend: a CPU thread that stores values into words at given
 * times, like a device behind its work: it sleeps (slack-free) until just
 * before a store is due, spins the last stretch, then stores with release
 * semantics and notes the time. Pending stores wait in a min-heap by
 * time (then scheduling order); made ones leave it for a bounded history
 * of their times, so a long-lived producer costs O(log n) a store and
 * bounded memory.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* Sleep until this long before a store, then spin (wake-up jitter). */
#define SOFT_SPIN_NS 50000ULL

/* Made stores whose time gpuar_soft_stored_at() still knows. */
#define SOFT_HISTORY 4096

struct soft_store {
	u64 at;
	u64 seq;		/* scheduling order: stores due together */
	uint64_t *word;
	u64 value;
};

struct soft_made {
	const uint64_t *word;
	u64 value;
	u64 stored_at;
};

struct gpuar_soft_producer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;	/* a store was scheduled, made, or stop */
	struct soft_store *heap;	/* pending, a min-heap by (at, seq) */
	u32 len, cap;
	u64 seq;
	struct soft_made *history;	/* ring of the last SOFT_HISTORY made */
	u32 hist_head, hist_len;
	u64 made;
	int fail_error;
	u64 fail_at;
	bool stop;
};

static bool store_before(const struct soft_store *a, const struct soft_store *b)
{
	return a->at != b->at ? a->at < b->at : a->seq < b->seq;
}

static void heap_push(struct gpuar_soft_producer *p, struct soft_store s)
{
	u32 i = p->len++;

	while (i && store_before(&s, &p->heap[(i - 1) / 2])) {
		p->heap[i] = p->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	p->heap[i] = s;
}

static void heap_pop(struct gpuar_soft_producer *p)
{
	struct soft_store last = p->heap[--p->len];
	u32 i = 0, c;

	while ((c = 2 * i + 1) < p->len) {
		if (c + 1 < p->len && store_before(&p->heap[c + 1], &p->heap[c]))
			c++;
		if (!store_before(&p->heap[c], &last))
			break;
		p->heap[i] = p->heap[c];
		i = c;
	}
	if (p->len)
		p->heap[i] = last;
}

/* The pending store due first (stable for equal times); NULL if none. */
static struct soft_store *next_store(struct gpuar_soft_producer *p)
{
	return p->len ? &p->heap[0] : NULL;
}

static void timespec_at(struct timespec *ts, u64 ns)
{
	ts->tv_sec = (time_t)(ns / 1000000000ULL);
	ts->tv_nsec = (long)(ns % 1000000000ULL);
}

static void *producer_main(void *arg)
{
	struct gpuar_soft_producer *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct soft_store *s = next_store(p);
		u64 now = gpuar_now_ns(), at;
		struct timespec ts;

		if (!s) {
			pthread_cond_wait(&p->changed, &p->lock);
			continue;
		}
		at = s->at;
		if (at > now + SOFT_SPIN_NS) {
			/* Woken early when an earlier store is scheduled. */
			timespec_at(&ts, at - SOFT_SPIN_NS);
			pthread_cond_timedwait(&p->changed, &p->lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		while (gpuar_now_ns() < at)
			;
		pthread_mutex_lock(&p->lock);
		s = next_store(p);
		if (!s || s->at > gpuar_now_ns())
			continue;
		/* Timed before the store: whoever sees the value saw it after. */
		p->history[p->hist_head] = (struct soft_made){
			.word = s->word, .value = s->value,
			.stored_at = gpuar_now_ns(),
		};
		p->hist_head = (p->hist_head + 1) % SOFT_HISTORY;
		if (p->hist_len < SOFT_HISTORY)
			p->hist_len++;
		__atomic_store_n(s->word, s->value, __ATOMIC_RELEASE);
		heap_pop(p);
		p->made++;
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

GPUAR_EXPORT int gpuar_soft_producer_new(struct gpuar_soft_producer **out)
{
	struct gpuar_soft_producer *p;
	pthread_condattr_t ca;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->history = calloc(SOFT_HISTORY, sizeof(*p->history));
	if (!p->history) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->changed, &ca);
	pthread_condattr_destroy(&ca);
	ret = gpuar_thread_start(&p->thread, producer_main, p);
	if (ret) {
		pthread_cond_destroy(&p->changed);
		pthread_mutex_destroy(&p->lock);
		free(p->history);
		free(p);
		return -ret;
	}
	*out = p;
	return 0;
}

GPUAR_EXPORT void gpuar_soft_producer_free(struct gpuar_soft_producer *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
	free(p->heap);
	free(p->history);
	free(p);
}

GPUAR_EXPORT int gpuar_soft_store_at(struct gpuar_soft_producer *p,
				     uint64_t *word, uint64_t value,
				     uint64_t at_ns)
{
	int ret = 0;

	if (!p || !word)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	if (p->len == p->cap) {
		u32 cap = p->cap ? p->cap * 2 : 16;
		struct soft_store *n = realloc(p->heap, cap * sizeof(*n));

		if (!n) {
			ret = -ENOMEM;
			goto out;
		}
		p->heap = n;
		p->cap = cap;
	}
	heap_push(p, (struct soft_store){
		.at = at_ns, .seq = p->seq++, .word = word, .value = value,
	});
	pthread_cond_broadcast(&p->changed);
out:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

GPUAR_EXPORT int gpuar_soft_store_after(struct gpuar_soft_producer *p,
					uint64_t *word, uint64_t value,
					uint64_t delay_ns)
{
	return gpuar_soft_store_at(p, word, value, gpuar_now_ns() + delay_ns);
}

GPUAR_EXPORT void gpuar_soft_fail_at(struct gpuar_soft_producer *p, int error,
				     uint64_t at_ns)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->fail_error = error;
	p->fail_at = at_ns;
	pthread_mutex_unlock(&p->lock);
}

GPUAR_EXPORT uint64_t gpuar_soft_stores(struct gpuar_soft_producer *p)
{
	u64 n;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->made;
	pthread_mutex_unlock(&p->lock);
	return n;
}

GPUAR_EXPORT uint64_t gpuar_soft_stored_at(struct gpuar_soft_producer *p,
					   const uint64_t *word, uint64_t value)
{
	u64 t = 0;
	u32 i;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	/* The newest first: a value stored twice gives its latest time. */
	for (i = 1; i <= p->hist_len && !t; i++) {
		const struct soft_made *m =
			&p->history[(p->hist_head + SOFT_HISTORY - i) % SOFT_HISTORY];

		if (m->word == word && m->value == value)
			t = m->stored_at;
	}
	pthread_mutex_unlock(&p->lock);
	return t;
}

static int soft_check(void *ctx, uint64_t *value)
{
	struct gpuar_soft_source *ss = ctx;
	u64 v = gpuar_word_load(ss->word);

	if (value)
		*value = v;
	return gpuar_reached(v, ss->target);
}

static int soft_status(void *ctx)
{
	struct gpuar_soft_source *ss = ctx;
	struct gpuar_soft_producer *p = ss->producer;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	if (p->fail_error && gpuar_now_ns() >= p->fail_at)
		err = p->fail_error;
	pthread_mutex_unlock(&p->lock);
	return err;
}

static int soft_block(void *ctx)
{
	struct gpuar_soft_source *ss = ctx;
	struct gpuar_soft_producer *p = ss->producer;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	while (!gpuar_reached(gpuar_word_load(ss->word), ss->target)) {
		if (p->fail_error && gpuar_now_ns() >= p->fail_at) {
			err = p->fail_error;
			break;
		}
		if (!next_store(p) && !p->fail_error) {
			/* Nothing scheduled can ever complete it. */
			err = -EDEADLK;
			break;
		}
		pthread_cond_wait(&p->changed, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

static int soft_park(void *ctx, const struct gpuar_clock *clock,
		     uint64_t until_ns)
{
	struct gpuar_soft_source *ss = ctx;

	if (clock->ops->wait_word)
		clock->ops->wait_word(clock->ctx, ss->word,
				      gpuar_word_load(ss->word), until_ns);
	else
		clock->ops->sleep_until(clock->ctx, until_ns);
	return 0;
}

static const uint64_t *soft_word(void *ctx)
{
	return ((struct gpuar_soft_source *)ctx)->word;
}

static const struct gpuar_src_ops soft_ops = {
	.check = soft_check,
	.park = soft_park,
	.status = soft_status,
	.block = soft_block,
	.word = soft_word,
};

GPUAR_EXPORT const struct gpuar_src *
gpuar_soft_source_init(struct gpuar_soft_source *ss,
		       struct gpuar_soft_producer *producer,
		       const uint64_t *word, uint64_t target)
{
	if (!ss)
		return NULL;
	ss->source.ops = &soft_ops;
	ss->source.ctx = ss;
	ss->producer = producer;
	ss->word = word;
	ss->target = target;
	return &ss->source;
}
