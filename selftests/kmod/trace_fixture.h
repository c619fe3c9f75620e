/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Reading the module's tracepoints back through tracefs (the guest mounts
 * it at /sys/kernel/tracing). A kernel built without event tracing has no
 * events/ directory: tests skip there. Include after port_fixture.h.
 */
#ifndef GPUAR_SELFTEST_TRACE_FIXTURE_H
#define GPUAR_SELFTEST_TRACE_FIXTURE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACEFS "/sys/kernel/tracing"
#define TRACE_BUF (256 * 1024)

/* The trace buffer's text, NUL-terminated, in a malloc'd buffer. */
static inline char *read_trace(void)
{
	char *buf = calloc(1, TRACE_BUF + 1);
	int fd = open(TRACEFS "/trace", O_RDONLY);
	size_t len = 0;
	ssize_t n;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (len < TRACE_BUF &&
	       (n = read(fd, buf + len, TRACE_BUF - len)) > 0)
		len += n;
	close(fd);
	return buf;
}

/*
 * The first line of @trace that names @event and contains @needle, its
 * length in *@len; NULL when none does.
 */
static inline const char *trace_line(const char *trace, const char *event,
				     const char *needle, size_t *len)
{
	const char *line = trace;

	while (line && *line) {
		const char *end = strchr(line, '\n');

		*len = end ? (size_t)(end - line) : strlen(line);
		if (memmem(line, *len, event, strlen(event)) &&
		    memmem(line, *len, needle, strlen(needle)))
			return line;
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

/* True when a line of @trace names @event and contains @needle. */
static inline bool trace_has(const char *trace, const char *event,
			     const char *needle)
{
	size_t len;

	return trace_line(trace, event, needle, &len) != NULL;
}

/*
 * The decimal value of field @field ("looked=") on the first line of
 * @trace that names @event and contains @needle; -1 when there is none.
 */
static inline long long trace_field(const char *trace, const char *event,
				    const char *needle, const char *field)
{
	size_t len;
	const char *line = trace_line(trace, event, needle, &len);
	const char *at;

	if (!line)
		return -1;
	at = memmem(line, len, field, strlen(field));
	if (!at)
		return -1;
	return strtoll(at + strlen(field), NULL, 10);
}

#endif /* GPUAR_SELFTEST_TRACE_FIXTURE_H */
