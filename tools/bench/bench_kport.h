/* SPDX-License-Identifier: MIT */
/*
 * The module's completion port, driven directly through the ABI
 * (<linux/gpuar.h>), with no library in between: what the kport-* and
 * fence-vgem strategies wait through.
 */
#ifndef GPUAR_BENCH_KPORT_H
#define GPUAR_BENCH_KPORT_H

#include <stddef.h>
#include <stdint.h>

#include "bench_strategy.h"

/* Records read at once. */
#define BENCH_KPORT_BATCH 64

struct bench_kport {
	int fd;					/* the port */
	uint32_t line[BENCH_MAX_STREAMS];	/* line ids of the device's lines */
	uint64_t start_ns[BENCH_MAX_STREAMS];	/* original start, for resubmits */
	struct gpuar_record rec[BENCH_KPORT_BATCH];
};

/*
 * 0 when /dev/gpuar is there and offers every feature in @features
 * (GPUAR_FEATURE_*); else -1 and a reason in @why.
 */
int bench_kport_probe(const char *path, uint64_t features, char *why,
		      size_t size);

/*
 * 0 when the features @have (a module's GPUAR_FEATURE_*) hold every one
 * in @need; else -1 and a reason naming the missing ones.
 */
int bench_kport_features_missing(const char *path, uint64_t have,
				 uint64_t need, char *why, size_t size);

/*
 * Create a port (@flags: GPUAR_PORT_*) and, when @lines, register every
 * stream's line. 0 or a negative errno with a reason.
 */
int bench_kport_open(struct bench_kport *kp, struct bench_ctx *ctx,
		     uint32_t flags, int lines, char *why, size_t size);
void bench_kport_close(struct bench_kport *kp);

/*
 * The port's statistics so far (struct bench_strategy's port_stats):
 * @state is the strategy's state, whose first member is its
 * struct bench_kport. 0 or a negative errno.
 */
int bench_kport_port_stats(void *state, struct gpuar_port_stats *st);

/* Submit a word wait for @seq on @stream under the stated plan. */
int bench_kport_submit_word(struct bench_kport *kp, struct bench_ctx *ctx,
			    unsigned int stream, uint64_t seq,
			    uint64_t start_ns);

/*
 * Turn @n records read at @seen_ns into completions. A timeout record
 * (backstop) is resubmitted with its original start and not reported; a
 * record with an error status, an unexpected outcome, or a word that has
 * not reached its target is reported as an error.
 */
unsigned int bench_kport_records(struct bench_kport *kp, struct bench_ctx *ctx,
				 unsigned int n, uint64_t seen_ns,
				 struct bench_done *done, unsigned int max);

#endif /* GPUAR_BENCH_KPORT_H */
