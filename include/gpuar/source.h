/* SPDX-License-Identifier: MIT */
/*
 * Completion sources and clocks: what a backend implements so the wait
 * driver (gpuar_wait) and the FILL executor can wait on it.
 *
 * A source is one piece of GPU work: the word its stream stores behind the
 * work (CUDA, HIP, soft), or a fence (DRM). Backends fill in a
 * struct gpuar_src_ops; every operation except check is optional (NULL).
 * The wait driver calls a source's operations from the waiting thread
 * only, one at a time; the executor from its own thread. A source used by
 * several waits at once must make its operations thread-safe itself.
 * Include through <gpuar/gpuar.h>.
 */
#ifndef GPUAR_SOURCE_H
#define GPUAR_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpuar_clock;

struct gpuar_src_ops {
	/*
	 * One status check, cheap and non-blocking: 1 done (store *value, the
	 * word or fence seqno, if @value is non-NULL), 0 pending, or a negative
	 * errno for a source error. Required.
	 */
	int (*check)(void *ctx, uint64_t *value);
	/*
	 * Arm the completion signal behind the work (e.g. enqueue the word
	 * store) for "flag" plans, called once after the first check found
	 * the work pending. 0 or a negative errno.
	 */
	int (*arm)(void *ctx);
	/*
	 * Park until @until_ns (on @clock's time line) or earlier if the work
	 * may have completed (a word store, a fence poll). Spurious early
	 * returns are allowed; never return later than @until_ns plus the
	 * clock's wake-up latency. 0 or a negative errno. NULL: the driver
	 * sleeps on @clock to @until_ns.
	 */
	int (*park)(void *ctx, const struct gpuar_clock *clock, uint64_t until_ns);
	/*
	 * The vendor's status query (cuStreamQuery): the error authority,
	 * asked at least every backstop_ns while a flag wait parks. 0 when
	 * the work is fine (pending or done), or a negative errno / backend
	 * error that ends the wait. NULL: no status query.
	 */
	int (*status)(void *ctx);
	/*
	 * The vendor's blocking wait (cuStreamSynchronize), for "block" plans:
	 * returns when the work is done (0) or failed (negative). NULL: the
	 * source refuses block plans (-EOPNOTSUPP).
	 */
	int (*block)(void *ctx);
	/*
	 * Optional: the word this source completes on, for hardware word
	 * waits and virtual-clock parks. NULL when there is none (fences).
	 */
	const uint64_t *(*word)(void *ctx);
	/* Optional: a pollable fd (POLLIN when done), e.g. a sync_file. -1 if none. */
	int (*fd)(void *ctx);
};

struct gpuar_src {
	const struct gpuar_src_ops *ops;
	void *ctx;
};

/*
 * A source over a word in memory: done when the slot reaches @target in
 * wrapping order (acquire load). park uses the clock's word wait (hardware
 * word wait where the CPU has one, else a slack-free timed sleep). No
 * status query (the word cannot fail), no block. The struct is the
 * source's storage: keep it alive while the source is in use.
 */
struct gpuar_word_source {
	struct gpuar_src source;
	const uint64_t *word;
	uint64_t target;
};

/* Fill @ws for @word/@target and return &ws->source. Thread-safe. */
const struct gpuar_src *gpuar_word_source_init(struct gpuar_word_source *ws,
						  const uint64_t *word,
						  uint64_t target);

/*
 * A source over any pollable fd that turns readable when the work is done
 * (a sync_file): check is poll(fd, 0); park is ppoll to the deadline. The
 * fd stays the caller's.
 */
struct gpuar_fd_source {
	struct gpuar_src source;
	int fd;
};

/* Fill @fs for @fd and return &fs->source. Thread-safe. */
const struct gpuar_src *gpuar_fd_source_init(struct gpuar_fd_source *fs,
						int fd);

/* ------------------------------------------------------------- clocks */

/*
 * A clock: where "now" comes from and how to sleep. The monotonic clock is
 * CLOCK_MONOTONIC with slack-free sleeps; the virtual clock (gpuar_vclock)
 * makes the wait driver, reactor and executor exact to the nanosecond in
 * tests.
 */
struct gpuar_clock_ops {
	uint64_t (*now)(void *ctx);
	/* Sleep until @until_ns (absolute). */
	void (*sleep_until)(void *ctx, uint64_t until_ns);
	/*
	 * Wait until *@word may have changed from @seen or @until_ns passed,
	 * whichever is first; may return early. NULL: sleep_until.
	 */
	void (*wait_word)(void *ctx, const uint64_t *word, uint64_t seen,
			  uint64_t until_ns);
};

struct gpuar_clock {
	const struct gpuar_clock_ops *ops;
	void *ctx;
};

/*
 * CLOCK_MONOTONIC. sleep_until sleeps with clock_nanosleep(TIMER_ABSTIME)
 * after setting the calling thread's timer slack to 1 ns
 * (PR_SET_TIMERSLACK), and restores the thread's previous slack before
 * returning. wait_word uses the hardware word wait (gpuar_hw_word_wait)
 * when the CPU has one, else sleep_until. Thread-safe.
 */
const struct gpuar_clock *gpuar_clock_monotonic(void);

/*
 * Hardware word wait: "umwait" (x86 WAITPKG), "mwaitx" (AMD MONITORX),
 * "wfet" (arm64 FEAT_WFxT), "wfe" (arm64 WFE woken by the kernel's event
 * stream) or NULL where the CPU has none (probed once by CPUID, or
 * getauxval's HWCAP2_WFXT and HWCAP_EVTSTRM; the instructions are never
 * executed where absent). The arm64 kinds are compile-checked only
 * (make check-arm64-hwwait): no arm64 machine runs the tests. Thread-safe.
 */
const char *gpuar_hw_word_wait_kind(void);

/*
 * Wait with the hardware word wait until *@word != @seen or @until_ns,
 * each monitor wait bounded by @bound_ns; never past @until_ns. Returns 0,
 * or -EOPNOTSUPP where the CPU has none, or where it cannot keep
 * @bound_ns: "wfe" wakes only at event stream ticks (up to 150 us apart),
 * so it refuses a smaller bound and the caller's fallback (a timed sleep)
 * runs instead. Thread-safe.
 */
int gpuar_hw_word_wait(const uint64_t *word, uint64_t seen, uint64_t until_ns,
		       uint64_t bound_ns);

/*
 * The virtual clock: time moves only when a sleep, park or
 * gpuar_vclock_advance moves it, and a scripted "device" stores values
 * into words at given virtual times as time passes them (in time order;
 * stores at equal times in script order). Single-threaded; for tests and
 * simulations.
 *
 * Experimental: the gpuar_vclock_* functions are at the symbol version
 * GPUAR_EXPERIMENTAL_0, outside the frozen ABI (docs/stability.md).
 */
struct gpuar_vclock;

/* A virtual clock at @start_ns. Returns NULL on allocation failure. */
struct gpuar_vclock *gpuar_vclock_new(uint64_t start_ns);
void gpuar_vclock_free(struct gpuar_vclock *vc);
const struct gpuar_clock *gpuar_vclock_clock(struct gpuar_vclock *vc);
/* Script a store of @value into *@word at @at_ns. 0, -ENOMEM. */
int gpuar_vclock_store_at(struct gpuar_vclock *vc, uint64_t at_ns,
			  uint64_t *word, uint64_t value);
/* Move time forward by @ns (CPU work in a simulation), applying stores. */
void gpuar_vclock_advance(struct gpuar_vclock *vc, uint64_t ns);
uint64_t gpuar_vclock_now(const struct gpuar_vclock *vc);
/* Number of sleeps / word waits the clock performed (for tests). */
uint64_t gpuar_vclock_sleeps(const struct gpuar_vclock *vc);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_SOURCE_H */
