/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the module's text statistics (kmod/stats.c):
 *
 *   debugfs gpuar/ports   for each port: "port <handle>", then "key:\tvalue"
 *                         lines (record_version, creator, pending, queued,
 *                         lines, points, submitted, one per outcome name,
 *                         checks, sleeps, timer_fires, busy_read_checks,
 *                         wakeup_latency_ns), then one line per point:
 *                         "point 0x<key> samples=N predicted_ns=N <outcome>=N ...",
 *                         then a blank line.
 *   /proc/PID/fdinfo/FD   the kernel's pos/flags/mnt_id/ino lines, then the
 *                         same "key:\tvalue" lines (no points).
 *
 * Unknown keys are ignored, so a module that adds counters stays readable.
 */
#ifndef GPUAR_STAT_PARSE_H
#define GPUAR_STAT_PARSE_H

#include "stat_model.h"

/* Append every port in @text to @s. 0, or -1 (allocation failure, or a
 * point line that does not parse). */
int stat_parse_debugfs(const char *text, struct stat_snapshot *s);

/* Fill @p from an fdinfo text; returns 0, or -1 when it is not a port's
 * (no submitted: line). */
int stat_parse_fdinfo(const char *text, struct stat_port *p);

#endif /* GPUAR_STAT_PARSE_H */
