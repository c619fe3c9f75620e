// SPDX-License-Identifier: MIT
/*
 * The virtual clock: time moves only when something sleeps, parks or
 * advances it, and scripted stores land as time passes them, so executor
 * and wait-driver tests are exact to the nanosecond.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

struct vstore {
	u64 at;
	uint64_t *word;
	u64 value;
};

struct gpuar_vclock {
	struct gpuar_clock clock;
	u64 now;
	struct vstore *stores;	/* sorted by time, stable */
	u32 len, cap, next;	/* stores[next..len) not yet made */
	u64 sleeps;
};

static void advance_to(struct gpuar_vclock *vc, u64 t)
{
	while (vc->next < vc->len && vc->stores[vc->next].at <= t) {
		struct vstore *s = &vc->stores[vc->next++];

		if (s->at > vc->now)
			vc->now = s->at;
		__atomic_store_n(s->word, s->value, __ATOMIC_RELEASE);
	}
	if (t > vc->now)
		vc->now = t;
}

static uint64_t v_now(void *ctx)
{
	return ((struct gpuar_vclock *)ctx)->now;
}

static void v_sleep_until(void *ctx, uint64_t until_ns)
{
	struct gpuar_vclock *vc = ctx;

	vc->sleeps++;
	advance_to(vc, until_ns);
}

/* A monitor wait wakes at the first store to the word, or at the bound. */
static void v_wait_word(void *ctx, const uint64_t *word, uint64_t seen,
			uint64_t until_ns)
{
	struct gpuar_vclock *vc = ctx;
	u64 t = until_ns;
	u32 i;

	(void)seen;
	vc->sleeps++;
	for (i = vc->next; i < vc->len && vc->stores[i].at <= until_ns; i++) {
		if (vc->stores[i].word == word) {
			t = vc->stores[i].at;
			break;
		}
	}
	advance_to(vc, t);
}

static const struct gpuar_clock_ops vclock_ops = {
	.now = v_now,
	.sleep_until = v_sleep_until,
	.wait_word = v_wait_word,
};

GPUAR_EXPORT struct gpuar_vclock *gpuar_vclock_new(uint64_t start_ns)
{
	struct gpuar_vclock *vc = calloc(1, sizeof(*vc));

	if (!vc)
		return NULL;
	vc->clock.ops = &vclock_ops;
	vc->clock.ctx = vc;
	vc->now = start_ns;
	return vc;
}

GPUAR_EXPORT void gpuar_vclock_free(struct gpuar_vclock *vc)
{
	if (vc) {
		free(vc->stores);
		free(vc);
	}
}

GPUAR_EXPORT const struct gpuar_clock *gpuar_vclock_clock(struct gpuar_vclock *vc)
{
	return vc ? &vc->clock : NULL;
}

GPUAR_EXPORT int gpuar_vclock_store_at(struct gpuar_vclock *vc,
				       uint64_t at_ns, uint64_t *word,
				       uint64_t value)
{
	u32 i;

	if (!vc || !word)
		return -EINVAL;
	if (vc->len == vc->cap) {
		u32 cap = vc->cap ? vc->cap * 2 : 16;
		struct vstore *n = realloc(vc->stores, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vc->stores = n;
		vc->cap = cap;
	}
	/* Insert after every store due at or before at_ns (stable). */
	for (i = vc->len; i > vc->next && vc->stores[i - 1].at > at_ns; i--)
		vc->stores[i] = vc->stores[i - 1];
	vc->stores[i] = (struct vstore){ .at = at_ns, .word = word, .value = value };
	vc->len++;
	/* A store scripted in the past lands at once. */
	advance_to(vc, vc->now);
	return 0;
}

GPUAR_EXPORT void gpuar_vclock_advance(struct gpuar_vclock *vc, uint64_t ns)
{
	if (vc)
		advance_to(vc, vc->now + ns);
}

GPUAR_EXPORT uint64_t gpuar_vclock_now(const struct gpuar_vclock *vc)
{
	return vc ? vc->now : 0;
}

GPUAR_EXPORT uint64_t gpuar_vclock_sleeps(const struct gpuar_vclock *vc)
{
	return vc ? vc->sleeps : 0;
}
