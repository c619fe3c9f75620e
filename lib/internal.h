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

/* Decimal text of @v in @buf (>= 24 bytes); returns @buf. */
const char *gpuar_u64_text(u64 v, char *buf);

#endif /* GPUAR_LIB_INTERNAL_H */
