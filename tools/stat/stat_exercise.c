// SPDX-License-Identifier: MIT
#include "stat_exercise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* The outcome copies below: the kernel's fixed slots hold all of ours. */
_Static_assert(GPUAR_OUTCOME_COUNT <= GPUAR_OUTCOME_SLOTS,
	       "more outcomes than the statistics have slots");

#define EXERCISE_POINT 1

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct producer {
	uint64_t *line;
	uint64_t seq, due_ns;
};

/* Store @seq into the line at @due (sleep, then a short spin). */
static void produce(uint64_t *line, uint64_t seq, uint64_t due)
{
	uint64_t wake = due > 50000 ? due - 50000 : 0;
	struct timespec ts = { .tv_sec = (time_t)(wake / 1000000000ULL),
			       .tv_nsec = (long)(wake % 1000000000ULL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
	while (now_ns() < due)
		;
	__atomic_store_n(line, seq, __ATOMIC_RELEASE);
}

/*
 * One thread both submits and produces: submit the wait, store at start +
 * work, then read the record. The store happens while the module's timer
 * or busy-read is waiting, which is what the estimator learns from.
 */
static void *exercise_main(void *arg)
{
	struct stat_exercise *ex = arg;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *line = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	struct gpuar_line_register lr = { .size = sizeof(lr) };
	int err = 0;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (line == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	lr.addr = (uint64_t)(uintptr_t)line;
	if (ioctl(ex->port, GPUAR_IOC_LINE_REGISTER, &lr)) {
		err = -errno;
		goto unmap;
	}
	for (uint64_t seq = 1; seq <= ex->waits && !err; seq++) {
		struct gpuar_word_wait w = {
			.user_data = seq, .target = seq, .point = EXERCISE_POINT,
			.line = lr.id, .plan = ex->plan,
		};
		struct gpuar_submit sub = {
			.size = sizeof(sub), .count = 1, .entry_size = sizeof(w),
			.entries = (uint64_t)(uintptr_t)&w,
		};
		struct gpuar_record rec;
		uint64_t start = now_ns();

		if (ioctl(ex->port, GPUAR_IOC_SUBMIT_WORD, &sub) != 1) {
			err = -errno;
			break;
		}
		produce(line, seq, start + ex->work_ns);
		for (;;) {
			if (read(ex->port, &rec, sizeof(rec)) !=
			    (ssize_t)sizeof(rec)) {
				err = -errno ? -errno : -EIO;
				break;
			}
			/*
			 * A backstop that ran out while this thread was kept
			 * off its CPU: the work is merely late (the store
			 * comes from this thread), so resubmit it keeping its
			 * start, as the library does after asking the vendor.
			 */
			if (rec.outcome != GPUAR_OUTCOME_TIMEOUT)
				break;
			w.start_ns = rec.start_ns;
			if (ioctl(ex->port, GPUAR_IOC_SUBMIT_WORD, &sub) != 1) {
				err = -errno;
				break;
			}
		}
		if (err)
			break;
		if (rec.status)
			err = rec.status;
		else
			atomic_fetch_add(&ex->done, 1);
	}
unmap:
	munmap(line, (size_t)page);
out:
	atomic_store(&ex->error, err);
	atomic_store(&ex->finished, true);
	return NULL;
}

int stat_exercise_start(struct stat_exercise *ex, char *why, size_t size)
{
	struct gpuar_port_create pc = {
		.size = sizeof(pc), .flags = GPUAR_PORT_CLOEXEC,
		.record_version = GPUAR_RECORD_VERSION_1,
	};
	int dev = open(ex->device_path, O_RDWR | O_CLOEXEC), err;

	if (dev < 0) {
		err = -errno;
		snprintf(why, size, "%s: %s", ex->device_path, strerror(errno));
		return err;
	}
	ex->port = ioctl(dev, GPUAR_IOC_PORT_CREATE, &pc);
	err = -errno;
	close(dev);
	if (ex->port < 0) {
		snprintf(why, size, "PORT_CREATE: %s", strerror(-err));
		return err;
	}
	err = -pthread_create(&ex->thread, NULL, exercise_main, ex);
	if (err) {
		snprintf(why, size, "thread: %s", strerror(-err));
		close(ex->port);
	}
	return err;
}

int stat_exercise_join(struct stat_exercise *ex)
{
	pthread_join(ex->thread, NULL);
	return atomic_load(&ex->error);
}

int stat_collect_ioctl(int port, const uint64_t *points, size_t npoints,
		       const char *id, struct stat_snapshot *s)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct stat_port *p;

	if (ioctl(port, GPUAR_IOC_PORT_STATS, &st))
		return -errno;
	s->source = "ioctl";
	p = stat_snapshot_add(s);
	if (!p)
		return -ENOMEM;
	snprintf(p->id, sizeof(p->id), "%s", id);
	p->pid = (int)getpid();
	p->pending = st.pending;
	p->queued = st.queued;
	p->lines = st.lines;
	p->points = st.points;
	p->submitted = st.submitted;
	memcpy(p->outcomes, st.outcomes, sizeof(p->outcomes));
	p->checks = st.checks;
	p->sleeps = st.sleeps;
	p->timer_fires = st.timer_fires;
	p->busy_read_checks = st.busy_read_checks;
	p->wakeup_latency_ns = st.wakeup_latency_ns;
	p->has_points = true;
	for (size_t i = 0; i < npoints; i++) {
		struct gpuar_point_stats ps = { .size = sizeof(ps), .point = points[i] };
		struct stat_point *pt;

		if (ioctl(port, GPUAR_IOC_POINT_STATS, &ps)) {
			if (errno == ENOENT)
				continue;	/* not used yet */
			return -errno;
		}
		pt = stat_port_add_point(p);
		if (!pt)
			return -ENOMEM;
		pt->point = ps.point;
		pt->samples = ps.samples;
		pt->predicted_ns = (ps.flags & GPUAR_POINT_HAS_PREDICTION) ? ps.predicted_ns : 0;
		memcpy(pt->outcomes, ps.outcomes, sizeof(pt->outcomes));
	}
	return 0;
}
