/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The fuzzer's mix of operations, paced to a calls target inside a time
 * bound. Each operation has a weight (its share of draws in the full
 * mix) and a measured cost (its mean time so far). On a kernel where the
 * full mix cannot make the target in time (a debug kernel under TCG,
 * where forking or creating a port costs tens of milliseconds), the
 * dearest operations are thinned, each to a power-of-two fraction of its
 * weight and never below 1/2^MIX_THIN_MAX of it, so every operation is
 * still drawn, only more seldom. What a call checks does not change.
 *
 * A mix is written "full" or as a list of thinned operations,
 * "fork/32,remap/16,submit_words/2", both to print a change and to
 * replay one (kfuzz --mix <call>:<mix>).
 */
#ifndef GPUAR_SELFTEST_KFUZZ_MIX_H
#define GPUAR_SELFTEST_KFUZZ_MIX_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIX_OPS_MAX 32
#define MIX_THIN_MAX 5		/* thinned at most to 1/32 */

struct mix_op {
	const char *name;
	unsigned int weight;	/* 0: never drawn (run for another reason) */
};

struct mix {
	const struct mix_op *ops;
	unsigned int n;
	unsigned int thin[MIX_OPS_MAX];	/* drawn at weight / 2^thin */
	uint64_t count[MIX_OPS_MAX], ns[MIX_OPS_MAX];	/* run so far, time */
};

/* @op's weight under @thin, in units of 2^-MIX_THIN_MAX. */
static inline uint64_t mix_weight(const struct mix *m,
				  const unsigned int *thin, unsigned int op)
{
	return (uint64_t)m->ops[op].weight << (MIX_THIN_MAX - thin[op]);
}

/* The operation a uniform random @r draws. */
static inline unsigned int mix_draw(const struct mix *m, uint64_t r)
{
	uint64_t total = 0;
	unsigned int op, last = 0;

	for (op = 0; op < m->n; op++)
		total += mix_weight(m, m->thin, op);
	r %= total;
	for (op = 0; op < m->n; op++) {
		uint64_t w = mix_weight(m, m->thin, op);

		if (!w)
			continue;
		if (r < w)
			return op;
		r -= w;
		last = op;
	}
	return last;
}

static inline void mix_account(struct mix *m, unsigned int op, uint64_t ns)
{
	m->count[op]++;
	m->ns[op] += ns;
}

/*
 * The mean cost of a draw (ns) under @thin: each operation at its mean
 * so far, one not run yet at the mean of all.
 */
static inline double mix_mean(const struct mix *m, const unsigned int *thin)
{
	double all_ns = 0, all_n = 0, w = 0, t = 0;
	unsigned int op;

	for (op = 0; op < m->n; op++) {
		all_ns += (double)m->ns[op];
		all_n += (double)m->count[op];
	}
	for (op = 0; op < m->n; op++) {
		double wi = (double)mix_weight(m, thin, op);
		double cost = m->count[op] ?
			      (double)m->ns[op] / (double)m->count[op] :
			      all_n ? all_ns / all_n : 0;

		w += wi;
		t += wi * cost;
	}
	return w ? t / w : 0;
}

/*
 * Thin the mix until a draw costs at most @budget_ns on average: again
 * and again halve the operation whose halving lowers the mean most,
 * until the mean fits or no halving lowers it. Starts from the full mix,
 * so a budget that grew gives weight back. True if the mix changed.
 */
static inline bool mix_plan(struct mix *m, double budget_ns)
{
	unsigned int thin[MIX_OPS_MAX] = { 0 }, op;
	bool changed = false;

	for (;;) {
		double best = mix_mean(m, thin);
		int pick = -1;

		if (best <= budget_ns)
			break;
		for (op = 0; op < m->n; op++) {
			double e;

			if (!m->ops[op].weight || thin[op] == MIX_THIN_MAX)
				continue;
			thin[op]++;
			e = mix_mean(m, thin);
			thin[op]--;
			if (e < best) {
				best = e;
				pick = (int)op;
			}
		}
		if (pick < 0)
			break;
		thin[pick]++;
	}
	for (op = 0; op < m->n; op++) {
		changed |= thin[op] != m->thin[op];
		m->thin[op] = thin[op];
	}
	return changed;
}

/*
 * Keep pace: @calls_left more calls in @ns_left, a fifth of it held back
 * (for the end's drain, and the unevenness of a loaded machine).
 * Re-plans only when the mix costs more than that allows, or less than
 * half (so that it does not swing at every look). True if it changed.
 */
static inline bool mix_pace(struct mix *m, uint64_t calls_left,
			    uint64_t ns_left)
{
	double budget, mean = mix_mean(m, m->thin);

	if (!calls_left)
		return false;
	budget = 0.8 * (double)ns_left / (double)calls_left;
	if (mean <= budget && mean >= budget / 2)
		return false;
	return mix_plan(m, budget);
}

/* Write the mix ("full", or "fork/32,remap/16") into @buf. */
static inline void mix_format(const struct mix *m, char *buf, size_t len)
{
	size_t at = 0;
	unsigned int op;

	snprintf(buf, len, "full");
	for (op = 0; op < m->n && at < len; op++) {
		if (!m->thin[op])
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s/%u",
				       at ? "," : "", m->ops[op].name,
				       1u << m->thin[op]);
	}
}

/* Set the mix from its written form. 0, or -1 for one that is not. */
static inline int mix_parse(struct mix *m, const char *text)
{
	unsigned int thin[MIX_OPS_MAX] = { 0 }, op, t;
	const char *at = text;

	if (!strcmp(text, "full")) {
		memcpy(m->thin, thin, sizeof(thin));
		return 0;
	}
	for (;;) {
		size_t name_len = strcspn(at, "/");
		unsigned long div;
		char *after;

		for (op = 0; op < m->n; op++)
			if (strlen(m->ops[op].name) == name_len &&
			    !strncmp(at, m->ops[op].name, name_len))
				break;
		if (op == m->n || !m->ops[op].weight || at[name_len] != '/' ||
		    !isdigit((unsigned char)at[name_len + 1]))
			return -1;
		div = strtoul(at + name_len + 1, &after, 10);
		for (t = 0; t < MIX_THIN_MAX && (1ul << t) != div; t++)
			;
		if ((1ul << t) != div)
			return -1;
		thin[op] = t;
		if (!*after)
			break;
		if (*after != ',')
			return -1;
		at = after + 1;
	}
	memcpy(m->thin, thin, sizeof(thin));
	return 0;
}

/*
 * Each operation's count, total and mean time, as TAP comments (not those
 * never drawn and never run).
 */
static inline void mix_print_profile(const struct mix *m, const char *who)
{
	unsigned int op;

	for (op = 0; op < m->n; op++)
		if (m->ops[op].weight || m->count[op])
			printf("# %s profile: %-13s %7llu ops %7llu ms %6llu us/op\n",
			       who, m->ops[op].name,
			       (unsigned long long)m->count[op],
			       (unsigned long long)(m->ns[op] / 1000000),
			       (unsigned long long)(m->count[op] ?
					m->ns[op] / m->count[op] / 1000 : 0));
}

#endif
