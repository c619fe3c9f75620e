/* SPDX-License-Identifier: MIT */
/* Where gpuar-stat reads the module's ports from. */
#ifndef GPUAR_STAT_COLLECT_H
#define GPUAR_STAT_COLLECT_H

#include "stat_model.h"

#define STAT_DEBUGFS_PORTS "/sys/kernel/debug/gpuar/ports"
/* readlink() of a port's fd. */
#define STAT_PORT_LINK "anon_inode:[gpuar_port]"

/*
 * Every port with its points, from debugfs (root, debugfs mounted).
 * 0, or a negative errno (-ENOENT: module not loaded or debugfs not
 * mounted; -EACCES: not root).
 */
int stat_collect_debugfs(const char *path, struct stat_snapshot *s);

/*
 * Every port fd of the processes this user may inspect (all, for root),
 * from /proc/PID/fdinfo: counters without points. @pid > 0 restricts to
 * one process. 0 or a negative errno.
 */
int stat_collect_fdinfo(int pid, struct stat_snapshot *s);

#endif /* GPUAR_STAT_COLLECT_H */
