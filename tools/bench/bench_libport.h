/* SPDX-License-Identifier: MIT */
/*
 * A libgpuar port (either engine) as the benchmark's strategies hold it:
 * what user-predict, lib-reap and the *-imminent strategies wait through.
 * The device stores into the port's own lines (gpuar_line_alloc), which
 * take the place of the device's for the repetition.
 */
#ifndef GPUAR_BENCH_LIBPORT_H
#define GPUAR_BENCH_LIBPORT_H

#include <stddef.h>
#include <stdint.h>

#include <gpuar/gpuar.h>

#include "bench_strategy.h"

struct bench_libport {
	struct gpuar_port *port;	/* first: bench_libport_port_stats */
	struct gpuar_line *line[BENCH_MAX_STREAMS];
	uint64_t *dev_line[BENCH_MAX_STREAMS];	/* the device's own, restored */
	uint64_t start_ns[BENCH_MAX_STREAMS];	/* original start, for resubmits */
	struct gpuar_record rec[BENCH_MAX_STREAMS];
	int ep;				/* an epoll set over the port's fd, or -1 */
};

/*
 * Open a port on @engine with @flags (GPUAR_PORT_*; a kernel port is
 * STRICT: no silent fallback to another engine or without a feature) and
 * a line per stream; with @epoll, an epoll set holding the port's fd for
 * POLLIN and POLLPRI. 0 or a negative errno with a reason in @why.
 */
int bench_libport_open(struct bench_libport *lp, struct bench_ctx *ctx,
		       enum gpuar_engine engine, uint32_t flags, bool epoll,
		       char *why, size_t size);
void bench_libport_close(struct bench_libport *lp, struct bench_ctx *ctx);

/* Submit a word wait for @seq on @stream under the stated plan. */
int bench_libport_submit(struct bench_libport *lp, struct bench_ctx *ctx,
			 unsigned int stream, uint64_t seq, uint64_t start_ns);

/*
 * Turn @n records in lp->rec, seen at @seen_ns, into completions: a
 * TIMEOUT record (the backstop) is resubmitted from its original start
 * and not reported; a record for no pending wait, with an error status,
 * or whose word has not reached its target is an error.
 */
unsigned int bench_libport_records(struct bench_libport *lp,
				   struct bench_ctx *ctx, int n,
				   uint64_t seen_ns, struct bench_done *done,
				   unsigned int max);

/* An event loop: epoll_wait, then gpuar_port_reap(0). @state: a bench_libport. */
int bench_libport_epoll_wait(void *state, struct bench_ctx *ctx,
			     struct bench_done *done, unsigned int max);

/* struct bench_strategy's port_stats: @state starts with a bench_libport. */
int bench_libport_port_stats(void *state, struct gpuar_port_stats *st);
/* struct bench_strategy's lib_syscalls: the same @state. */
int bench_libport_lib_syscalls(void *state, uint64_t *n);

/*
 * A waiter's loop: @reap (the strategy's way of taking up to @room
 * records into lp->rec; -EINTR and -EAGAIN: again) until a record
 * completes a pending wait. The count of completions, or -errno.
 */
typedef int (*bench_libport_reap_fn)(void *arg, struct bench_libport *lp,
				     unsigned int room);
int bench_libport_wait_loop(struct bench_libport *lp, struct bench_ctx *ctx,
			    struct bench_done *done, unsigned int max,
			    bench_libport_reap_fn reap, void *arg);

/* A waiter blocked in gpuar_port_reap() (no timeout). */
int bench_libport_reap_wait(void *state, struct bench_ctx *ctx,
			    struct bench_done *done, unsigned int max);

/* A strategy whose state is just a bench_libport (as bench_libport_open). */
int bench_libport_state_open(struct bench_ctx *ctx, enum gpuar_engine engine,
			     uint32_t flags, bool epoll, void **state,
			     char *why, size_t size);
int bench_libport_state_submit(void *state, struct bench_ctx *ctx,
			       unsigned int stream, uint64_t seq);
void bench_libport_state_close(void *state, struct bench_ctx *ctx);

#endif /* GPUAR_BENCH_LIBPORT_H */
