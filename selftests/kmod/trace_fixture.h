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
#define TRACE_CHUNK (256 * 1024)
#define TRACE_MAX (64 * 1024 * 1024)

/*
 * The trace buffer's text, NUL-terminated, in a malloc'd buffer: all of
 * it (up to TRACE_MAX), since the events a test looks for come last and
 * a slow kernel's timer may have traced many checks before them.
 */
static inline char *read_trace(void)
{
	int fd = open(TRACEFS "/trace", O_RDONLY);
	size_t len = 0, cap = 0;
	char *buf = NULL;
	ssize_t n;

	if (fd < 0)
		return NULL;
	do {
		if (cap - len < TRACE_CHUNK) {
			char *more = cap + TRACE_CHUNK + 1 > TRACE_MAX ? NULL :
				     realloc(buf, cap + TRACE_CHUNK + 1);

			if (!more) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = more;
			cap += TRACE_CHUNK;
		}
		n = read(fd, buf + len, cap - len);
		if (n > 0)
			len += (size_t)n;
	} while (n > 0);
	close(fd);
	buf[len] = '\0';
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
