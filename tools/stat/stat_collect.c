// SPDX-License-Identifier: MIT
#include "stat_collect.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stat_parse.h"

/* Read a whole (small, pseudo) file into a NUL-terminated heap buffer. */
static char *slurp(const char *path, int *err)
{
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf) {
		*err = fd < 0 ? -errno : -ENOMEM;
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)r;
		if (len + 1 == cap) {
			char *n = realloc(buf, cap * 2);

			if (!n) {
				*err = -ENOMEM;
				free(buf);
				close(fd);
				return NULL;
			}
			buf = n;
			cap *= 2;
		}
	}
	*err = r < 0 ? -errno : 0;
	close(fd);
	if (*err) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

int stat_collect_debugfs(const char *path, struct stat_snapshot *s)
{
	int err;
	char *text = slurp(path, &err);

	if (!text)
		return err;
	s->source = "debugfs";
	err = stat_parse_debugfs(text, s) ? -EINVAL : 0;
	free(text);
	return err;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static int scan_process(const char *pid, struct stat_snapshot *s)
{
	char path[600];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;	/* gone, or not ours to see */
	while ((e = readdir(d))) {
		char link[64], info[600];
		ssize_t n;
		struct stat_port *p;
		char *text;
		int err;

		if (!all_digits(e->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, STAT_PORT_LINK))
			continue;
		snprintf(info, sizeof(info), "/proc/%s/fdinfo/%s", pid, e->d_name);
		text = slurp(info, &err);
		if (!text)
			continue;
		p = stat_snapshot_add(s);
		if (!p) {
			free(text);
			closedir(d);
			return -ENOMEM;
		}
		snprintf(p->id, sizeof(p->id), "%.16s/%.16s", pid, e->d_name);
		if (stat_parse_fdinfo(text, p))
			s->nport--;	/* not a port after all (raced with close) */
		free(text);
	}
	closedir(d);
	return 0;
}

int stat_collect_fdinfo(int pid, struct stat_snapshot *s)
{
	DIR *d;
	struct dirent *e;
	int err = 0;

	s->source = "fdinfo";
	if (pid > 0) {
		char p[16];

		snprintf(p, sizeof(p), "%d", pid);
		return scan_process(p, s);
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!err && (e = readdir(d)))
		if (all_digits(e->d_name))
			err = scan_process(e->d_name, s);
	closedir(d);
	return err;
}
