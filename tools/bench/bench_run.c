// SPDX-License-Identifier: MIT
#include "bench_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_counts.h"
#include "bench_cpu.h"
#include "bench_procstat.h"

struct rep_state {
	struct bench_ctx ctx;
	const struct bench_strategy *st;
	void *state;
	struct bench_rng rng[BENCH_MAX_STREAMS];
	uint64_t seq[BENCH_MAX_STREAMS];
	uint64_t launched;
	uint64_t submit_cpu_ns;
};

static int launch(struct rep_state *rs, unsigned int s)
{
	struct bench_ctx *ctx = &rs->ctx;
	uint64_t seq = ++rs->seq[s];
	int err;

	ctx->target[s] = seq;
	ctx->pending++;
	if (rs->st->submit) {
		uint64_t t0 = ctx->cfg->split_submit ? bench_thread_cpu_ns() : 0;

		err = rs->st->submit(rs->state, ctx, s, seq);
		if (ctx->cfg->split_submit)
			rs->submit_cpu_ns += bench_thread_cpu_ns() - t0;
		if (err)
			return err;
	}
	bench_device_launch(ctx->dev, s, seq,
			    bench_workload_next_ns(&ctx->cfg->wl, &rs->rng[s]));
	rs->launched++;
	return bench_device_failure(ctx->dev, ctx->first_error,
				    sizeof(ctx->first_error));
}

/*
 * The machine's busy rate with the benchmark idle (device asleep, waiter
 * sleeping), CPU-ns per wall-ns, measured before each round of
 * repetitions: on a shared machine other programs' load lands in every
 * strategy's system CPU, and this shows how much of it. 0 when not
 * measured.
 */
static double background_rate(const struct bench_config *cfg)
{
	struct bench_procstat a, b;
	struct bench_cpu_sample cs = { .ticks_per_s = sysconf(_SC_CLK_TCK) };
	uint64_t t0;

	if (!cfg->background_ns || bench_procstat_read(&a))
		return 0.0;
	t0 = bench_now_ns();
	bench_sleep_until(t0 + cfg->background_ns);
	cs.wall_ns = bench_now_ns() - t0;
	if (bench_procstat_read(&b))
		return 0.0;
	cs.cpus = b.cpus;
	cs.idle_ticks = bench_procstat_idle(&b) - bench_procstat_idle(&a);
	return bench_system_cpu_ns(&cs) / (double)cs.wall_ns;
}

/*
 * The system calls so far, the library's for the port and the bench's;
 * not counted for a strategy waiting through a vendor API.
 */
static void syscalls_read(struct rep_state *rs, struct bench_counts *c)
{
	uint64_t lib = 0;

	c->has_syscalls = !rs->st->gpu_only &&
			  (!rs->st->lib_syscalls ||
			   rs->st->lib_syscalls(rs->state, &lib) == 0);
	c->syscalls = lib + __atomic_load_n(&bench_syscall_count,
					    __ATOMIC_RELAXED);
}

/*
 * The counts so far: the waiter's thread, the helper's, the port's. The
 * system calls are read after the port's statistics at the start and
 * before them at the end, so their own ioctl is never counted.
 */
static void counts_read(struct rep_state *rs, struct bench_counts *c,
			bool start)
{
	memset(c, 0, sizeof(*c));
	bench_counts_thread(c);
	c->helper_wakeups = __atomic_load_n(&rs->ctx.helper_wakeups,
					    __ATOMIC_RELAXED);
	struct gpuar_port_stats st;

	if (!start)
		syscalls_read(rs, c);
	c->has_port = rs->st->port_stats &&
		      rs->st->port_stats(rs->state, &st) == 0;
	if (start)
		syscalls_read(rs, c);
	if (c->has_port)
		c->port = (struct bench_port_counts){
			.timer_fires = st.timer_fires,
			.checks = st.checks,
			.imminent = st.imminent,
			.claims = st.claims,
			.lease_expiries = st.lease_expiries,
			.late = st.outcomes[GPUAR_OUTCOME_LATE],
		};
}

/*
 * One repetition. @lat and @det have room for cfg->wl.waits samples each
 * (latencies; the port's detection, complete - store). Returns 0, or a
 * negative errno with the reason in r->reason (the repetition is lost).
 */
static int run_rep(struct bench_result *r, const struct bench_config *cfg,
		   struct bench_device *dev, unsigned int rep, double bg, double *lat,
		   double *det)
{
	struct rep_state rs = { .ctx = { .cfg = cfg, .dev = dev }, .st = &r->st };
	struct bench_done done[BENCH_MAX_STREAMS];
	struct bench_procstat ps0, ps1;
	struct bench_cpu_sample cs = { .ticks_per_s = sysconf(_SC_CLK_TCK) };
	struct bench_rep *out = &r->rep[r->reps];
	struct bench_counts c0, c1;
	struct bench_counts_per_wait pw;
	uint64_t t0, w0, d0, completed = 0, timed = 0, detected = 0;
	int err = 0;

	bench_device_reset(dev);
	atomic_store(&dev->notify, r->st.notify);
	if (r->st.open) {
		err = r->st.open(&r->st, &rs.ctx, &rs.state, r->reason,
				 sizeof(r->reason));
		if (err)
			return err;
	}
	/* With the strategy's lines in place (a GPU registers them). */
	err = bench_device_arm(dev, r->reason, sizeof(r->reason));
	if (err)
		goto close;
	for (unsigned int s = 0; s < dev->streams; s++)
		bench_workload_rng(&cfg->wl, rep, s, &rs.rng[s]);

	if (bench_procstat_read(&ps0)) {
		err = -errno;
		snprintf(r->reason, sizeof(r->reason), "/proc/stat: %s", strerror(errno));
		goto close;
	}
	counts_read(&rs, &c0, true);
	t0 = bench_now_ns();
	w0 = bench_thread_cpu_ns();
	d0 = bench_device_cpu_ns(dev);

	for (unsigned int s = 0; s < dev->streams && !err; s++)
		err = launch(&rs, s);
	while (!err && completed < cfg->wl.waits) {
		int n = r->st.wait(rs.state, &rs.ctx, done, BENCH_MAX_STREAMS);

		if (n < 0) {
			err = n;
			break;
		}
		for (int i = 0; i < n; i++) {
			unsigned int s = done[i].stream;
			uint64_t store = bench_device_store_ns(&dev->stream[s], rs.seq[s]);

			if ((err = bench_device_failure(dev, rs.ctx.first_error,
							sizeof(rs.ctx.first_error))))
				break;
			rs.ctx.pending--;
			completed++;
			if (done[i].error)
				rs.ctx.errors++;
			else
				lat[timed++] = done[i].seen_ns > store ?
					(double)(done[i].seen_ns - store) / 1000.0 : 0.0;
			if (!done[i].error && done[i].complete_ns)
				det[detected++] = done[i].complete_ns > store ?
					(double)(done[i].complete_ns - store) / 1000.0 : 0.0;
			/* Seen before stored: only a mapped device clock can. */
			if (!done[i].error && done[i].seen_ns < store)
				bench_device_note_early(dev, store - done[i].seen_ns);
			if (rs.launched < cfg->wl.waits && (err = launch(&rs, s)))
				break;
		}
	}
	if (err) {
		if (dev->kind == BENCH_DEVICE_CUDA && rs.ctx.first_error[0])
			snprintf(r->reason, sizeof(r->reason), "repetition %u failed: %.120s",
				 rep + 1, rs.ctx.first_error);
		else
			snprintf(r->reason, sizeof(r->reason), "repetition %u failed: %s",
				 rep + 1, strerror(-err));
		bench_device_drain(dev);
		goto close;
	}

	cs.wall_ns = bench_now_ns() - t0;
	cs.device_ns = bench_device_cpu_ns(dev) - d0;
	cs.device_notify_ns = atomic_load(&dev->notify_cpu_ns);
	out->waiter_cpu_us = (double)(bench_thread_cpu_ns() - w0) / 1000.0 /
			     (double)completed;
	if (bench_procstat_read(&ps1)) {
		err = -errno;
		snprintf(r->reason, sizeof(r->reason), "/proc/stat: %s", strerror(errno));
		goto close;
	}
	cs.cpus = ps1.cpus;
	cs.idle_ticks = bench_procstat_idle(&ps1) - bench_procstat_idle(&ps0);
	out->system_cpu_us = bench_system_cpu_ns(&cs) / 1000.0 / (double)completed;
	out->background_cpu_us = bg * (double)cs.wall_ns / 1000.0 / (double)completed;
	out->submit_cpu_us = (double)rs.submit_cpu_ns / 1000.0 / (double)completed;
	out->waits_per_s = (double)completed * 1e9 / (double)cs.wall_ns;
	out->waits = completed;
	out->errors = rs.ctx.errors + atomic_load(&dev->notify_errors);
	if (atomic_load(&dev->notify_errors))
		bench_note_error(&rs.ctx, "%llu fence signals failed",
				 (unsigned long long)atomic_load(&dev->notify_errors));
	if (out->errors && !r->reason[0])
		snprintf(r->reason, sizeof(r->reason), "repetition %u: %llu errors, first: %.100s",
			 rep + 1, (unsigned long long)out->errors, rs.ctx.first_error);
	out->late_stores = atomic_load(&dev->late_stores);
	counts_read(&rs, &c1, false);
	pw = bench_counts_per_wait(&c0, &c1, completed);
	out->port = pw.port;
	out->ctx_switches = pw.ctx_switches;
	out->wakeups = pw.wakeups;
	out->syscalls = pw.syscalls;
	bench_sort(lat, timed);
	out->p50 = bench_percentile(lat, timed, 50);
	out->p90 = bench_percentile(lat, timed, 90);
	out->p99 = bench_percentile(lat, timed, 99);
	out->max = bench_percentile(lat, timed, 100);
	bench_sort(det, detected);
	out->detect_p50 = detected ? bench_percentile(det, detected, 50) : -1.0;
	r->reps++;
close:
	bench_device_disarm(dev);
	if (r->st.close)
		r->st.close(rs.state, &rs.ctx);
	atomic_store(&dev->notify, BENCH_NOTIFY_NONE);
	return err;
}

static void progress_line(const struct bench_run *run, unsigned int rep,
			  const struct bench_result *r, bool done)
{
	if (done) {
		fprintf(stderr, "\r\033[K");
		return;
	}
	fprintf(stderr, "\r\033[Kgpuar-bench: repetition %u/%u  %-14s %llu waits of %llu us",
		rep + 1, run->cfg.reps, r->st.name,
		(unsigned long long)run->cfg.wl.waits,
		(unsigned long long)run->cfg.wl.work_us);
	fflush(stderr);
}

int bench_run_all(struct bench_run *run, bool progress)
{
	const struct bench_config *cfg = &run->cfg;
	struct bench_device dev;
	double *lat = malloc(2 * cfg->wl.waits * sizeof(*lat));
	int err;

	if (!lat)
		return -ENOMEM;
	memset(&run->env.device, 0, sizeof(run->env.device));
	run->env.device.kind = cfg->device;
	if (cfg->device == BENCH_DEVICE_CUDA)
		err = bench_device_start_cuda(&dev, cfg->wl.streams,
					      run->env.device.error,
					      sizeof(run->env.device.error));
	else
		err = bench_device_start(&dev, cfg->wl.streams, cfg->lead_ns,
					 cfg->device_cpu);
	if (err) {
		free(lat);
		return err;
	}
	for (unsigned int rep = 0; rep < cfg->reps; rep++) {
		/* Once per round: /proc/stat's 10 ms ticks need a long interval. */
		double bg = background_rate(cfg);

		for (unsigned int i = 0; i < run->results; i++) {
			struct bench_result *r = &run->result[i];

			/* A strategy that failed once is not run again. */
			if (r->skipped || r->reps < rep)
				continue;
			if (progress)
				progress_line(run, rep, r, false);
			run_rep(r, cfg, &dev, rep, bg, lat, lat + cfg->wl.waits);
		}
	}
	if (progress)
		progress_line(run, 0, NULL, true);
	bench_device_describe(&dev, &run->env.device);
	bench_device_stop(&dev);
	free(lat);
	for (unsigned int i = 0; i < run->results; i++)
		bench_summarize(&run->result[i]);
	bench_choose_oracle(run);
	return 0;
}
