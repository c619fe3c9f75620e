// SPDX-License-Identifier: MIT
/*
 * The gpuar-bench/1 JSON: per result the strategy's latency, CPU and
 * throughput figures, plus the engine, plan, repetitions, spread and each
 * repetition's figures; per run the clocksource, the oracle sweep and the
 * targets.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_report.h"

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* JSON has no NaN or infinity. */
static void jnum(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.3f", v);
	else
		fputs("null", f);
}

/* A count per wait, negative where the strategy has nothing to count. */
static void jcount(FILE *f, double v)
{
	if (v < 0)
		fputs("null", f);
	else
		jnum(f, v);
}

static void jspread(FILE *f, const struct bench_spread *s)
{
	fputc('[', f);
	jnum(f, s->min);
	fputs(", ", f);
	jnum(f, s->max);
	fputc(']', f);
}

/* --device cuda: the GPU, and how well its clock maps onto the host's. */
static void env_cuda(FILE *f, const struct bench_device_info *d)
{
	fputs(", \"device\": \"cuda\", \"gpu\": ", f);
	jstr(f, d->gpu);
	fprintf(f, ", \"cuda_driver_version\": %d, \"cuda_sched\": ", d->driver_version);
	jstr(f, d->sched);
	fputs(",\n  \"latency_from\": \"the spin kernel's last %globaltimer read, "
	      "mapped onto CLOCK_MONOTONIC\", \"clock_sync_uncertainty_us\": ", f);
	jnum(f, d->clock_sync_uncertainty_us);
	fprintf(f, ", \"clock_syncs\": %u, \"clock_offset_drift_us\": ", d->clock_syncs);
	jnum(f, d->clock_offset_drift_us);
	fprintf(f, ", \"early_waits\": %llu, \"most_early_us\": ",
		(unsigned long long)d->early_waits);
	jnum(f, d->most_early_us);
}

static void env_workload(FILE *f, const struct bench_run *run)
{
	const struct bench_workload *w = &run->cfg.wl;

	fputs("{\"schema\": \"gpuar-bench/1\",\n \"env\": {\"kernel\": ", f);
	jstr(f, run->env.kernel);
	fprintf(f, ", \"cpus\": %u, \"virt\": ", run->env.cpus);
	jstr(f, run->env.virt);
	fputs(", \"engine\": ", f);
	jstr(f, run->env.engine);
	fputs(", \"clocksource\": ", f);
	jstr(f, run->env.clocksource);
	fputs(", \"date\": ", f);
	jstr(f, run->env.date);
	fprintf(f, ", \"waiter_cpu\": %d, \"device_cpu\": %d, \"indicative\": %s",
		run->cfg.waiter_cpu, run->cfg.device_cpu,
		!strcmp(run->env.virt, "tcg") ? "true" : "false");
	/* The simulated device's env is as it always was: no device fields. */
	if (run->cfg.device == BENCH_DEVICE_CUDA)
		env_cuda(f, &run->env.device);
	fputs("},\n", f);
	fputs(" \"workload\": {\"kind\": ", f);
	jstr(f, bench_workload_kind_name(w->kind));
	fprintf(f, ", \"work_us\": %llu, \"jitter_us\": %llu, \"work2_us\": %llu, "
		"\"bimodal_pct\": %u, \"waits\": %llu, \"streams\": %u, \"seed\": %llu, "
		"\"repetitions\": %u, \"device_lead_us\": %llu, \"poll_us\": %llu, "
		"\"background_ms\": %llu},\n",
		(unsigned long long)w->work_us,
		(unsigned long long)(w->kind == BENCH_WL_JITTER ? w->jitter_us : 0),
		(unsigned long long)(w->kind == BENCH_WL_BIMODAL ? w->work2_us : 0),
		w->kind == BENCH_WL_BIMODAL ? w->bimodal_pct : 0,
		(unsigned long long)w->waits, w->streams, (unsigned long long)w->seed,
		run->cfg.reps, (unsigned long long)(run->cfg.lead_ns / 1000),
		(unsigned long long)(run->cfg.poll_ns / 1000),
		(unsigned long long)(run->cfg.background_ns / 1000000));
	fputs(" \"plan\": ", f);
	jstr(f, run->cfg.plan_text);
	fputs(",\n", f);
}

static void result(FILE *f, const struct bench_run *run,
		   const struct bench_result *r)
{
	const struct bench_summary *s = &r->sum;
	bool measured = !r->skipped && r->reps;

	fputs("  {\"strategy\": ", f);
	jstr(f, r->st.name);
	fputs(", \"status\": ", f);
	jstr(f, bench_result_status(run, r));
	fputs(", \"reason\": ", f);
	jstr(f, r->reason);
	fputs(", \"engine\": ", f);
	jstr(f, r->st.engine);
	fputs(", \"plan\": ", f);
	jstr(f, r->plan);
	if (!measured) {
		fputs("}", f);
		return;
	}
	fprintf(f, ",\n   \"waits\": %llu, \"errors\": %llu, \"repetitions\": %u, "
		"\"late_device_stores\": %llu,\n",
		(unsigned long long)r->rep[0].waits, (unsigned long long)s->errors,
		r->reps, (unsigned long long)s->late_stores);
	fputs("   \"latency_us\": {\"p50\": ", f);
	jnum(f, s->p50.median);
	fputs(", \"p90\": ", f);
	jnum(f, s->p90.median);
	fputs(", \"p99\": ", f);
	jnum(f, s->p99.median);
	fputs(", \"max\": ", f);
	jnum(f, s->max.median);
	fputs("},\n   \"waiter_cpu_us_per_wait\": ", f);
	jnum(f, s->waiter_cpu_us.median);
	fputs(", \"system_cpu_us_per_wait\": ", f);
	jnum(f, s->system_cpu_us.median);
	fputs(", \"background_cpu_us_per_wait\": ", f);
	jnum(f, s->background_cpu_us.median);
	if (run->cfg.split_submit) {
		fputs(", \"submit_cpu_us_per_wait\": ", f);
		jnum(f, s->submit_cpu_us.median);
	}
	if (s->detect_p50.median >= 0) {
		fputs(", \"detect_us_p50\": ", f);
		jnum(f, s->detect_p50.median);
	}
	fputs(", \"waits_per_s\": ", f);
	jnum(f, s->waits_per_s.median);
	fputs(",\n   \"timer_fires_per_wait\": ", f);
	jcount(f, s->timer_fires.median);
	fputs(", \"checks_per_wait\": ", f);
	jcount(f, s->checks.median);
	fputs(", \"imminent_per_wait\": ", f);
	jcount(f, s->imminent.median);
	fputs(", \"claims_per_wait\": ", f);
	jcount(f, s->claims.median);
	fputs(", \"lease_expiries_per_wait\": ", f);
	jcount(f, s->lease_expiries.median);
	fputs(", \"late_per_wait\": ", f);
	jcount(f, s->late.median);
	fputs(", \"syscalls_per_wait\": ", f);
	jcount(f, s->syscalls.median);
	fputs(", \"ctx_switches_per_wait\": ", f);
	jnum(f, s->ctx_switches.median);
	fputs(", \"wakeups_per_wait\": ", f);
	jnum(f, s->wakeups.median);
	fputs(",\n   \"spread\": {\"latency_us\": {\"p50\": ", f);
	jspread(f, &s->p50);
	fputs(", \"p90\": ", f);
	jspread(f, &s->p90);
	fputs(", \"p99\": ", f);
	jspread(f, &s->p99);
	fputs(", \"max\": ", f);
	jspread(f, &s->max);
	fputs("}, \"waiter_cpu_us_per_wait\": ", f);
	jspread(f, &s->waiter_cpu_us);
	fputs(", \"system_cpu_us_per_wait\": ", f);
	jspread(f, &s->system_cpu_us);
	fputs(", \"background_cpu_us_per_wait\": ", f);
	jspread(f, &s->background_cpu_us);
	fputs(", \"waits_per_s\": ", f);
	jspread(f, &s->waits_per_s);
	fputs("},\n   \"runs\": [", f);
	for (unsigned int i = 0; i < r->reps; i++) {
		const struct bench_rep *p = &r->rep[i];

		fprintf(f, "%s\n    {\"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"max\": %.3f, "
			"\"waiter_cpu_us_per_wait\": %.3f, \"system_cpu_us_per_wait\": %.3f, "
			"\"background_cpu_us_per_wait\": %.3f, \"waits_per_s\": %.3f, \"errors\": %llu, "
			"\"timer_fires_per_wait\": ",
			i ? "," : "", p->p50, p->p90, p->p99, p->max, p->waiter_cpu_us,
			p->system_cpu_us, p->background_cpu_us, p->waits_per_s, (unsigned long long)p->errors);
		jcount(f, p->port.timer_fires);
		fputs(", \"syscalls_per_wait\": ", f);
		jcount(f, p->syscalls);
		fprintf(f, ", \"ctx_switches_per_wait\": %.3f, \"wakeups_per_wait\": %.3f}",
			p->ctx_switches, p->wakeups);
	}
	fputs("]}", f);
}

static void oracle(FILE *f, const struct bench_run *run)
{
	bool first = true;

	fputs(" \"oracle\": {\"rule\": \"smallest margin with p50 <= 2x spin p50 + 1 us\", "
	      "\"chosen_margin_us\": ", f);
	if (run->oracle_chosen >= 0)
		fprintf(f, "%llu", (unsigned long long)
			(run->result[run->oracle_chosen].st.param / 1000));
	else
		fputs("null", f);
	fputs(", \"sweep\": [", f);
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];

		if (strcmp(r->st.family, "oracle") || r->skipped || !r->reps)
			continue;
		fprintf(f, "%s{\"margin_us\": %llu, \"p50\": %.3f, \"system_cpu_us_per_wait\": %.3f}",
			first ? "" : ", ", (unsigned long long)(r->st.param / 1000),
			r->sum.p50.median, r->sum.system_cpu_us.median);
		first = false;
	}
	fputs("]},\n", f);
}

static void targets(FILE *f, const struct bench_run *run)
{
	struct bench_target t[BENCH_TARGETS_MAX];
	unsigned int n = bench_targets(run, t, BENCH_TARGETS_MAX);

	fputs(" \"targets\": [", f);
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, "%s\n  {\"target\": ", i ? "," : "");
		jstr(f, t[i].name);
		fputs(", \"state\": ", f);
		jstr(f, t[i].state);
		if (!strcmp(t[i].state, "unmeasured")) {
			fputs(", \"why\": ", f);
			jstr(f, t[i].why);
		} else {
			fputs(", \"measured\": ", f);
			jnum(f, t[i].measured);
			fputs(", \"limit\": ", f);
			jnum(f, t[i].limit);
			fputs(", \"unit\": ", f);
			jstr(f, t[i].unit);
		}
		fputc('}', f);
	}
	fputs("],\n", f);
}

/* --throughput only: the area's reap against read(), or why not. */
static void throughput(FILE *f, const struct bench_run *run)
{
	const struct bench_throughput *t = &run->tp;
	const struct bench_reap_way *w[2] = { &t->area, &t->read };
	const char *names[2] = { "area", "read" };

	if (!t->records)
		return;
	fprintf(f, " \"throughput\": {\"records_per_round\": %u, \"status\": ",
		t->records);
	jstr(f, t->available ? "ok" : "not available");
	if (t->reason[0]) {
		fputs(", \"reason\": ", f);
		jstr(f, t->reason);
	}
	fprintf(f, ", \"rounds\": %u", t->rounds);
	for (int i = 0; t->available && i < 2; i++) {
		fprintf(f, ", \"%s\": {\"records_per_s\": ", names[i]);
		jnum(f, w[i]->records_per_s.median);
		fputs(", \"syscalls_per_record\": ", f);
		jnum(f, w[i]->syscalls_per_record.median);
		fputs(", \"spread\": {\"records_per_s\": ", f);
		jspread(f, &w[i]->records_per_s);
		fputs("}}", f);
	}
	fputs("},\n", f);
}

int bench_write_json(const char *path, const struct bench_run *run)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f)
		return -1;
	env_workload(f, run);
	oracle(f, run);
	targets(f, run);
	throughput(f, run);
	fputs(" \"results\": [\n", f);
	for (unsigned int i = 0; i < run->results; i++) {
		result(f, run, &run->result[i]);
		fputs(i + 1 < run->results ? ",\n" : "\n", f);
	}
	fputs(" ]}\n", f);
	err = ferror(f);
	if (fclose(f) || err) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
