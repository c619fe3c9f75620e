// SPDX-License-Identifier: MIT
/*
 * The user engine's own table of the port's lines, by id: what a submit
 * looks an entry's line up in, and what keeps a line registered while a
 * wait or a parked reaper reads its words. It is the engine's, under its
 * lock, apart from the generic layer's table of line objects.
 */
#include "engine_user.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


/* The index of line @id in u->lines, or where it would go. Lock held. */
static u32 line_index(const struct uport *u, u32 id)
{
	u32 lo = 0, hi = u->nlines;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (u->lines[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Line @id, or NULL when no such line is registered. Lock held. */
struct uline *uport_line_find(const struct uport *u, u32 id)
{
	u32 i = line_index(u, id);

	return i < u->nlines && u->lines[i]->id == id ? u->lines[i] : NULL;
}

int uport_line_register(struct gpuar_port *port, struct gpuar_line *line)
{
	struct uport *u = uport_of(port);
	struct uline *ul = calloc(1, sizeof(*ul));
	int ret = -ENOMEM;
	u32 i;

	if (!ul)
		return -ENOMEM;
	pthread_mutex_lock(&u->lock);
	if (u->nlines == u->lines_cap) {
		u32 cap = u->lines_cap ? u->lines_cap * 2 : 16;
		struct uline **n = realloc(u->lines, cap * sizeof(*n));

		if (!n)
			goto out;
		u->lines = n;
		u->lines_cap = cap;
	}
	ul->id = ++u->next_line_id;
	ul->words = line->words;
	i = line_index(u, ul->id);
	memmove(&u->lines[i + 1], &u->lines[i],
		(u->nlines - i) * sizeof(*u->lines));
	u->lines[i] = ul;
	u->nlines++;
	line->id = ul->id;
	ul = NULL;
	ret = 0;
out:
	pthread_mutex_unlock(&u->lock);
	free(ul);
	return ret;
}

/* Refused (-EBUSY) while a wait or a parked reaper uses the line. */
int uport_line_unregister(struct gpuar_port *port, struct gpuar_line *line)
{
	struct uport *u = uport_of(port);
	struct uline *ul;
	int ret = 0;
	u32 i;

	pthread_mutex_lock(&u->lock);
	i = line_index(u, line->id);
	ul = i < u->nlines ? u->lines[i] : NULL;
	if (!ul || ul->id != line->id) {
		ret = -EINVAL;
	} else if (ul->pending) {
		ret = -EBUSY;
	} else {
		u->nlines--;
		memmove(&u->lines[i], &u->lines[i + 1],
			(u->nlines - i) * sizeof(*u->lines));
		free(ul);
	}
	pthread_mutex_unlock(&u->lock);
	return ret;
}
