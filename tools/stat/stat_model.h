/* SPDX-License-Identifier: MIT */
/*
 * What gpuar-stat shows: the module's ports, each with its counters and,
 * where the source has them, its estimator points (the prediction each
 * point has learned).
 */
#ifndef GPUAR_STAT_MODEL_H
#define GPUAR_STAT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/gpuar.h>

struct stat_point {
	uint64_t point;
	uint64_t samples;
	uint64_t predicted_ns;		/* 0: no prediction yet */
	uint64_t outcomes[GPUAR_OUTCOME_COUNT];
};

struct stat_port {
	char id[40];		/* debugfs's port handle, or "pid/fd" */
	int pid;		/* creator (debugfs) or holder (fdinfo); -1 unknown */
	uint32_t record_version;
	uint64_t pending, queued, lines, points, submitted;
	uint64_t outcomes[GPUAR_OUTCOME_COUNT];
	uint64_t checks, sleeps, timer_fires, busy_read_checks;
	uint64_t wakeup_latency_ns;
	struct stat_point *pt;	/* heap, npt entries */
	size_t npt;
	bool has_points;	/* the source lists points (debugfs, own port) */
};

struct stat_snapshot {
	const char *source;	/* "debugfs", "fdinfo", "ioctl" */
	struct stat_port *port;	/* heap */
	size_t nport;
};

void stat_snapshot_free(struct stat_snapshot *s);
/* Append a zeroed port; NULL on allocation failure. */
struct stat_port *stat_snapshot_add(struct stat_snapshot *s);
/* Append a zeroed point to @p; NULL on allocation failure. */
struct stat_point *stat_port_add_point(struct stat_port *p);

/* Waits ended, over every outcome. */
uint64_t stat_port_ended(const struct stat_port *p);
uint64_t stat_point_ended(const struct stat_point *pt);

/* "immediate", "exact", ... for outcome 1..6; NULL otherwise. */
const char *stat_outcome_name(unsigned int outcome);

#endif /* GPUAR_STAT_MODEL_H */
