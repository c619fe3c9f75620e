// SPDX-License-Identifier: MIT
#include "stat_model.h"
#include "outcome.h"	/* the core's table: the words the module prints */

#include <stdlib.h>
#include <string.h>

const char *stat_outcome_name(unsigned int outcome)
{
	return gpuar_outcome_str(outcome);
}

void stat_snapshot_free(struct stat_snapshot *s)
{
	for (size_t i = 0; i < s->nport; i++)
		free(s->port[i].pt);
	free(s->port);
	s->port = NULL;
	s->nport = 0;
}

struct stat_port *stat_snapshot_add(struct stat_snapshot *s)
{
	struct stat_port *p = realloc(s->port, (s->nport + 1) * sizeof(*p));

	if (!p)
		return NULL;
	s->port = p;
	p = &s->port[s->nport++];
	memset(p, 0, sizeof(*p));
	p->pid = -1;
	return p;
}

struct stat_point *stat_port_add_point(struct stat_port *p)
{
	struct stat_point *pt = realloc(p->pt, (p->npt + 1) * sizeof(*pt));

	if (!pt)
		return NULL;
	p->pt = pt;
	pt = &p->pt[p->npt++];
	memset(pt, 0, sizeof(*pt));
	return pt;
}

uint64_t stat_port_ended(const struct stat_port *p)
{
	uint64_t n = 0;

	for (unsigned int i = 1; i < GPUAR_OUTCOME_COUNT; i++)
		n += p->outcomes[i];
	return n;
}

uint64_t stat_point_ended(const struct stat_point *pt)
{
	uint64_t n = 0;

	for (unsigned int i = 1; i < GPUAR_OUTCOME_COUNT; i++)
		n += pt->outcomes[i];
	return n;
}
