/* SPDX-License-Identifier: MIT */
/*
 * The whole machine's CPU time, from /proc/stat. Only the aggregate "cpu"
 * line's idle and iowait columns matter for the accounting (busy = CPUs x
 * wall - idle), and the number of "cpuN" lines gives the CPUs that were
 * counted. Values are in USER_HZ ticks as the kernel prints them.
 */
#ifndef GPUAR_BENCH_PROCSTAT_H
#define GPUAR_BENCH_PROCSTAT_H

#include <stdint.h>

struct bench_procstat {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	unsigned int cpus;	/* cpuN lines seen */
};

/*
 * Parse the text of /proc/stat. Returns 0, or -1 when the aggregate line
 * is missing or has fewer than the four columns every kernel prints
 * (user nice system idle); columns an old kernel lacks read as zero.
 */
int bench_procstat_parse(const char *text, struct bench_procstat *out);

/* Read and parse /proc/stat; -1 with errno set on failure. */
int bench_procstat_read(struct bench_procstat *out);

/* Idle ticks (idle + iowait: a CPU waiting on I/O runs nothing). */
uint64_t bench_procstat_idle(const struct bench_procstat *s);

#endif /* GPUAR_BENCH_PROCSTAT_H */
