/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The object model of a completion port: the port, its lines and its waits.
 *
 * Locking
 *   port->lock (spinlock, always taken IRQ-safe) guards every field marked
 *   [L]: the pending set, the timer queue, the record queue, the estimator
 *   table contents, counters. Fence callbacks (hard IRQ, fence lock held)
 *   and the port's hrtimer (softirq) take it, so nothing that sleeps,
 *   waits for a fence callback (dma_fence_remove_callback) or waits for the
 *   timer (hrtimer_cancel) ever runs under it: those collect under the lock,
 *   unlock, then act.
 *   It is a lock of its own, not the readers' wait queue lock as eventfd
 *   and timerfd use (waking with wake_up_locked_poll()): that would save
 *   one lock round trip per completion, but the same checks and wake-ups
 *   would still run under it with interrupts off, and every
 *   prepare_to_wait() and poll_wait() would then wait out a whole timer
 *   firing instead of one wake-up.
 *   port->mutex serialises the sleeping control path (line register and
 *   unregister, submissions, statistics of points): [M]. The estimator
 *   table's shape (which points exist) changes only under both.
 *   port->read_mutex serialises readers: records leave the queue only under
 *   it, so a reader that copied the head out can dequeue exactly those. It
 *   is never held while a reader sleeps or spins.
 *
 * Lifetimes
 *   The port lives as long as its file: release() runs after the last fd
 *   and the last ioctl/read are gone, cancels and frees everything.
 *   A wait is owned by the port from commit to free. It sits on the pending
 *   list and in the pending index by user data (a word wait also in the
 *   timer queue, and while it sleeps on the estimator in the busy queue)
 *   until it ends under the lock, then on the record queue (and, unless
 *   cancelled, in the queued index by user data) until a reader copies it
 *   out and frees it (process context; a fence wait drops its fence
 *   reference as soon as it ended, see fence_wait.c). On a port with
 *   the area (area.c) the record goes to the shared ring instead while
 *   the queue is empty and the ring has room, and the wait is spent: off
 *   both indexes, on port->spent with only the port's reference, which
 *   process context drops (record.c's gpuar_spent_free) since the record
 *   may enter the ring in hard IRQ or mid-walk. Each source
 *   takes its wait off its own queues (gpuar_word_end_locked; a fence wait
 *   has none) before the source-agnostic gpuar_wait_complete_locked()
 *   queues the record.
 *   A line is referenced by the port's id table and by each pending word
 *   wait (on line->waits); busy readers take a kref while they spin on
 *   its word, so its page stays pinned while anyone may read it. Its MMU
 *   notifier and its place on the port's verify list (line_watch.c) live
 *   from its registration until it leaves the id table (unregister,
 *   release), the port and its mm outliving them: the notifier is
 *   removed, and the line taken off the list and waited for while the
 *   port's verify work looks at it, before the id table's reference is
 *   dropped. The verify work is the port's, cancelled at release once
 *   every line has left.
 *   A claimed wait stays the port's: the claimer gets copies of its
 *   fields (and watches the word through its own mapping), never a
 *   reference.
 */
#ifndef GPUAR_KMOD_PORT_H
#define GPUAR_KMOD_PORT_H

#include <linux/dma-fence.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/uio.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <linux/gpuar.h>
#include "../core/estimator.h"
#include "../core/word_state.h"

struct gpuar_port;

/*
 * Where a line stands with the memory at its address (line_watch.c). Only
 * a live line takes word waits; a dead one's memory went (unmapped or
 * replaced), so its waits ended and submissions naming it fail.
 */
enum gpuar_line_state {
	GPUAR_LINE_ARMING,		/* being registered: not watched yet */
	GPUAR_LINE_LIVE,		/* its pinned page is mapped at uaddr */
	GPUAR_LINE_DEAD,		/* its page is not (any more) */
	GPUAR_LINE_LEAVING,		/* unregistered or the port closing */
};

/* The status of the record of a wait whose line died. */
#define GPUAR_LINE_DEAD_STATUS (-EFAULT)

struct gpuar_line {
	struct kref ref;		/* id table + busy readers */
	struct gpuar_port *port;
	struct page *page;		/* pinned FOLL_WRITE | FOLL_LONGTERM */
	const u64 *words;		/* kernel address of the 64-byte line */
	u64 uaddr;
	u32 id;
	u8 state;			/* [L] enum gpuar_line_state */
	struct list_head waits;		/* [L] pending word waits, by lnode */
#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
	struct mmu_interval_notifier watch;	/* the line's 64 bytes */
	/* [L] on port->verify_list: is the page still there? */
	struct list_head vnode;
#endif
};

/* A word wait's part in imminent readiness (ports with GPUAR_PORT_IMMINENT). */
enum gpuar_imminent_state {
	GPUAR_IMMINENT_NONE,		/* not raised, or given back */
	GPUAR_IMMINENT_RAISED,		/* on port->imminent: EPOLLPRI */
	GPUAR_IMMINENT_CLAIMED,		/* on port->claimed, leased */
};

enum gpuar_wait_state {
	GPUAR_WAIT_PENDING,		/* on port->pending */
	GPUAR_WAIT_DONE,		/* on port->records, or spent (port->spent) */
};

struct gpuar_wait {
	/* [L] port->pending, port->records, or port->spent (in the ring) */
	struct list_head node;
	/*
	 * [L] port->pending_by_user while pending (until a canceller
	 * collects it), then port->queued_by_user while its record is
	 * queued unless that record is a cancellation.
	 */
	struct rb_node unode;
	struct list_head cnode;		/* a canceller's private list */
	struct kref ref;		/* the port's, + a canceller's while it works */
	struct gpuar_port *port;
	enum gpuar_wait_state state;	/* [L] */
	bool cancelling;		/* [L] collected by cancel/release */
	u8 source;			/* enum gpuar_source */
	u64 user_data;
	u64 start_ns;
	struct gpuar_record rec;	/* filled when completed */

	/* word waits */
	struct rb_node tnode;		/* [L] port->timeq, by due_ns */
	struct rb_node bnode;		/* [L] port->busyq, by early_ns */
	struct list_head inode;		/* [L] port->imminent or ->claimed */
	struct list_head lnode;		/* [L] line->waits while pending */
	struct gpuar_line *line;
	struct gpuar_est_entry *pe;	/* the point's estimator entry */
	u32 slot;
	u64 target;
	u64 early_ns;			/* absolute: busy-read wake, 0 if none */
	u64 due_ns;			/* [L] the timer's next look: timeq key */
	u64 raise_ns;			/* [L] imminent from here; 0: not (any more) */
	/*
	 * [L], except that a busy reader extends its own lease without the
	 * lock (WRITE_ONCE): the timer leaves the wait alone until then.
	 */
	u64 lease_end_ns;
	u8 imminent;			/* [L] enum gpuar_imminent_state */
	struct gpuar_word_state ws;	/* [L] phase, next check, backstop */

	/* fence waits */
	struct dma_fence *fence;	/* reference dropped once the wait ended */
	struct dma_fence_cb cb;
	struct llist_node fence_put;	/* on the deferred put list */
};

struct gpuar_port_counters {
	u64 submitted;
	u64 outcomes[GPUAR_OUTCOME_COUNT];
	u64 checks;
	u64 sleeps;
	u64 timer_fires;
	u64 busy_read_checks;
	u64 imminent;			/* waits raised imminent */
	u64 claims;			/* waits handed out by a claim */
	u64 lease_expiries;		/* leases that ran out */
	u64 budget_stretched;		/* firings the user's budget delayed */
	/* Not in the ABI's statistics: fdinfo and debugfs (stats.c). */
	u64 verify_queued;		/* verify works queued (line_watch.c) */
	u64 verify_looks;		/* lines looked at by them */
	u64 area_overflows;		/* records the full ring sent to the queue */
};

/*
 * A reader blocked in read() or WAIT_READY that may busy-read: on the
 * port's list while it sleeps, until @wake_at (0: no early wake known).
 */
struct gpuar_busy_sleeper {
	struct list_head node;		/* [L] port->busy_sleepers */
	struct task_struct *task;
	u64 wake_at;			/* [L] */
};

struct gpuar_port {
	spinlock_t lock;		/* [L], IRQ-safe: see the top of this file */
	struct mutex mutex;		/* [M]: the sleeping control path */
	struct mutex read_mutex;	/* one reader dequeues at a time */
	wait_queue_head_t wq;		/* readers and pollers: a record arrived */

	struct mm_struct *mm;		/* mmgrab()ed creator mm: binding, pinned_vm */
	struct user_struct *user;	/* the creator's user: locked_vm */
	struct gpuar_uid_limit *uid_limit; /* its owner's port count */
	u32 record_version;

	struct list_head pending;	/* [L] waits not yet completed */
	struct list_head records;	/* [L] completed, in completion order */

	/*
	 * The area (area.c; NULL without GPUAR_PORT_AREA): the shared page
	 * and the ring after it, the geometry fixed at creation. The
	 * module's own copies of what it writes there: tail (also read
	 * without the lock, acquire: area.c) and flags. A wait whose record
	 * went to the ring is spent: off every index, it waits on @spent
	 * for process context to drop the port's reference (record.c).
	 */
	struct gpuar_area *area;
	struct gpuar_record *ring;
	u32 area_bytes;
	u32 ring_entries;
	u32 ring_tail;			/* [L] written */
	u32 area_flags;			/* [L] */
	struct list_head spent;		/* [L] */
	/*
	 * [L] The same waits by user data (user_index.c), for cancel: every
	 * pending wait no canceller has collected, and every queued record
	 * that is not a cancellation (one that a cancel lost the race to).
	 */
	struct rb_root pending_by_user;
	struct rb_root queued_by_user;
	u32 npending;			/* [L] */
	u32 nqueued;			/* [L] */

	struct rb_root_cached timeq;	/* [L] pending word waits by due_ns */
	struct hrtimer timer;		/* one per port; softirq */
	u64 armed_ns;			/* [L] the timer's soft expiry, or U64_MAX */
	u64 armed_end_ns;		/* [L] and its hard one (soft + slack) */
	u64 last_fire_ns;		/* [L] the last firing: spacing */
	u64 prepaid_ns;			/* [L] a check reserved from the budget */

	/*
	 * Busy-read, kept by word_queue.c: sleeping word waits with an early
	 * wake, by early_ns, and the readers sleeping until one (struct
	 * gpuar_busy_sleeper). A commit with an earlier early wake wakes one
	 * of those readers, never wq, so pollers see no spurious wake-ups.
	 */
	struct rb_root_cached busyq;	/* [L] */
	struct list_head busy_sleepers;	/* [L] */

	/*
	 * Imminent readiness (GPUAR_PORT_IMMINENT): word waits at their
	 * early wake, in the order raised, not yet claimed (EPOLLPRI while
	 * any), and the claimed ones, leased to their claimer.
	 */
	bool imminent;			/* the port opted in; fixed */
	/* EPOLLPRI, or EPOLLRDBAND (GPUAR_PORT_IMMINENT_RDBAND); fixed */
	__poll_t imminent_mask;
	/*
	 * The pollers of an opted-in port that asked for EPOLLPRI or
	 * EPOLLRDBAND (gpuar_port_poll), woken when a wait is raised, once
	 * per timer firing or claim however many it raised. With EPOLLPRI
	 * the wake-up has no key: io_uring's poll drops one keyed EPOLLPRI
	 * alone (it matches a key against the other events asked for, since
	 * its reads' polls ask for EPOLLPRI too). With EPOLLRDBAND it is
	 * keyed, so epoll and io_uring wake only who asked for it. Blocked
	 * readers sleep on wq, never here.
	 */
	wait_queue_head_t pri_wq;
	struct list_head imminent_list;	/* [L] */
	struct list_head claimed;	/* [L] */
	u32 nraised;			/* [L] */
	u32 nclaimed;			/* [L] */
	/*
	 * While a reader checks its claimed waits (gpuar_claimed_check with
	 * @quiet), the records that queues are the reader's to take in the
	 * same call: no wake-up for them (nobody else is owed one), only a
	 * count, and the reader wakes wq itself if any is left behind.
	 */
	bool quiet_reader;		/* [L] */
	u32 quiet_queued;		/* [L] */
	/* Wake-ups held back by a walk (record.c's gpuar_wakes_hold). */
	u32 wakes_held;			/* [L] */
	bool owed_in;			/* [L] */
	bool owed_pri;			/* [L] */

#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
	/*
	 * The line watch's verify work (line_watch.c): one per port, looking
	 * at the lines on verify_list, the one it looks at now named by
	 * verifying (set and cleared under [L], read by a leaving line's
	 * wait_var_event()).
	 */
	struct work_struct verify_work;
	struct list_head verify_list;	/* [L] lines, by vnode */
	struct gpuar_line *verifying;
#endif
	struct xarray lines;		/* id -> struct gpuar_line, [M] */
	struct xarray folios;		/* pinned folios' charges, line.c, [M] */
	u32 nlines;			/* [M] */

	/*
	 * Which points exist (the index, an entry's point): changed under
	 * [M]+[L], so looked up under either; holds, the idle list and
	 * contents [L]; the visits counter [M].
	 */
	struct gpuar_est_table points;
	struct gpuar_wakelat wakelat;	/* [L] */
	struct gpuar_port_counters cnt;	/* [L] */

	struct list_head global;	/* gpuar_ports, for debugfs */
	u64 id;				/* names the port in debugfs and fdinfo */
	struct pid *creator;		/* shown as the reader's pid namespace names it */
};

/*
 * Waits committed per hold of the port lock, and entries read, looked up
 * or allocated between two preemption points: a batch may hold max_waits
 * entries, which takes long on a debug kernel, and must neither keep
 * interrupts off nor hold the CPU all that time.
 */
#define GPUAR_COMMIT_CHUNK 64

/* The port's clock: CLOCK_MONOTONIC, as records and plans count time. */
static inline u64 gpuar_now_ns(void)
{
	return ktime_get_ns();
}

/*
 * Prototypes by file, each file calling only those listed after it (and
 * uarg.c, params.c): port.c creates ports and dispatches to the rest;
 * cancel.c is the one caller of the word, fence and record ends;
 * busy_read.c spins on the word waits' early wakes (word_queue.c);
 * claim.c hands out imminent waits (word_imminent.c); line_watch.c ends
 * the word waits of a line whose memory went (word_check.c); the word_*.c
 * files (their order in word.h) and fence_wait.c add and end their
 * waits through record.c, which keeps them indexed by user data
 * (user_index.c) for cancel.c to find and puts their records in the
 * area's ring (area.c) or its queue.
 */

/* port.c: creation, file operations, teardown, the port list */
int gpuar_port_create(const void __user *uarg);
void gpuar_debugfs_init(void);
void gpuar_debugfs_exit(void);

/* cancel.c: cancel by user data; end everything at release */
long gpuar_cancel_ioctl(struct gpuar_port *port, const void __user *uarg);
void gpuar_cancel_all(struct gpuar_port *port);

/* stats.c */
long gpuar_port_stats_ioctl(struct gpuar_port *port, void __user *uarg);
long gpuar_point_stats_ioctl(struct gpuar_port *port, void __user *uarg);
void gpuar_port_show_fdinfo(struct seq_file *m, struct file *file);
void gpuar_port_show(struct seq_file *m, struct gpuar_port *port);
void gpuar_port_show_points(struct seq_file *m, struct gpuar_port *port);

/* busy_read.c: the blocked reader's spin, and waiting with a deadline */
int gpuar_busy_read_wait(struct gpuar_port *port, u64 *spun_ns,
			 u64 deadline_ns, bool exclusive);
long gpuar_wait_ready_ioctl(struct gpuar_port *port, const void __user *uarg);

/* claim.c: claiming imminent waits, and the check of claimed ones on read */
long gpuar_claim_ioctl(struct gpuar_port *port, void __user *uarg);
unsigned int gpuar_claimed_check(struct gpuar_port *port, bool quiet);

/* line.c */
long gpuar_line_register_ioctl(struct gpuar_port *port, void __user *uarg);
long gpuar_line_unregister_ioctl(struct gpuar_port *port,
				 const void __user *uarg);
void gpuar_line_put(struct gpuar_line *line);
void gpuar_lines_release(struct gpuar_port *port);

/*
 * line_watch.c: a line watched with an MMU interval notifier from its
 * registration (start before the pin, arm under port->lock as it turns
 * live) until it leaves (stop, once line.c made it LEAVING). Without MMU
 * notifiers a line is not watched: it keeps its page whatever happens at
 * its address.
 */
#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
int gpuar_line_watch_start(struct gpuar_port *port, struct gpuar_line *line,
			   unsigned long *seq);
void gpuar_line_watch_arm_locked(struct gpuar_port *port,
				 struct gpuar_line *line, unsigned long seq);
void gpuar_line_watch_stop(struct gpuar_line *line);
void gpuar_port_watch_init(struct gpuar_port *port);
void gpuar_port_watch_release(struct gpuar_port *port);
#else
static inline int gpuar_line_watch_start(struct gpuar_port *port,
					 struct gpuar_line *line,
					 unsigned long *seq)
{
	*seq = 0;
	return 0;
}

static inline void gpuar_line_watch_arm_locked(struct gpuar_port *port,
					       struct gpuar_line *line,
					       unsigned long seq)
{
}

static inline void gpuar_line_watch_stop(struct gpuar_line *line)
{
}

static inline void gpuar_port_watch_init(struct gpuar_port *port)
{
}

static inline void gpuar_port_watch_release(struct gpuar_port *port)
{
}
#endif

/* word_wait.c: submit */
long gpuar_submit_word_ioctl(struct gpuar_port *port, void __user *uarg);
/* word_timer.c: the port's timer */
void gpuar_word_timer_init(struct gpuar_port *port);
/* word_imminent.c: leases, raise, claim */
void gpuar_word_lease_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 until);
void gpuar_word_release_locked(struct gpuar_port *port, struct gpuar_wait *w,
			       u64 now);
unsigned int gpuar_word_claim_locked(struct gpuar_port *port,
				     struct gpuar_wait **out, unsigned int max,
				     u64 lease_ns);
void gpuar_word_unclaim_locked(struct gpuar_port *port, struct gpuar_wait *w);
/* word_check.c: a check of the word, the wait's end */
bool gpuar_word_check_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 now, bool by_reader);
void gpuar_word_end_locked(struct gpuar_port *port, struct gpuar_wait *w,
			   u8 outcome, s32 status, u64 complete_ns, u64 value);
void gpuar_word_end_line(struct gpuar_port *port, struct gpuar_line *line,
			 bool may_sleep);
/* word_queue.c: the busy queue and its sleepers */
u64 gpuar_word_first_early_locked(struct gpuar_port *port);
struct gpuar_wait *gpuar_word_take_early_locked(struct gpuar_port *port,
						u64 now);
void gpuar_word_sleeper_add_locked(struct gpuar_port *port,
				   struct gpuar_busy_sleeper *s);
void gpuar_word_sleeper_del_locked(struct gpuar_port *port,
				   struct gpuar_busy_sleeper *s);
void gpuar_word_wakelat_locked(struct gpuar_port *port, u64 due_ns, u64 now);

/* fence_wait.c */
long gpuar_submit_fence_ioctl(struct gpuar_port *port, void __user *uarg);
bool gpuar_fence_wait_detach(struct gpuar_wait *w);
void gpuar_fence_wait_drop(struct gpuar_wait *w);
void gpuar_fence_puts_flush(void);

/* record.c: the wait object and the record queue */
void gpuar_wait_add_pending_locked(struct gpuar_port *port,
				   struct gpuar_wait *w);
void gpuar_wait_complete_locked(struct gpuar_port *port, struct gpuar_wait *w,
				u8 outcome, s32 status, u64 complete_ns,
				u64 value);
void gpuar_wait_put(struct gpuar_wait *w);
void gpuar_wakes_hold_locked(struct gpuar_port *port);
void gpuar_wakes_release_locked(struct gpuar_port *port);
void gpuar_pri_wake_locked(struct gpuar_port *port);
bool gpuar_waits_fit_locked(struct gpuar_port *port, u32 count);
bool gpuar_waits_fit(struct gpuar_port *port, u32 count);
ssize_t gpuar_records_move(struct gpuar_port *port, struct iov_iter *to);
void gpuar_records_free(struct gpuar_port *port);
bool gpuar_records_ready(struct gpuar_port *port);
void gpuar_spent_free(struct gpuar_port *port);

/* area.c: the ring shared with userspace (GPUAR_PORT_AREA) */
int gpuar_area_create(struct gpuar_port *port, u32 entries_wanted);
void gpuar_area_free(struct gpuar_port *port);
int gpuar_area_mmap(struct file *file, struct vm_area_struct *vma);
u32 gpuar_area_used_locked(struct gpuar_port *port);
bool gpuar_area_ready(struct gpuar_port *port);
bool gpuar_area_push_locked(struct gpuar_port *port,
			    const struct gpuar_record *rec);
void gpuar_area_overflow_locked(struct gpuar_port *port, bool on);
ssize_t gpuar_area_take(struct gpuar_port *port, struct iov_iter *to);
bool gpuar_area_holds(struct gpuar_port *port, u64 user_data);
void gpuar_area_show(struct seq_file *m, struct gpuar_port *port);

/* user_index.c: waits by user data (port->pending_by_user, ->queued_by_user) */
void gpuar_user_index_add(struct rb_root *index, struct gpuar_wait *w);
void gpuar_user_index_del(struct rb_root *index, struct gpuar_wait *w);
struct gpuar_wait *gpuar_user_index_first(const struct rb_root *index,
					  u64 user_data, unsigned int *looked);
struct gpuar_wait *gpuar_user_index_next(struct gpuar_wait *w,
					 unsigned int *looked);

/* uarg.c: size-prefixed ioctl arguments, batch headers */
int gpuar_uarg_in(void *karg, size_t ksize, size_t minsize,
		  const void __user *uarg, u32 *usize);
int gpuar_uarg_out(const void *karg, size_t ksize, void __user *uarg,
		   u32 usize);
int gpuar_submit_header(struct gpuar_submit *s, size_t min_entry);

/* uid_limit.c: ports per user, the check budget of their timers */
struct gpuar_uid_limit *gpuar_uid_limit_get(void);
void gpuar_uid_limit_put(struct gpuar_uid_limit *u);
int gpuar_uid_pin_charge(struct gpuar_uid_limit *u, unsigned long pages,
			 unsigned long limit);
void gpuar_uid_pin_uncharge(struct gpuar_uid_limit *u, unsigned long pages);
bool gpuar_uid_budget_hold(struct gpuar_uid_limit *u, u64 now, u64 *next_ns);
unsigned int gpuar_uid_budget_take(struct gpuar_uid_limit *u, u64 now,
				   unsigned int want, u64 *next_ns);

#endif /* GPUAR_KMOD_PORT_H */
