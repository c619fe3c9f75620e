// SPDX-License-Identifier: MIT
/* The human table: medians, with the spread over repetitions in brackets. */
#include <string.h>

#include "bench_report.h"

double bench_core_pct(const struct bench_summary *s)
{
	return s->system_cpu_us.median * s->waits_per_s.median / 1e4;
}

static void cell(char *buf, size_t size, const struct bench_spread *s)
{
	snprintf(buf, size, "%.2f [%.2f-%.2f]", s->median, s->min, s->max);
}

static void header(FILE *f, const struct bench_run *run)
{
	const struct bench_config *cfg = &run->cfg;
	const struct bench_workload *w = &cfg->wl;

	fprintf(f, "gpuar-bench: kernel %s, %u CPUs, virt %s, clocksource %s, engine %s, %s\n",
		run->env.kernel, run->env.cpus, run->env.virt, run->env.clocksource,
		run->env.engine, run->env.date);
	fprintf(f, "workload: %s %llu us", bench_workload_kind_name(w->kind),
		(unsigned long long)w->work_us);
	if (w->kind == BENCH_WL_JITTER)
		fprintf(f, " +-%llu us", (unsigned long long)w->jitter_us);
	if (w->kind == BENCH_WL_BIMODAL)
		fprintf(f, " or %llu us (%u%%)", (unsigned long long)w->work2_us,
			w->bimodal_pct);
	fprintf(f, ", %llu waits x %u repetitions, %u stream%s, seed %llu; %s\n",
		(unsigned long long)w->waits, cfg->reps, w->streams,
		w->streams == 1 ? "" : "s", (unsigned long long)w->seed,
		run->env.wait_cpus);
	fprintf(f, "plan (user-predict, kport-*): %s\n", cfg->plan_text);
	if (cfg->device == BENCH_DEVICE_CUDA) {
		const struct bench_device_info *d = &run->env.device;

		fprintf(f, "device: cuda, %s (driver %d, %s); latency counts from the spin "
			"kernel's last %%globaltimer read,\n"
			"mapped onto the host clock to +-%.2f us (the worst of %u ping-pong "
			"syncs; offset drift %.2f us)\n", d->gpu, d->driver_version,
			d->sched, d->clock_sync_uncertainty_us, d->clock_syncs,
			d->clock_offset_drift_us);
		if (d->early_waits)
			fprintf(f, "%llu waits were seen before their mapped store time "
				"(by up to %.2f us; counted as 0)\n",
				(unsigned long long)d->early_waits, d->most_early_us);
	}
	if (!strcmp(run->env.virt, "tcg"))
		fprintf(f, "inside a TCG VM: figures are indicative; compare ratios within this run\n");
	fprintf(f, "latency = waiter saw it - device stored (us); CPU in us per wait: "
		"waiter (its thread), system (all CPUs x wall - idle - device),\n"
		"%%core (system CPU as a share of one core's time), backgr (the machine's "
		"own load with the benchmark idle, included in system);\n"
		"medians [min-max] over repetitions\n"
		"counts per wait: timers (the port's timer firings; - without a port), "
		"sys/w (system calls made to wait: the library's for the port\n"
		"and the strategy's own; - where a vendor API makes them), "
		"csw (the waiter thread's context switches), wakes (its blocks ended\n"
		"by a wake-up, plus a helper thread's)\n\n");
}

/*
 * Where a strategy's latency goes, for those whose records say when the
 * port completed the wait: the port's detection (its completion time -
 * the store) and the rest, handing the record back (wake-up, system call
 * return, the waiter's own loop).
 */
static void bench_table_detect(FILE *f, const struct bench_run *run)
{
	bool any = false;

	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];
		const struct bench_summary *s = &r->sum;

		if (r->skipped || !r->reps || s->detect_p50.median < 0)
			continue;
		if (!any)
			fprintf(f, "\np50 split, us: the port completed the wait (record's "
				"time - store) + handed it back (waiter saw it - record's time):\n");
		any = true;
		fprintf(f, "  %-20s %.2f + %.2f\n", r->st.name, s->detect_p50.median,
			s->p50.median - s->detect_p50.median);
	}
}

/*
 * What the port did per wait, for strategies that wait through one: its
 * checks of the word, the waits it raised imminent, the waits a caller
 * claimed, the leases that ran out (a claimed wait whose watcher gave
 * up, or a busy reader taken off its CPU, handed back to the timer), and
 * the waits that ended LATE (found done by the first look after their
 * estimator sleep: each halves a sample of the estimate).
 */
static void bench_table_port(FILE *f, const struct bench_run *run)
{
	bool any = false;

	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];
		const struct bench_summary *s = &r->sum;

		if (r->skipped || !r->reps || s->checks.median < 0)
			continue;
		if (!any)
			fprintf(f, "\nport counts per wait:\n  %-28s %8s %8s %8s %8s %8s %8s\n",
				"strategy", "timers", "checks", "raised", "claimed",
				"leases", "late");
		any = true;
		fprintf(f, "  %-28s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", r->st.name,
			s->timer_fires.median, s->checks.median, s->imminent.median,
			s->claims.median, s->lease_expiries.median, s->late.median);
	}
}

/* --throughput: the area's reap against read(), or why not. */
static void bench_table_throughput(FILE *f, const struct bench_run *run)
{
	const struct bench_throughput *t = &run->tp;
	const struct {
		const char *name;
		const struct bench_reap_way *w;
	} ways[] = { { "area ring", &t->area }, { "read()", &t->read } };

	if (!t->records)
		return;
	if (!t->available) {
		fprintf(f, "\nthroughput: not available: %s\n", t->reason);
		return;
	}
	fprintf(f, "\nthroughput: %u completed waits reaped a round, %u rounds "
		"taking turns%s%s:\n  %-10s %-34s %s\n", t->records, t->rounds,
		t->rounds < run->cfg.reps ? "; stopped: " : "",
		t->rounds < run->cfg.reps ? t->reason : "",
		"reaped by", "records/s", "syscalls/record");
	for (size_t i = 0; i < 2; i++) {
		char rps[40];

		cell(rps, sizeof(rps), &ways[i].w->records_per_s);
		fprintf(f, "  %-10s %-34s %.3f\n", ways[i].name, rps,
			ways[i].w->syscalls_per_record.median);
	}
}

void bench_print_table(FILE *f, const struct bench_run *run)
{
	header(f, run);
	fprintf(f, "%-20s %-22s %8s %-22s %9s %8s %-24s %6s %8s %8s %4s %6s %6s %6s %6s\n",
		"strategy", "p50", "p90", "p99", "max", "waiter", "system", "%core",
		"backgr", "waits/s", "err", "timers", "sys/w", "csw", "wakes");
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];
		const struct bench_summary *s = &r->sum;
		char p50[40], p99[40], sys[40], name[40], timers[16], calls[16];

		if (r->skipped || !r->reps)
			continue;
		cell(p50, sizeof(p50), &s->p50);
		cell(p99, sizeof(p99), &s->p99);
		cell(sys, sizeof(sys), &s->system_cpu_us);
		snprintf(name, sizeof(name), "%s%s", r->st.name,
			 (int)i == run->oracle_chosen ? "*" : "");
		if (s->timer_fires.median < 0)
			snprintf(timers, sizeof(timers), "-");
		else
			snprintf(timers, sizeof(timers), "%.2f", s->timer_fires.median);
		if (s->syscalls.median < 0)
			snprintf(calls, sizeof(calls), "-");
		else
			snprintf(calls, sizeof(calls), "%.2f", s->syscalls.median);
		fprintf(f, "%-20s %-22s %8.2f %-22s %9.1f %8.1f %-24s %6.1f %8.1f %8.1f %4llu %6s %6s %6.2f %6.2f\n",
			name, p50, s->p90.median, p99, s->max.median,
			s->waiter_cpu_us.median, sys, bench_core_pct(s),
			s->background_cpu_us.median, s->waits_per_s.median,
			(unsigned long long)s->errors, timers, calls,
			s->ctx_switches.median,
			s->wakeups.median);
	}
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];
		const char *st = bench_result_status(run, r);

		if (strcmp(st, "ok"))
			fprintf(f, "%-20s %s: %s\n", r->st.name, st, r->reason);
		else if (r->sum.errors)
			fprintf(f, "%-20s errors: %s\n", r->st.name, r->reason);
	}
	{
		uint64_t late = 0, jobs = 0;

		for (unsigned int i = 0; i < run->results; i++) {
			late += run->result[i].sum.late_stores;
			for (unsigned int k = 0; k < run->result[i].reps; k++)
				jobs += run->result[i].rep[k].waits;
		}
		if (late && run->cfg.device == BENCH_DEVICE_CUDA)
			fprintf(f, "\nthe GPU ended %llu of %llu jobs more than 50 us after "
				"launch + duration (launch latency, or a busy GPU): latencies "
				"still count from the kernel's end\n", (unsigned long long)late,
				(unsigned long long)jobs);
		else if (late)
			fprintf(f, "\nthe device stored %llu of %llu jobs more than 50 us after "
				"their due time (its CPU was busy): latencies still count from "
				"the actual store\n", (unsigned long long)late,
				(unsigned long long)jobs);
	}
	if (run->cfg.split_submit) {
		fprintf(f, "\nwaiter CPU spent submitting (--split-submit), us per wait:");
		for (unsigned int i = 0; i < run->results; i++) {
			const struct bench_result *r = &run->result[i];

			if (!r->skipped && r->reps && r->st.submit)
				fprintf(f, " %s %.1f;", r->st.name, r->sum.submit_cpu_us.median);
		}
		fputc('\n', f);
	}
	bench_table_detect(f, run);
	bench_table_port(f, run);
	bench_table_throughput(f, run);
	if (!bench_find(run, "spin") || !bench_oracle_ran(run))
		return;
	if (run->oracle_chosen >= 0)
		fprintf(f, "\noracle: margin %llu us chosen (smallest of the sweep with "
			"p50 <= 2x spin p50 + 1 us)\n",
			(unsigned long long)(run->result[run->oracle_chosen].st.param / 1000));
	else
		fprintf(f, "\noracle: no margin of the sweep kept p50 <= 2x spin p50 + 1 us\n");
}

void bench_print_targets(FILE *f, const struct bench_run *run)
{
	struct bench_target t[BENCH_TARGETS_MAX];
	unsigned int nt = bench_targets(run, t, BENCH_TARGETS_MAX), shown = 0;

	fprintf(f, "\ntargets (docs/performance.md):\n");
	for (unsigned int i = 0; i < nt; i++) {
		if (!t[i].ran)
			continue;
		shown++;
		if (!strcmp(t[i].state, "unmeasured"))
			fprintf(f, "  %-50s unmeasured (%s)\n", t[i].name, t[i].why);
		else
			fprintf(f, "  %-50s %-6s %.2f vs %.2f %s\n", t[i].name, t[i].state,
				t[i].measured, t[i].limit, t[i].unit);
	}
	if (!shown)
		fprintf(f, "  no target applies to the strategies that ran\n");
}
