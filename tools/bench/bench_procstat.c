// SPDX-License-Identifier: MIT
#include "bench_procstat.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parse up to @max unsigned decimal columns after @p; returns how many. */
static int parse_columns(const char *p, uint64_t *col, int max)
{
	int n = 0;

	while (n < max) {
		char *end;
		unsigned long long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno)
			break;
		col[n++] = v;
		p = end;
	}
	return n;
}

int bench_procstat_parse(const char *text, struct bench_procstat *out)
{
	const char *line = text;
	bool found = false;

	memset(out, 0, sizeof(*out));
	while (line && *line) {
		if (!strncmp(line, "cpu", 3)) {
			const char *p = line + 3;

			if (*p == ' ' && !found) {
				uint64_t c[8] = { 0 };

				if (parse_columns(p, c, 8) < 4)
					return -1;
				out->user = c[0];
				out->nice = c[1];
				out->system = c[2];
				out->idle = c[3];
				out->iowait = c[4];
				out->irq = c[5];
				out->softirq = c[6];
				out->steal = c[7];
				found = true;
			} else if (isdigit((unsigned char)*p)) {
				out->cpus++;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return found ? 0 : -1;
}

int bench_procstat_read(struct bench_procstat *out)
{
	/* Large enough for machines with a few hundred CPUs. */
	static char buf[1 << 16];
	size_t len = 0;
	ssize_t r;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1 &&
	       (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	buf[len] = '\0';
	if (bench_procstat_parse(buf, out)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

uint64_t bench_procstat_idle(const struct bench_procstat *s)
{
	return s->idle + s->iowait;
}
