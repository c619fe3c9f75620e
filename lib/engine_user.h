/* SPDX-License-Identifier: MIT */
/*
 * The user engine: the module's port semantics run in the caller's
 * process.
 *
 * Its fd is an epoll fd over an eventfd (readable while a record is
 * queued), a timerfd (armed, absolute, at the next word check any pending
 * wait needs; hrtimer-backed, so without timer slack) and every pending
 * fence wait's sync_file. Readiness means "a record is ready or the engine
 * must run": gpuar_port_process() (or gpuar_reap) runs the checks that are
 * due. Word waits go through the same state machine (core/word_state.c)
 * and the same estimator as the module's.
 *
 *   engine_user.c   open/close, word submit, cancel, process, stats
 *   user_run.c      the engine run: the checks that are due
 *   user_check.c    one word wait's check, and its end
 *   user_waits.c    the pending waits: a slab, and heaps by the time
 *                   each must next be looked at, so a run costs the
 *                   due waits, not all pending ones
 *   user_lines.c    the engine's own table of line ids
 *   user_fence.c    fence waits: a sync_file in the epoll set, found
 *                   ready through it
 *   user_queue.c    the record ring and the eventfd's readiness
 *   user_timer.c    the timerfd: due times, arming, wake-up samples
 *   user_reap.c     gpuar_reap(): a blocked reaper's hardware park and
 *                   busy-read spin, as the module's read()
 *   user_imminent.c GPUAR_PORT_IMMINENT: claiming the waits whose early
 *                   wake is here
 *   user_watcher.c  GPUAR_PORT_WATCHER's thread
 *
 * Everything in struct uport is guarded by its lock, except `changes`,
 * which spinning reapers read without it.
 */
#ifndef GPUAR_LIB_ENGINE_USER_H
#define GPUAR_LIB_ENGINE_USER_H

#include "port.h"
#include "word_state.h"
#include "defaults.h"

enum uwait_kind {
	UW_FREE = 0,	/* a free slab entry */
	UW_WORD = 1,
	UW_FENCE = 2,
};

/*
 * The heaps a word wait sits in (struct uport's heap[]), each by a time
 * and then submission order:
 *   UH_DUE    every word wait, by its next check (ws.next_ns)
 *   UH_EARLY  flag waits in their estimator sleep that a blocked reaper
 *             may end by spinning, by their early wake (uport_early_key)
 *   UH_SPIN   such waits once parked: a spinning reaper's targets, by
 *             their next check
 *   UH_CLAIM  claimed waits (GPUAR_PORT_IMMINENT) while their lease runs,
 *             by its end: the few a run looks at for a moved word
 */
enum uheap_which { UH_DUE, UH_EARLY, UH_SPIN, UH_CLAIM, UH_COUNT };

/* The most entries uheap_first() returns. */
#define UHEAP_FIRST_MAX 16

struct uport;

struct uheap {
	u32 *at;	/* slab indices, a binary min-heap */
	u32 n;
	u8 which;	/* enum uheap_which: the key and position it uses */
};

/* A registered line, as the engine knows it: by id, in its own table. */
struct uline {
	u32 id;
	/*
	 * Waits on its words, and reapers parked or spinning on them: the
	 * line cannot be unregistered (and its page unmapped) meanwhile.
	 */
	u32 pending;
	const uint64_t *words;
};

struct uwait {
	u8 kind;		/* enum uwait_kind */
	u64 seq;		/* submission order; new for every use of the entry */
	u32 pos[UH_COUNT];	/* position in each heap, UINT32_MAX: not in it */
	u64 key[UH_COUNT];	/* the key it is there by */
	u32 next_free;		/* free list link while UW_FREE */
	u64 user_data;
	u64 point;
	u64 start_ns;
	/* word waits */
	const uint64_t *word;
	u64 target;
	struct uline *line;
	struct gpuar_est_entry *pt;
	struct gpuar_word_state ws;
	/*
	 * The value the last check saw: a spinning reaper watches for a
	 * change from it, so a store that lands between that check and the
	 * spin's first load is not taken for the old value.
	 */
	u64 seen;
	/* the next check is a blocked reaper's (busy_read_checks) */
	bool reader_due;
	/*
	 * Imminent readiness: raised once (counted in st.imminent, as the
	 * module counts its raise), claimed once (never again), and watched
	 * by the claimer until lease_end_ns, while the timer leaves it alone.
	 */
	bool raised;
	bool claimed;
	u64 lease_end_ns;
	/* fence waits: the engine's own reference to the sync_file */
	int fd;
};

struct uport {
	pthread_mutex_t lock;
	int epfd, evfd, tfd;
	/* GPUAR_PORT_WATCHER: a thread runs the engine, woken through epfd */
	bool watcher;
	int stopfd;
	pthread_t thread;
	bool ev_set;		/* the eventfd holds a count */
	u64 armed_ns;		/* the timerfd's expiry, 0 when disarmed */
	bool expiry_left;	/* it expired and was left undrained (lazy) */
	struct gpuar_word_cfg cfg;
	u32 max_waits;
	struct uline **lines;	/* registered lines, by ascending id */
	u32 nlines, lines_cap;
	u32 next_line_id;
	struct uwait *slab;	/* max_waits entries: pending waits and free ones */
	u32 free_head;		/* first free entry, max_waits: none */
	u32 npend, nfences;
	u64 next_seq;
	struct uheap heap[UH_COUNT];
	u32 *heap_store;	/* UH_COUNT * max_waits */
	/* The wake-up latency UH_EARLY's keys were computed with, and when. */
	u64 early_wakelat;
	u64 early_keyed_ns;
	struct gpuar_record *q;	/* queued records, ring of max_waits */
	u32 qhead, qlen;
	struct gpuar_est_table tab;
	struct gpuar_est_entry *entries;	/* the table's memory */
	u32 *index;
	struct gpuar_wakelat wakelat;
	u64 wakelat_ns;		/* its quantile, kept as samples come */
	u64 busy_budget_ns;	/* spin budget of one reap call; 0: none */
	u32 busy_sleepers;	/* reapers asleep on epfd with budget left */
	bool imminent;		/* GPUAR_PORT_IMMINENT: the fd wakes early */
	bool claim_held;	/* a sliced claimer holds claims: fd ready */
	/*
	 * Bumped (under the lock) at every record queued and every submit,
	 * read without it by a spinning reaper: the set of waits changed,
	 * look again.
	 */
	u32 changes;
	struct gpuar_port_stats st;
};

static inline struct uport *uport_of(struct gpuar_port *port)
{
	return port->state;
}

/* A flag wait whose estimator sleep a blocked reaper may end by spinning. */
static inline bool uwait_busy_candidate(const struct uwait *w)
{
	return w->kind == UW_WORD && w->ws.plan.park == GPUAR_PARK_FLAG &&
	       gpuar_word_busy_candidate(&w->ws);
}

/* user_waits.c (lock held) */
void uheap_init(struct uheap *h, u32 *storage, u8 which);
void uheap_set(struct uheap *h, struct uport *u, u32 idx, u64 key);
void uheap_remove(struct uheap *h, struct uport *u, u32 idx);
struct uwait *uheap_top(const struct uheap *h, struct uport *u);
u32 uheap_first(const struct uheap *h, struct uport *u, u32 *out, u32 k);
void uheap_rebuild(struct uheap *h, struct uport *u);
void uport_waits_init(struct uport *u);
struct uwait *uport_wait_alloc(struct uport *u);
void uport_wait_release(struct uport *u, struct uwait *w);
void uport_wait_reindex(struct uport *u, struct uwait *w);
u64 uport_early_key(const struct uport *u, const struct uwait *w);
void uport_early_refresh(struct uport *u, u64 now);

static inline u32 uwait_index(const struct uport *u, const struct uwait *w)
{
	return (u32)(w - u->slab);
}

/* user_run.c: run the checks that are due (lock held). */
void uport_run_locked(struct uport *u, bool woken, bool lazy_arm);
void uport_process_locked(struct uport *u, bool woken);

/* user_check.c (lock held) */
/*
 * Check word wait @w at @now: true when it ended (its record queued, its
 * entry freed), else it is re-indexed at its next check.
 */
bool uport_word_check(struct uport *u, struct uwait *w, u64 now);
/* End word wait @w, whose last check read @value: its record is queued. */
void uport_word_end(struct uport *u, struct uwait *w, u64 value);

/* user_imminent.c: GPUAR_IOC_CLAIM's semantics (engine ops claim). */
int uport_claim(struct gpuar_port *port, struct gpuar_claim_entry *entries,
		u32 max, u64 lease_ns);
/* Keep the fd readable while a sliced claimer holds claims (ops). */
void uport_claim_held(struct gpuar_port *port, bool held);
/* Make the claimed waits whose word moved due now; drop ended leases. */
void uport_claims_moved(struct uport *u, u64 now);
/* Count the waits that turned imminent by @now (st.imminent), once each. */
void uport_raise_imminent(struct uport *u, u64 now);

/* user_fence.c (lock held) */
int uport_fence_submit_locked(struct uport *u,
			      const struct gpuar_fence_wait *waits, u32 count,
			      struct uwait **ws, u32 *error_index);
void uport_fence_harvest(struct uport *u, u64 now);
void uport_fence_end(struct uport *u, struct uwait *w, u8 outcome,
		     int status, u64 complete_ns);

/* user_queue.c (lock held) */
void uport_note_change(struct uport *u);
void uport_enqueue(struct uport *u, const struct gpuar_record *rec);
void uport_sync_eventfd(struct uport *u);
u32 uport_pop(struct uport *u, struct gpuar_record *records, u32 max);
bool uport_queued_completion(const struct uport *u, u64 user_data);

/* user_timer.c (lock held) */
void uport_arm_timer(struct uport *u, bool lazy);
void uport_drain_timer(struct uport *u, u64 now, bool woken);
void uport_settle_timer(struct uport *u, u64 now);

/* user_lines.c (lock held) */
int uport_line_register(struct gpuar_port *port, struct gpuar_line *line);
int uport_line_unregister(struct gpuar_port *port, struct gpuar_line *line);
struct uline *uport_line_find(const struct uport *u, u32 id);

/* user_reap.c (no lock held) */
int uport_reap(struct gpuar_port *port, struct gpuar_record *records,
	       u32 max, int64_t timeout_ns, int intr_fd);

/* user_watcher.c */
int uport_watcher_start(struct uport *u);
void uport_watcher_stop(struct uport *u);

#endif /* GPUAR_LIB_ENGINE_USER_H */
