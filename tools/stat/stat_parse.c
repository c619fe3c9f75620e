// SPDX-License-Identifier: MIT
#include "stat_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_u64(const char *s, uint64_t *v, const char **end)
{
	char *e;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &e, 0);
	if (errno || e == s)
		return false;
	*v = x;
	if (end)
		*end = e;
	return true;
}

/* One "key:\tvalue" line into @p; false when the key is not a counter. */
static bool port_field(struct stat_port *p, const char *key, size_t klen,
		       uint64_t v)
{
	static const struct {
		const char *key;
		size_t off;
	} fields[] = {
		{ "pending", offsetof(struct stat_port, pending) },
		{ "queued", offsetof(struct stat_port, queued) },
		{ "lines", offsetof(struct stat_port, lines) },
		{ "points", offsetof(struct stat_port, points) },
		{ "submitted", offsetof(struct stat_port, submitted) },
		{ "checks", offsetof(struct stat_port, checks) },
		{ "sleeps", offsetof(struct stat_port, sleeps) },
		{ "timer_fires", offsetof(struct stat_port, timer_fires) },
		{ "busy_read_checks", offsetof(struct stat_port, busy_read_checks) },
		{ "wakeup_latency_ns", offsetof(struct stat_port, wakeup_latency_ns) },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strlen(fields[i].key) == klen && !strncmp(key, fields[i].key, klen)) {
			*(uint64_t *)((char *)p + fields[i].off) = v;
			return true;
		}
	}
	for (unsigned int o = 1; o < GPUAR_OUTCOME_COUNT; o++) {
		const char *name = stat_outcome_name(o);

		if (strlen(name) == klen && !strncmp(key, name, klen)) {
			p->outcomes[o] = v;
			return true;
		}
	}
	if (klen == 14 && !strncmp(key, "record_version", 14)) {
		p->record_version = (uint32_t)v;
		return true;
	}
	if (klen == 7 && !strncmp(key, "creator", 7)) {
		p->pid = (int)v;
		return true;
	}
	return false;
}

/* "key:\tvalue"; true when it was one (known or not). */
static bool key_value(struct stat_port *p, const char *line, bool *known)
{
	const char *colon = strchr(line, ':');
	uint64_t v;

	if (!colon || colon == line || colon[1] != '\t')
		return false;
	if (!parse_u64(colon + 2, &v, NULL))
		return false;
	*known = port_field(p, line, (size_t)(colon - line), v);
	return true;
}

static int point_line(struct stat_port *p, const char *line)
{
	struct stat_point *pt = stat_port_add_point(p);
	const char *s = line + 6;	/* after "point " */

	if (!pt)
		return -1;
	if (!parse_u64(s, &pt->point, &s))
		return -1;
	while (*s == ' ') {
		const char *eq = strchr(++s, '=');
		size_t klen;
		uint64_t v;

		if (!eq || !parse_u64(eq + 1, &v, NULL))
			return -1;
		klen = (size_t)(eq - s);
		if (klen == 7 && !strncmp(s, "samples", 7)) {
			pt->samples = v;
		} else if (klen == 12 && !strncmp(s, "predicted_ns", 12)) {
			pt->predicted_ns = v;
		} else {
			for (unsigned int o = 1; o < GPUAR_OUTCOME_COUNT; o++)
				if (strlen(stat_outcome_name(o)) == klen &&
				    !strncmp(s, stat_outcome_name(o), klen))
					pt->outcomes[o] = v;
		}
		s = eq + 1 + strcspn(eq + 1, " \n");
	}
	return 0;
}

int stat_parse_debugfs(const char *text, struct stat_snapshot *s)
{
	struct stat_port *p = NULL;
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[512];
		bool known;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!strncmp(buf, "port ", 5)) {
			p = stat_snapshot_add(s);
			if (!p)
				return -1;
			snprintf(p->id, sizeof(p->id), "%.39s", buf + 5);
			p->has_points = true;
		} else if (p && !strncmp(buf, "point ", 6)) {
			if (point_line(p, buf))
				return -1;
		} else if (p) {
			key_value(p, buf, &known);
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int stat_parse_fdinfo(const char *text, struct stat_port *p)
{
	const char *line = text;
	bool port = false;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[256];
		bool known = false;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (key_value(p, buf, &known) && known &&
		    !strncmp(buf, "submitted:", 10))
			port = true;
		line = nl ? nl + 1 : NULL;
	}
	return port ? 0 : -1;
}
