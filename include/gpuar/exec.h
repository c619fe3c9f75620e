/* SPDX-License-Identifier: MIT */
/*
 * The single-threaded reactor and FILL executor, executor kinds and the
 * host capabilities they are resolved against. Include through
 * <gpuar/gpuar.h>.
 *
 * Tasks are poll-style state machines: the executor calls a task's step
 * function when the task is woken (first at spawn). The step does what it
 * can, then either returns GPUAR_TASK_DONE, a negative error, or registers
 * what should wake it (gpuar_task_await_source / _word / _fence / _timer /
 * gpuar_task_yield; a source and a timer may be combined, whichever comes
 * first wakes the task) and returns GPUAR_TASK_PENDING.
 *
 * The reactor runs tasks whenever they are ready. Between passes over the
 * ready tasks it checks the registered waits (cheap word loads or fd
 * polls) and wakes the tasks whose source completed or whose deadline
 * passed. Only when no task is ready does it idle: with only timers
 * registered it sleeps to the earliest deadline; otherwise it parks on the
 * source of the earliest registered wait, bounded by the park bound and by
 * the earliest deadline, so a park never overshoots a deadline. When tasks
 * remain and none has anything registered, gpuar_exec_run fails with
 * GPUAR_E_STALLED.
 *
 * Thread-safety: an executor and its tasks belong to one thread; every
 * gpuar_exec_* and gpuar_task_* call comes from it (gpuar_task_* from a
 * step). The capability and kind functions are thread-safe. A uring host
 * belongs to one thread too.
 */
#ifndef GPUAR_EXEC_H
#define GPUAR_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/gpuar.h>
#include <gpuar/source.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpuar_error;

/* ------------------------------------------------------ capabilities */

struct gpuar_caps {
	bool io_uring;		/* io_uring_queue_init and a TIMEOUT op work */
	bool hw_word_wait;	/* umwait, mwaitx, wfet or wfe */
	bool module;		/* /dev/gpuar opens and answers VERSION */
	bool precise_sleep;	/* PR_SET_TIMERSLACK or timerfd works */
	bool multishot_read;	/* IORING_OP_READ_MULTISHOT (Linux 6.7+) */
	const char *hw_word_wait_kind;	/* "umwait", "mwaitx", "wfet", "wfe" or "none" */
};

/*
 * The host's capabilities, probed once (on first call) and cached.
 * Thread-safe.
 */
const struct gpuar_caps *gpuar_caps_probe(void);

/* ------------------------------------------------------ executor kinds */

enum gpuar_exec_kind {
	GPUAR_EXEC_NAIVE = 1,		/* waits inline, blocking */
	GPUAR_EXEC_GPU_REACTOR = 2,	/* waits are tasks of the FILL executor */
	GPUAR_EXEC_IO_URING = 3,	/* as gpu-reactor, idling through io_uring */
};

/* "naive", "gpu-reactor", "io-uring". Thread-safe. */
const char *gpuar_exec_kind_name(enum gpuar_exec_kind kind);

/*
 * Parse a kind name (@kind NULL: only check it). Errors: -EINVAL with
 * GPUAR_E_INVALID_EXECUTOR. Thread-safe.
 */
int gpuar_exec_kind_parse(const char *name, enum gpuar_exec_kind *kind,
			  struct gpuar_error *diag);

/*
 * Resolve @requested once through the fallback chain
 * io-uring -> gpu-reactor -> naive against @caps (NULL: gpuar_caps_probe())
 * into *@resolved (NULL: only check).
 * io-uring needs caps->io_uring; gpu-reactor needs caps->precise_sleep
 * (its idle sleeps must not be rounded by timer slack); naive always runs.
 * An unavailable kind falls back with GPUAR_W_EXECUTOR_FALLBACK in *@diag
 * (naming what was asked, why it cannot run, and what runs instead) and
 * returns 0; with @strict it is refused: -EOPNOTSUPP with
 * GPUAR_E_EXECUTOR_REFUSED. -EINVAL + GPUAR_E_INVALID_EXECUTOR for an
 * unknown kind. Thread-safe.
 *
 * Experimental, as gpuar_park_resolve: at the symbol version
 * GPUAR_EXPERIMENTAL_0, outside the frozen ABI; the fallback chain
 * follows what the benchmark measures (docs/stability.md).
 */
int gpuar_exec_resolve(enum gpuar_exec_kind requested, bool strict,
		       const struct gpuar_caps *caps,
		       enum gpuar_exec_kind *resolved,
		       struct gpuar_error *diag);

/*
 * Resolve how flag plans park in the user engine: the hardware word wait
 * where @caps has one (returns its kind name), else a slack-free timed
 * sleep ("sleep") with GPUAR_W_PARK_FALLBACK in *@diag. Thread-safe.
 * Experimental (GPUAR_EXPERIMENTAL_0, as gpuar_exec_resolve).
 */
const char *gpuar_park_resolve(const struct gpuar_caps *caps,
			       struct gpuar_error *diag);

/* ---------------------------------------------------------- executor */

struct gpuar_exec;
struct gpuar_task;

#define GPUAR_TASK_PENDING 0
#define GPUAR_TASK_DONE 1

/*
 * A task's step: GPUAR_TASK_DONE, GPUAR_TASK_PENDING (after registering a
 * wake-up), or a negative errno, which ends the task and the run.
 */
typedef int (*gpuar_task_fn)(struct gpuar_task *task, void *arg);

/* Sized and reserved as struct gpuar_port_options (<gpuar/gpuar.h>). */
struct gpuar_exec_options {
	uint32_t size;			/* 0 or sizeof(struct gpuar_exec_options) */
	uint32_t kind;			/* enum gpuar_exec_kind, resolved */
	const struct gpuar_clock *clock;	/* NULL: monotonic (or io_uring) */
	uint64_t park_bound_ns;		/* longest single park; 0: 100 us */
	uint32_t reserved[12];		/* must be zero */
};

/* Counters added later take reserved space, which reads zero until then. */
struct gpuar_exec_stats {
	uint64_t polls;		/* step calls */
	uint64_t wakes;		/* tasks woken by a source or a deadline */
	uint64_t sleeps;	/* idle sleeps to a deadline (timers only) */
	uint64_t parks;		/* idle parks on a source */
	uint64_t idle_ns;	/* time spent sleeping and parking */
	uint64_t uring_fallbacks;	/* io_uring ops refused, done otherwise */
	uint64_t reserved[8];
};

/*
 * A new executor of @opts->kind (resolve it first with
 * gpuar_exec_resolve). GPUAR_EXEC_IO_URING sets up an io_uring (unless a
 * clock is given) through which it idles: a sleep is an IORING_OP_TIMEOUT
 * (absolute, ns), and a park one submit-and-wait on an IORING_OP_POLL_ADD
 * for every fd its tasks wait on (fences, ports) with that TIMEOUT for the
 * earliest deadline, bounded by park_bound_ns only while a task waits on
 * a word (up to 47 fds; beyond, or if the ring refuses, it parks as
 * gpu-reactor does). Errors: -EINVAL (kind, options), -E2BIG (options), each with
 * GPUAR_E_INVALID_ARGUMENT in *@diag; -ENOMEM, io_uring setup errors.
 * The executor belongs to one thread.
 */
int gpuar_exec_new(struct gpuar_exec **exec,
		   const struct gpuar_exec_options *opts,
		   struct gpuar_error *diag);
void gpuar_exec_free(struct gpuar_exec *exec);

/* The executor's clock. */
const struct gpuar_clock *gpuar_exec_clock(const struct gpuar_exec *exec);

/*
 * Add a task; its first step runs in the next gpuar_exec_run. @task (if
 * non-NULL) receives the task handle, valid until the run that finishes
 * it returns. Errors: -ENOMEM, -EINVAL.
 */
int gpuar_exec_spawn(struct gpuar_exec *exec, gpuar_task_fn fn, void *arg,
		     struct gpuar_task **task);

/*
 * Run until every task finished (0) or one failed (its error). Errors:
 * -EDEADLK with GPUAR_E_STALLED when tasks remain and nothing registered
 * can wake them; a task's negative error (with GPUAR_E_BACKEND when it
 * came from a source check). Unfinished tasks stay for a next run.
 */
int gpuar_exec_run(struct gpuar_exec *exec, struct gpuar_error *diag);

struct gpuar_interrupt;	/* <gpuar/gpuar.h> */

/*
 * Make gpuar_exec_run() return -EINTR (GPUAR_E_SYSTEM in *diag, tasks
 * kept for a next run) while @intr (<gpuar/gpuar.h>; NULL: none) is set:
 * checked between steps, and an idle executor wakes for it at once (its
 * sleeps and, on the io-uring kind, its parks wait on the interrupt's fd
 * too; other parks are bounded by park_bound_ns; a clock of the caller's
 * is looked at every 10 ms). Keep @intr
 * alive while set.
 */
void gpuar_exec_set_interrupt(struct gpuar_exec *exec,
			      const struct gpuar_interrupt *intr);

void gpuar_exec_stats(const struct gpuar_exec *exec,
		      struct gpuar_exec_stats *stats);

/* Wake-up registrations, valid from a step that then returns PENDING. */

/* Wake when @src's check says done (or fails). @src must outlive the wait. */
int gpuar_task_await_source(struct gpuar_task *task,
			    const struct gpuar_src *src);
/* Wake when *@word reaches @target (wrapping order). */
int gpuar_task_await_word(struct gpuar_task *task, const uint64_t *word,
			  uint64_t target);
/* Wake when the sync_file @fd signals (the fd stays the caller's). */
int gpuar_task_await_fence(struct gpuar_task *task, int fd);
/* Wake at @deadline_ns (the executor clock's time line). */
int gpuar_task_await_timer(struct gpuar_task *task, uint64_t deadline_ns);
/* Be ready again after the other ready tasks had their turn. */
int gpuar_task_yield(struct gpuar_task *task);

/* Why the task was woken for this step: GPUAR_WOKE_* bits. */
#define GPUAR_WOKE_SPAWN (1U << 0)
#define GPUAR_WOKE_SOURCE (1U << 1)
#define GPUAR_WOKE_TIMER (1U << 2)
#define GPUAR_WOKE_YIELD (1U << 3)
uint32_t gpuar_task_woke(const struct gpuar_task *task);

/* The error a failed source check gave the awaiting task, or 0. */
int gpuar_task_source_error(const struct gpuar_task *task);

/* The executor the task belongs to. */
struct gpuar_exec *gpuar_task_exec(const struct gpuar_task *task);

/* -------------------------------------------------------- io_uring host */

/*
 * Reading a port's records through io_uring. Kernel engine: the port fd is
 * read with a multishot read (IORING_OP_READ_MULTISHOT from provided
 * buffers, Linux 6.7+, probed at run time; armed once per host and fd) or
 * else one IORING_OP_READ per call, or else, if the kernel refuses that,
 * poll + read(2). User engine: IORING_OP_POLL_ADD on the port fd, then
 * gpuar_reap. Each refused op falls back to the next way and is counted
 * in the stats (fallbacks). The host keeps records a multishot read
 * delivered beyond @max for the next call, in order. No operation on the
 * caller's buffer outlives a call: a one-shot read fills the host's own
 * buffer (at most 64 records a call) and is cancelled, and its end waited
 * for, before the call returns.
 *
 * Records the host holds have left the port's queue: while a host exists,
 * gpuar_cancel() on its port also finds them (-EALREADY), from any thread.
 * Free the host before its port. A port closed first ends the host's
 * operations on it (none keeps the port's file, nor the module's port,
 * alive), drops the records it held, and the host's reaps then answer
 * -EBADF; the host still reads other fds and must still be freed. Close
 * the port only while no call on its host runs. In a forked child a host
 * made before the fork answers -EPERM, and no host can be made of a port
 * opened before it (-EPERM); the parent's free (or port close) ends the
 * host's operations even while the child holds its copy of the ring.
 */
struct gpuar_port;
struct gpuar_uring_host;

struct gpuar_uring_host_stats {
	uint64_t reads;		/* read completions that delivered records */
	uint64_t multishot;	/* of which from the multishot read */
	uint64_t polls;		/* poll completions (user engine; kernel
				 * engine with GPUAR_PORT_IMMINENT and no
				 * multishot read) */
	uint64_t fallbacks;	/* ops refused and done otherwise */
	uint64_t records;	/* records handed out */
	uint64_t imminent;	/* EPOLLPRI completions served (kernel engine,
				 * GPUAR_PORT_IMMINENT) */
	uint64_t poll_arms;	/* POLLIN polls submitted (multishot: one
				 * stays armed across reaps) */
	uint64_t reserved[6];	/* later counters; zero until then */
};

/*
 * Errors: -ENOMEM, -EPERM (a port opened before a fork, in the child),
 * io_uring_queue_init errors. Not thread-safe.
 */
int gpuar_uring_host_new(struct gpuar_uring_host **host,
			 struct gpuar_port *port);
void gpuar_uring_host_free(struct gpuar_uring_host *host);

/*
 * Wait (at most @timeout_ns; < 0 forever) for records and copy up to @max
 * into @records. Returns the count, -ETIME, -EBADF (the port was closed
 * before the host), -EPERM (in a forked child), or a negative errno.
 */
int gpuar_uring_host_reap(struct gpuar_uring_host *host,
			  struct gpuar_record *records, uint32_t max,
			  int64_t timeout_ns);

void gpuar_uring_host_stats(const struct gpuar_uring_host *host,
			    struct gpuar_uring_host_stats *stats);

/*
 * Lower level, for fds that yield whole records (the kernel port, or a
 * test's pipe): read up to @max records from @fd with IORING_OP_READ,
 * waiting at most @timeout_ns. Same returns.
 */
int gpuar_uring_host_read_fd(struct gpuar_uring_host *host, int fd,
			     struct gpuar_record *records, uint32_t max,
			     int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_EXEC_H */
