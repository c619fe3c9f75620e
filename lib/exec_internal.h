/* SPDX-License-Identifier: MIT */
/* The executor's state, shared by exec.c and its io_uring idle (exec_uring.c). */
#ifndef GPUAR_LIB_EXEC_INTERNAL_H
#define GPUAR_LIB_EXEC_INTERNAL_H

#include "internal.h"

#include <liburing.h>
#include <stdio.h>

struct gpuar_exec {
	enum gpuar_exec_kind kind;
	const struct gpuar_clock *clock;
	u64 park_bound_ns;
	struct gpuar_task **tasks;
	u32 ntasks, cap;
	u64 seq;
	struct gpuar_exec_stats st;
	/* io-uring kind: idle sleeps are IORING_OP_TIMEOUTs on this ring */
	struct io_uring ring;
	struct gpuar_clock uring_clock;
	bool uring_ready;
	int intr_fd;		/* gpuar_exec_set_interrupt()'s eventfd, or -1 */
};

/* The ring's size, and the most fds one park through it waits on. */
#define GPUAR_URING_ENTRIES 128
#define GPUAR_URING_PARK_FDS 48

/*
 * Park through the ring on @fds (readable) until @until_ns: one
 * submit-and-wait; 0, or a negative errno when the ring could not.
 */
int gpuar_uring_park(struct gpuar_exec *ex, const int *fds, u32 n,
		     u64 until_ns);

/* Set up ex->ring and make ex->clock the io_uring clock. */
int gpuar_uring_clock_init(struct gpuar_exec *ex);
void gpuar_uring_clock_exit(struct gpuar_exec *ex);

#endif /* GPUAR_LIB_EXEC_INTERNAL_H */
