/* SPDX-License-Identifier: MIT */
/*
 * gpuar-stat --exercise: a live port of the tool's own, so the estimator's
 * learning can be watched where no other program holds a port. A producer
 * thread stores a sequence number into a line every --work-us after each
 * wait is submitted; the tool waits through the port (blocking read) and
 * reads the port's and the point's statistics with the ioctls.
 */
#ifndef GPUAR_STAT_EXERCISE_H
#define GPUAR_STAT_EXERCISE_H

#include <pthread.h>
#include <stdatomic.h>

#include "stat_model.h"

struct stat_exercise {
	const char *device_path;
	struct gpuar_plan plan;
	uint64_t work_ns;
	uint64_t waits;

	int port;			/* the port fd */
	_Atomic uint64_t done;		/* waits completed */
	_Atomic int error;		/* negative errno, 0 */
	_Atomic bool finished;
	pthread_t thread;
};

/* Create the port and start the waits in a thread. 0 or a negative errno. */
int stat_exercise_start(struct stat_exercise *ex, char *why, size_t size);
/* Wait for the thread; returns its error (0 or a negative errno). */
int stat_exercise_join(struct stat_exercise *ex);

/* Snapshot the exercise port through GPUAR_IOC_PORT_STATS / POINT_STATS. */
int stat_collect_ioctl(int port, const uint64_t *points, size_t npoints,
		       const char *id, struct stat_snapshot *s);

#endif /* GPUAR_STAT_EXERCISE_H */
