/* SPDX-License-Identifier: MIT */
/*
 * What every library source includes first: the shared core's headers,
 * then the public API (both take the coded error numbers from
 * <gpuar/codes.h>), then the library's internal helpers.
 */
#ifndef GPUAR_LIB_INTERNAL_H
#define GPUAR_LIB_INTERNAL_H

#include "types.h"
#include "codes.h"
#include "line.h"
#include "plan.h"
#include "estimator.h"
#include "plan_text.h"
#include "outcome.h"

#include <gpuar/gpuar.h>
#include <pthread.h>

/*
 * Load a completion word with core/line.h's acquire load. The public
 * API's words are uint64_t, the core's u64 is __u64: the same size and
 * representation (unsigned long and unsigned long long on LP64).
 */
static inline u64 gpuar_word_load(const uint64_t *word)
{
	return gpuar_load_acquire((const u64 *)word);
}

#include "export.h"

/*
 * Fill *@diag (if non-NULL) with @code formatted from @args, remembering
 * @sys_errno (positive). Returns -@sys_errno, so callers can
 * `return gpuar_diag_set(...)`.
 */
int gpuar_diag_set(struct gpuar_error *diag, u32 code, int sys_errno,
		   const char *const *args, u32 nargs);
void gpuar_diag_clear(struct gpuar_error *diag);

/* @plan, or the default plan (GPUAR_PLAN_DEFAULT_TEXT) for NULL. */
const struct gpuar_plan *gpuar_plan_or_default(const struct gpuar_plan *plan);

/* A wrapper that formats a system-call failure (GPUAR_E_SYSTEM). */
int gpuar_diag_sys(struct gpuar_error *diag, const char *what, int err);

/*
 * Set the calling thread's timer slack to 1 ns for a deadline sleep
 * (poll, ppoll, clock_nanosleep round by the slack, 50 us by default);
 * returns the previous slack for gpuar_slack_restore.
 */
int gpuar_slack_tighten(void);
void gpuar_slack_restore(int old);

/*
 * Wait for @fd to turn readable until @deadline_ns (UINT64_MAX: forever),
 * without timer slack. 1 readable, 0 deadline passed, negative errno.
 */
int gpuar_fd_wait_readable(int fd, u64 deadline_ns);

/*
 * The same, also ending with -EINTR as soon as @intr_fd (an interrupt's
 * eventfd, see lib/interrupt.c; -1: none) is readable.
 */
int gpuar_fd_wait_interruptible(int fd, int intr_fd, u64 deadline_ns);

/* An interrupt's fd, or -1 for NULL; is an interrupt fd set (readable)? */
int gpuar_interrupt_fd_of(const struct gpuar_interrupt *intr);
bool gpuar_interrupt_fd_set(int fd);

/*
 * Sleep on @c to @until, or until @intr_fd (-1: none) is set: on the
 * monotonic clock a poll of the fd; on another clock in 10 ms steps (the
 * caller looks again between them).
 */
void gpuar_sleep_interruptible(const struct gpuar_clock *c, u64 until,
			       int intr_fd);

/*
 * The deadline @timeout_ns from now: negative is forever (UINT64_MAX), and
 * a sum past the clock's range saturates to forever rather than wrap into
 * the past.
 */
u64 gpuar_deadline_in(int64_t timeout_ns);

/*
 * Caller-sized structs (lib/sized.c). gpuar_options_in copies the caller's
 * options @src (a struct whose first member is its u32 size; 0 means
 * @v1_size) into @dst, @known bytes zero-filled, and checks @dst's
 * reserved fields: -EINVAL below @v1_size or for a non-zero reserved[i],
 * -E2BIG for a larger struct whose tail this library does not know is
 * not zero, each with GPUAR_E_INVALID_ARGUMENT in *@diag naming @type's
 * field. GPUAR_OPTIONS_IN is the call for a local @dst of the caller's
 * type. gpuar_sized_out writes @src (@known bytes) into the caller's
 * @dst as far as its size reaches (-EINVAL/-E2BIG as above), zeroing the
 * rest of a larger struct, and keeps its size field.
 */
int gpuar_options_in(void *dst, size_t known, size_t v1_size, const void *src,
		     const uint32_t *reserved, size_t nreserved,
		     const char *type, struct gpuar_error *diag);
#define GPUAR_OPTIONS_IN(dst, src, v1_size, type, diag)			\
	gpuar_options_in((dst), sizeof(*(dst)), (v1_size), (src),		\
			 (dst)->reserved,					\
			 sizeof((dst)->reserved) / sizeof((dst)->reserved[0]),	\
			 (type), (diag))
int gpuar_sized_out(void *dst, const void *src, size_t known, size_t v1_size);

/*
 * The 1.0 sizes of the library's option structs, which size 0 stands for.
 * When a struct grows, its constant becomes the number it measures today.
 */
#define GPUAR_PORT_OPTIONS_SIZE_1_0 sizeof(struct gpuar_port_options)
#define GPUAR_EXEC_OPTIONS_SIZE_1_0 sizeof(struct gpuar_exec_options)
#define GPUAR_WAITER_OPTIONS_SIZE_1_0 sizeof(struct gpuar_waiter_options)
/* gpuar_port_lib_stats' first size (0 stands for it). */
#define GPUAR_PORT_LIB_STATS_SIZE_1_1 sizeof(struct gpuar_port_lib_stats)

/*
 * lib/process.c: the fork generation (bumped in every child; an object
 * opened at generation g is its parent's once gpuar_forked_since(g)), and
 * library threads started with every signal blocked (pthread_create's
 * error number).
 */
unsigned long gpuar_fork_generation(void);
bool gpuar_forked_since(unsigned long generation);
int gpuar_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

/*
 * IORING_OP_READ_MULTISHOT's number, the kernel's enum io_uring_op value
 * (Linux 6.7), which liburing 2.3 does not define.
 */
#define GPUAR_IORING_OP_READ_MULTISHOT 49

/*
 * lib/syscount.c: the system calls the library makes, counted. Each call
 * the library makes on a port's behalf (on its fd, to wait for it, to
 * run its engine) goes through GPUAR_SYS, which bumps the calling
 * thread's count; the port's calls then charge what their thread made
 * meanwhile to the port (gpuar_sys_charge in port.h), nested calls
 * charging theirs once. gpuar_port_lib_stats reports the sum.
 */
extern _Thread_local u64 gpuar_sys_tls;
#define GPUAR_SYS(call) (gpuar_sys_tls++, (call))
static inline u64 gpuar_sys_mark(void)
{
	return gpuar_sys_tls;
}

/* Decimal text of @v in @buf (>= 24 bytes); returns @buf. */
const char *gpuar_u64_text(u64 v, char *buf);

#endif /* GPUAR_LIB_INTERNAL_H */
