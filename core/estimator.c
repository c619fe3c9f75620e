// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The deadline estimator, the wake-up latency quantile and the table of
 * readback points. Integer arithmetic only: this file is compiled into the
 * module as well as the library.
 */
#include "estimator.h"
#include "plan.h"

static u8 clamp_window(u32 window)
{
	if (window < GPUAR_PLAN_WINDOW_MIN)
		return GPUAR_PLAN_WINDOW_MIN;
	if (window > GPUAR_PLAN_WINDOW_MAX)
		return GPUAR_PLAN_WINDOW_MAX;
	return (u8)window;
}

void gpuar_est_init(struct gpuar_est *est, u32 window)
{
	*est = (struct gpuar_est){ .window = clamp_window(window) };
}

/* A zeroed or corrupted estimator must not index past its ring. */
static void est_repair(struct gpuar_est *est)
{
	if (est->window < GPUAR_PLAN_WINDOW_MIN ||
	    est->window > GPUAR_PLAN_WINDOW_MAX || est->len > est->window ||
	    est->head >= est->window ||
	    (est->len < est->window && est->head != est->len))
		gpuar_est_init(est, est->window);
}

/*
 * The ring keeps one invariant that makes the minimum cheap to take: while
 * it is not full, the valid samples are ring[0..len) and head == len.
 */
void gpuar_est_set_window(struct gpuar_est *est, u32 window)
{
	u64 newest[GPUAR_PLAN_WINDOW_MAX];
	u8 w = clamp_window(window);
	u8 keep, i;

	est_repair(est);
	if (w == est->window)
		return;
	keep = est->len < w ? est->len : w;
	/* Collect the newest @keep samples, oldest first. */
	for (i = 0; i < keep; i++) {
		u8 back = keep - i;	/* 1 = newest */
		u8 idx = (u8)((est->head + est->window - back) % est->window);

		newest[i] = est->ring[idx];
	}
	for (i = 0; i < GPUAR_PLAN_WINDOW_MAX; i++)
		est->ring[i] = i < keep ? newest[i] : 0;
	est->window = w;
	est->len = keep;
	est->head = keep % w;
}

bool gpuar_est_predict(const struct gpuar_est *est, u64 *ns)
{
	u64 min = GPUAR_U64_MAX;
	u8 i;

	if (!est->len || est->len > GPUAR_PLAN_WINDOW_MAX)
		return false;
	for (i = 0; i < est->len; i++)
		if (est->ring[i] < min)
			min = est->ring[i];
	*ns = min;
	return true;
}

static void est_record(struct gpuar_est *est, u64 sample)
{
	est_repair(est);
	est->ring[est->head] = sample;
	est->head = (u8)((est->head + 1) % est->window);
	if (est->len < est->window)
		est->len++;
	est->samples++;
}

void gpuar_est_exact(struct gpuar_est *est, u64 residual_ns)
{
	est_record(est, residual_ns);
}

/*
 * A late wake only says the work took at most @woke_ns, not how much less:
 * halving the smaller of the two bounds walks the prediction down
 * geometrically until the sleeps end early again, and never raises it.
 */
void gpuar_est_late(struct gpuar_est *est, u64 woke_ns)
{
	u64 predicted;

	if (gpuar_est_predict(est, &predicted) && predicted < woke_ns)
		woke_ns = predicted;
	est_record(est, woke_ns / 2);
}

u64 gpuar_est_sleep_ns(const struct gpuar_est *est,
		       const struct gpuar_plan *plan)
{
	u64 predicted, sleep;

	if (!gpuar_plan_predicts(plan) || !gpuar_est_predict(est, &predicted))
		return 0;
	sleep = predicted > plan->margin_ns ? predicted - plan->margin_ns : 0;
	if (sleep < plan->min_sleep_ns)
		return 0;
	if (sleep > plan->max_sleep_ns)
		sleep = plan->max_sleep_ns;
	return sleep;
}

void gpuar_wakelat_init(struct gpuar_wakelat *wl)
{
	*wl = (struct gpuar_wakelat){ 0 };
}

void gpuar_wakelat_record(struct gpuar_wakelat *wl, u64 ns)
{
	wl->ring[wl->head] = ns;
	wl->head = (wl->head + 1) % GPUAR_WAKELAT_SAMPLES;
	if (wl->len < GPUAR_WAKELAT_SAMPLES)
		wl->len++;
}

/*
 * Nearest rank: the smallest sample with at least ceil(pct * len / 100)
 * samples at or below it. Counting instead of sorting keeps the ring in
 * arrival order and needs no scratch space (32 samples, 1024 compares).
 */
u64 gpuar_wakelat_quantile(const struct gpuar_wakelat *wl)
{
	u32 rank, i, j;
	u64 best = GPUAR_U64_MAX;

	if (!wl->len)
		return 0;
	rank = (GPUAR_WAKELAT_QUANTILE_PCT * wl->len + 99) / 100;
	if (!rank)
		rank = 1;
	for (i = 0; i < wl->len; i++) {
		u32 at_or_below = 0;

		for (j = 0; j < wl->len; j++)
			if (wl->ring[j] <= wl->ring[i])
				at_or_below++;
		if (at_or_below >= rank && wl->ring[i] < best)
			best = wl->ring[i];
	}
	return best;
}

u64 gpuar_est_early_wake_ns(u64 sleep_ns, u64 wakelat_ns)
{
	return sleep_ns > wakelat_ns ? sleep_ns - wakelat_ns : 0;
}

static bool is_pow2(u32 n)
{
	return n && !(n & (n - 1));
}

u32 gpuar_est_table_cap(u32 limit)
{
	u32 cap = 1;

	while (cap / 2 < limit && cap < (1U << 30))
		cap <<= 1;
	return cap;
}

void gpuar_est_table_init(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *slots, u32 cap, u32 limit)
{
	u32 i;

	/* A capacity the probe mask cannot cover makes an empty, full table. */
	if (!slots || !is_pow2(cap))
		cap = 0;
	tab->slots = slots;
	tab->cap = cap;
	tab->limit = limit < cap ? limit : cap;
	tab->used = 0;
	tab->evict_idle = false;
	tab->tick = 0;
	for (i = 0; i < cap; i++) {
		slots[i].used = false;
		slots[i].gone = false;
	}
}

void gpuar_est_table_evict_idle(struct gpuar_est_table *tab)
{
	tab->evict_idle = true;
}

void gpuar_est_entry_hold(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *e)
{
	e->holds++;
	e->taken = ++tab->tick;
}

void gpuar_est_entry_release(struct gpuar_est_entry *e)
{
	if (e->holds)
		e->holds--;
}

/* Fibonacci hashing: the high bits of point * 2^64 / phi. */
static u32 table_home(const struct gpuar_est_table *tab, u64 point)
{
	u64 h = point * 0x9e3779b97f4a7c15ULL;

	return (u32)(h >> 32) & (tab->cap - 1);
}

/*
 * Linear probing. An evicted entry leaves a tombstone (gone), which a
 * search passes over and an insertion reuses, so entries never move; the
 * first never-used slot ends a search, and a table without one is
 * searched at most once around. Returns @point's entry, else the slot to
 * put it in (the first tombstone or free slot met), else NULL.
 */
static struct gpuar_est_entry *table_probe(const struct gpuar_est_table *tab,
					   u64 point)
{
	struct gpuar_est_entry *free = NULL;
	u32 idx, n;

	if (!tab->cap)
		return NULL;
	idx = table_home(tab, point);
	for (n = 0; n < tab->cap; n++) {
		struct gpuar_est_entry *e = &tab->slots[idx];

		if (e->used && e->point == point)
			return e;
		if (!e->used && !free)
			free = e;
		if (!e->used && !e->gone)
			break;
		idx = (idx + 1) & (tab->cap - 1);
	}
	return free;
}

/* The least recently held entry no wait holds; NULL when all are held. */
static struct gpuar_est_entry *table_idle_lru(const struct gpuar_est_table *tab)
{
	struct gpuar_est_entry *best = NULL;
	u32 i;

	for (i = 0; i < tab->cap; i++) {
		struct gpuar_est_entry *e = &tab->slots[i];

		if (e->used && !e->holds && (!best || e->taken < best->taken))
			best = e;
	}
	return best;
}

struct gpuar_est_entry *gpuar_est_table_find(const struct gpuar_est_table *tab,
					     u64 point)
{
	struct gpuar_est_entry *e = table_probe(tab, point);

	return e && e->used ? e : NULL;
}

struct gpuar_est_entry *gpuar_est_table_get(struct gpuar_est_table *tab,
					    u64 point, u32 window)
{
	struct gpuar_est_entry *e = table_probe(tab, point);
	u32 i;

	if (e && e->used)
		return e;
	if (tab->used >= tab->limit) {
		struct gpuar_est_entry *old;

		if (!tab->evict_idle)
			return NULL;
		old = table_idle_lru(tab);
		if (!old)
			return NULL;
		old->used = false;
		old->gone = true;
		tab->used--;
		e = table_probe(tab, point);
	}
	if (!e)
		return NULL;
	e->point = point;
	for (i = 0; i < GPUAR_OUTCOME_SLOTS; i++)
		e->outcomes[i] = 0;
	gpuar_est_init(&e->est, window);
	e->taken = 0;
	e->holds = 0;
	e->used = true;
	e->gone = false;
	tab->used++;
	return e;
}
