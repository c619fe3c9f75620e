// SPDX-License-Identifier: MIT
/* gpuar-bench --throughput: the shared area's reap against read() (bench_throughput.h). */
#include "bench_throughput.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gpuar/gpuar.h>

#include "bench_clock.h"
#include "bench_result.h"

#define BATCH 64
/* Done at submission: the word is at its target already. */
#define DONE_PLAN "flag:park_us=1000,backstop_us=1000000"

struct reap_port {
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_word_wait w[BATCH];
	double rps[BENCH_REPS_MAX], calls[BENCH_REPS_MAX];
};

static uint64_t lib_syscalls(struct gpuar_port *p, bool *area)
{
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };

	if (gpuar_port_lib_stats(p, &st))
		return 0;
	if (area)
		*area = st.flags & GPUAR_LIB_STATS_AREA;
	return st.syscalls;
}

static int open_port(struct reap_port *rp, const struct bench_config *cfg,
		     uint32_t flags, char *why, size_t size)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_KERNEL,
		.flags = flags | GPUAR_PORT_STRICT,
		.device_path = cfg->device_path,
	};
	struct gpuar_plan plan;
	struct gpuar_error err;
	int ret = gpuar_port_open(&rp->port, &o, &err);

	if (ret) {
		snprintf(why, size, "kernel engine: %.140s",
			 err.message);
		return ret;
	}
	ret = gpuar_line_alloc(rp->port, &rp->line);
	if (!ret)
		ret = gpuar_plan_from_text(DONE_PLAN, &plan, NULL);
	if (ret) {
		snprintf(why, size, "a line or the plan: %s", strerror(-ret));
		return ret;
	}
	gpuar_line_words(rp->line)[0] = 1;
	for (unsigned int i = 0; i < BATCH; i++)
		rp->w[i] = (struct gpuar_word_wait){
			.target = 1, .point = 1, .line = gpuar_line_id(rp->line),
			.plan = plan,
		};
	return 0;
}

/* Submit @n done waits, wait until the module completed them, time the reap. */
static int round_on(struct reap_port *rp, uint32_t n, unsigned int round,
		    char *why, size_t size)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_record rec[BATCH];
	uint64_t t0, c0, got = 0;
	uint32_t left = n, k;
	int ret;

	while (left) {
		k = left < BATCH ? left : BATCH;
		ret = gpuar_submit_word_waits(rp->port, rp->w, k, NULL);
		if (ret != (int)k) {
			snprintf(why, size, "submitting %u waits: %s", n,
				 strerror(ret < 0 ? -ret : EIO));
			return -1;
		}
		left -= k;
	}
	do
		ret = gpuar_port_stats(rp->port, &st);
	while (!ret && st.pending);
	c0 = lib_syscalls(rp->port, NULL);
	t0 = bench_now_ns();
	while (got < n) {
		ret = gpuar_port_reap(rp->port, rec, BATCH, 0);
		if (ret <= 0) {
			snprintf(why, size, "reaping: %s after %llu of %u records",
				 strerror(-ret), (unsigned long long)got, n);
			return -1;
		}
		got += (uint64_t)ret;
	}
	rp->rps[round] = (double)n * 1e9 / (double)(bench_now_ns() - t0 + 1);
	rp->calls[round] = (double)(lib_syscalls(rp->port, NULL) - c0) / n;
	return 0;
}

static void way_of(struct bench_reap_way *w, const struct reap_port *rp,
		   unsigned int rounds)
{
	w->records_per_s = bench_spread_of(rp->rps, rounds);
	w->syscalls_per_record = bench_spread_of(rp->calls, rounds);
}

int bench_throughput_run(const struct bench_config *cfg,
			 struct bench_throughput *t)
{
	struct reap_port ring = { 0 }, rd = { 0 }, *order[2];
	bool area = false;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	t->records = cfg->throughput;
	if (open_port(&ring, cfg, 0, t->reason, sizeof(t->reason)))
		goto out;
	lib_syscalls(ring.port, &area);
	if (!area) {
		snprintf(t->reason, sizeof(t->reason),
			 "the module has no shared completion area (GPUAR_FEATURE_AREA)");
		goto out;
	}
	if (open_port(&rd, cfg, GPUAR_PORT_NO_AREA, t->reason, sizeof(t->reason)))
		goto out;
	t->available = true;
	for (unsigned int r = 0; r < cfg->reps && !ret; r++) {
		order[r % 2] = &ring;
		order[1 - r % 2] = &rd;
		for (unsigned int i = 0; i < 2 && !ret; i++)
			ret = round_on(order[i], t->records, r, t->reason,
				       sizeof(t->reason));
		t->rounds += !ret;
	}
	way_of(&t->area, &ring, t->rounds);
	way_of(&t->read, &rd, t->rounds);
out:
	gpuar_port_close(ring.port);
	gpuar_port_close(rd.port);
	return ret;
}
