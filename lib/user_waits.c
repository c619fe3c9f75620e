// SPDX-License-Identifier: MIT
/*
 * The user engine's indexed min-heaps of waits: each heap holds slab
 * indices ordered by a key (then submission order), and every wait knows
 * its position in each heap, so a wait whose state changed moves in
 * O(log n). The engine's per-run work is then the due waits, not all
 * pending ones. Every function runs under the port's lock.
 */
#include "engine_user.h"

#include <string.h>

#define HEAP_NONE UINT32_MAX

static bool before(const struct uheap *h, const struct uport *u, u32 a, u32 b)
{
	const struct uwait *wa = &u->slab[a], *wb = &u->slab[b];

	if (wa->key[h->which] != wb->key[h->which])
		return wa->key[h->which] < wb->key[h->which];
	return wa->seq < wb->seq;
}

static void place(struct uheap *h, struct uport *u, u32 pos, u32 idx)
{
	h->at[pos] = idx;
	u->slab[idx].pos[h->which] = pos;
}

static void sift_up(struct uheap *h, struct uport *u, u32 pos)
{
	u32 idx = h->at[pos];

	while (pos) {
		u32 parent = (pos - 1) / 2;

		if (!before(h, u, idx, h->at[parent]))
			break;
		place(h, u, pos, h->at[parent]);
		pos = parent;
	}
	place(h, u, pos, idx);
}

static void sift_down(struct uheap *h, struct uport *u, u32 pos)
{
	u32 idx = h->at[pos];

	for (;;) {
		u32 c = 2 * pos + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h, u, h->at[c + 1], h->at[c]))
			c++;
		if (!before(h, u, h->at[c], idx))
			break;
		place(h, u, pos, h->at[c]);
		pos = c;
	}
	place(h, u, pos, idx);
}

void uheap_init(struct uheap *h, u32 *storage, u8 which)
{
	h->at = storage;
	h->n = 0;
	h->which = which;
}

/* Put slab entry @idx in @h at @key, or move it there if it is in. */
void uheap_set(struct uheap *h, struct uport *u, u32 idx, u64 key)
{
	struct uwait *w = &u->slab[idx];
	u32 pos = w->pos[h->which];

	w->key[h->which] = key;
	if (pos == HEAP_NONE) {
		pos = h->n++;
		place(h, u, pos, idx);
		sift_up(h, u, pos);
		return;
	}
	sift_up(h, u, pos);
	sift_down(h, u, u->slab[idx].pos[h->which]);
}

void uheap_remove(struct uheap *h, struct uport *u, u32 idx)
{
	u32 pos = u->slab[idx].pos[h->which], last;

	if (pos == HEAP_NONE)
		return;
	u->slab[idx].pos[h->which] = HEAP_NONE;
	last = h->at[--h->n];
	if (pos == h->n)
		return;
	place(h, u, pos, last);
	sift_up(h, u, pos);
	sift_down(h, u, u->slab[last].pos[h->which]);
}

/* The first entry, or NULL when empty. */
struct uwait *uheap_top(const struct uheap *h, struct uport *u)
{
	return h->n ? &u->slab[h->at[0]] : NULL;
}

/*
 * Up to @k of the first entries, in order, into @out (slab indices): a
 * best-first walk of the heap's tree, so its cost is O(k log k) whatever
 * the heap's size. Returns how many.
 */
u32 uheap_first(const struct uheap *h, struct uport *u, u32 *out, u32 k)
{
	u32 front[2 * UHEAP_FIRST_MAX + 1], nf = 0, n = 0, i, best;

	if (k > UHEAP_FIRST_MAX)
		k = UHEAP_FIRST_MAX;
	if (h->n)
		front[nf++] = 0;
	while (n < k && nf) {
		best = 0;
		for (i = 1; i < nf; i++)
			if (before(h, u, h->at[front[i]], h->at[front[best]]))
				best = i;
		i = front[best];
		front[best] = front[--nf];
		out[n++] = h->at[i];
		if (2 * i + 1 < h->n)
			front[nf++] = 2 * i + 1;
		if (2 * i + 2 < h->n)
			front[nf++] = 2 * i + 2;
	}
	return n;
}

/* Rebuild @h from its members' current keys, in O(n). */
void uheap_rebuild(struct uheap *h, struct uport *u)
{
	u32 i = h->n / 2;

	while (i--)
		sift_down(h, u, i);
}

/* ------------------------------------------------------------ the slab */

void uport_waits_init(struct uport *u)
{
	u32 i, h;

	for (h = 0; h < UH_COUNT; h++)
		uheap_init(&u->heap[h], u->heap_store + (size_t)h * u->max_waits,
			   (u8)h);
	for (i = 0; i < u->max_waits; i++)
		u->slab[i].next_free = i + 1;
	u->free_head = 0;
}

/* A cleared entry (the caller checked that the port has room). */
struct uwait *uport_wait_alloc(struct uport *u)
{
	struct uwait *w = &u->slab[u->free_head];
	u32 h;

	u->free_head = w->next_free;
	memset(w, 0, sizeof(*w));
	for (h = 0; h < UH_COUNT; h++)
		w->pos[h] = HEAP_NONE;
	w->seq = u->next_seq++;
	w->fd = -1;
	u->npend++;
	return w;
}

/* The wait ended (its record is queued): out of every heap, entry free. */
void uport_wait_release(struct uport *u, struct uwait *w)
{
	u32 idx = uwait_index(u, w), h;

	for (h = 0; h < UH_COUNT; h++)
		uheap_remove(&u->heap[h], u, idx);
	if (w->kind == UW_FENCE)
		u->nfences--;
	w->kind = UW_FREE;
	w->next_free = u->free_head;
	u->free_head = idx;
	u->npend--;
}

/*
 * When a blocked reaper should wake for @w, a flag wait in its estimator
 * sleep: its early wake at the wake-up latency the heap was keyed with
 * (gpuar_word_early_ns, counted from the wait's start as the module's),
 * or its next check if a backstop cuts the sleep short.
 */
u64 uport_early_key(const struct uport *u, const struct uwait *w)
{
	u64 early = gpuar_word_early_ns(&w->ws, u->early_wakelat);

	return early < w->ws.next_ns ? early : w->ws.next_ns;
}

/* Put word wait @w in the heaps its state calls for, at its keys now. */
void uport_wait_reindex(struct uport *u, struct uwait *w)
{
	u32 idx = uwait_index(u, w);
	bool candidate = uwait_busy_candidate(w);

	uheap_set(&u->heap[UH_DUE], u, idx, w->ws.next_ns);
	if (candidate && w->ws.phase == GPUAR_WORD_SLEEP && !w->reader_due)
		uheap_set(&u->heap[UH_EARLY], u, idx, uport_early_key(u, w));
	else
		uheap_remove(&u->heap[UH_EARLY], u, idx);
	if (candidate && w->ws.phase == GPUAR_WORD_PARK)
		uheap_set(&u->heap[UH_SPIN], u, idx, w->ws.next_ns);
	else
		uheap_remove(&u->heap[UH_SPIN], u, idx);
}

/*
 * Re-key UH_EARLY when the port's wake-up latency has moved since it was
 * keyed, at most every EARLY_REKEY_NS: O(sleeping waits), so not on every
 * sample; meanwhile an early wake is off by the latency's drift.
 */
#define EARLY_REKEY_NS (50 * 1000 * 1000ULL)

void uport_early_refresh(struct uport *u, u64 now)
{
	struct uheap *h = &u->heap[UH_EARLY];
	u32 i;

	if (u->wakelat_ns == u->early_wakelat ||
	    now - u->early_keyed_ns < EARLY_REKEY_NS)
		return;
	u->early_wakelat = u->wakelat_ns;
	u->early_keyed_ns = now;
	for (i = 0; i < h->n; i++)
		u->slab[h->at[i]].key[UH_EARLY] =
			uport_early_key(u, &u->slab[h->at[i]]);
	uheap_rebuild(h, u);
}
