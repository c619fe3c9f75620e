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
			  struct gpuar_est_entry *entries, u32 *index,
			  u32 cap, u32 limit)
{
	u32 i;

	/* A capacity the probe mask cannot cover makes an empty, full table. */
	if (!entries || !index || !is_pow2(cap))
		cap = 0;
	*tab = (struct gpuar_est_table){
		.entries = entries,
		.index = index,
		.cap = cap,
		.limit = limit < cap ? limit : cap,
	};
	while (cap >> tab->bits > 1)
		tab->bits++;
	for (i = 0; i < cap; i++)
		index[i] = GPUAR_EST_SLOT_EMPTY;
	for (i = 0; i < tab->limit; i++)
		entries[i].used = false;
}

void gpuar_est_table_evict_idle(struct gpuar_est_table *tab)
{
	tab->evict_idle = true;
}

/* The idle list: entries nobody holds, the longest idle at its head. */
static void idle_add_tail(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *e)
{
	e->idle_next = NULL;
	e->idle_prev = tab->idle_tail;
	if (tab->idle_tail)
		tab->idle_tail->idle_next = e;
	else
		tab->idle_head = e;
	tab->idle_tail = e;
}

static void idle_del(struct gpuar_est_table *tab, struct gpuar_est_entry *e)
{
	if (e->idle_prev)
		e->idle_prev->idle_next = e->idle_next;
	else
		tab->idle_head = e->idle_next;
	if (e->idle_next)
		e->idle_next->idle_prev = e->idle_prev;
	else
		tab->idle_tail = e->idle_prev;
	e->idle_prev = NULL;
	e->idle_next = NULL;
}

void gpuar_est_entry_hold(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *e)
{
	if (!e->holds++)
		idle_del(tab, e);
}

void gpuar_est_entry_release(struct gpuar_est_entry *e)
{
	if (e->holds && !--e->holds)
		idle_add_tail(e->tab, e);
}

/*
 * Fibonacci hashing: the top log2(cap) bits of point * 2^64 / phi, which
 * every bit of the point reaches (keys that differ only above their low
 * bits, as aligned addresses do, still spread).
 */
static u32 table_home(const struct gpuar_est_table *tab, u64 point)
{
	u64 h = point * 0x9e3779b97f4a7c15ULL;

	return tab->bits ? (u32)(h >> (64 - tab->bits)) : 0;
}

static struct gpuar_est_entry *slot_entry(const struct gpuar_est_table *tab,
					  u32 slot)
{
	return &tab->entries[tab->index[slot] - 1];
}

/*
 * Linear probing from @point's home: the slot holding it, else the empty
 * slot that ends its run (where it would go), else, in an index with no
 * empty slot (limit == cap), cap.
 */
static u32 table_probe(struct gpuar_est_table *tab, u64 point)
{
	u32 mask = tab->cap - 1, idx, n;

	idx = table_home(tab, point);
	for (n = 0; n < tab->cap; n++) {
		tab->visits++;
		if (tab->index[idx] == GPUAR_EST_SLOT_EMPTY ||
		    slot_entry(tab, idx)->point == point)
			return idx;
		idx = (idx + 1) & mask;
	}
	return tab->cap;
}

struct gpuar_est_entry *gpuar_est_table_find(struct gpuar_est_table *tab,
					     u64 point)
{
	u32 slot;

	if (!tab->cap)
		return NULL;
	slot = table_probe(tab, point);
	if (slot == tab->cap || tab->index[slot] == GPUAR_EST_SLOT_EMPTY)
		return NULL;
	return slot_entry(tab, slot);
}

/*
 * Take slot @hole out of the index, shifting back the entries after it in
 * its run that may move (those whose home is not cyclically in
 * (hole, j]): every point stays reachable from its home without a
 * tombstone. The run ends at an empty slot, at worst the hole itself once
 * around.
 */
static void table_unindex(struct gpuar_est_table *tab, u32 hole)
{
	u32 mask = tab->cap - 1, j = hole;

	tab->index[hole] = GPUAR_EST_SLOT_EMPTY;
	for (;;) {
		struct gpuar_est_entry *e;
		u32 home;

		j = (j + 1) & mask;
		tab->visits++;
		if (tab->index[j] == GPUAR_EST_SLOT_EMPTY)
			return;
		e = slot_entry(tab, j);
		home = table_home(tab, e->point);
		if (((j - home) & mask) < ((j - hole) & mask))
			continue;	/* its home lies after the hole */
		tab->index[hole] = tab->index[j];
		tab->index[j] = GPUAR_EST_SLOT_EMPTY;
		e->slot = hole;
		hole = j;
	}
}

/*
 * The entry a new point gets: a fresh one, else the longest idle, taken
 * out of the index (*@evicted: the runs may have moved).
 */
static struct gpuar_est_entry *table_take_entry(struct gpuar_est_table *tab,
						bool *evicted)
{
	struct gpuar_est_entry *e;

	*evicted = false;
	if (tab->used < tab->limit) {
		e = &tab->entries[tab->used++];
		e->tab = tab;
		return e;
	}
	if (!tab->evict_idle || !tab->idle_head)
		return NULL;
	e = tab->idle_head;
	idle_del(tab, e);
	table_unindex(tab, e->slot);
	e->used = false;
	*evicted = true;
	return e;
}

struct gpuar_est_entry *gpuar_est_table_get(struct gpuar_est_table *tab,
					    u64 point, u32 window)
{
	struct gpuar_est_entry *e;
	bool evicted;
	u32 slot, i;

	if (!tab->cap)
		return NULL;
	slot = table_probe(tab, point);
	if (slot < tab->cap && tab->index[slot] != GPUAR_EST_SLOT_EMPTY)
		return slot_entry(tab, slot);
	e = table_take_entry(tab, &evicted);
	if (!e)
		return NULL;
	/*
	 * Fewer points than slots are indexed now, so the probe ends at an
	 * empty slot.
	 */
	if (evicted || slot == tab->cap)
		slot = table_probe(tab, point);
	tab->index[slot] = (u32)(e - tab->entries) + 1;
	e->point = point;
	for (i = 0; i < GPUAR_OUTCOME_SLOTS; i++)
		e->outcomes[i] = 0;
	gpuar_est_init(&e->est, window);
	e->holds = 0;
	e->slot = slot;
	e->used = true;
	idle_add_tail(tab, e);
	return e;
}
