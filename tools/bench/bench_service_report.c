// SPDX-License-Identifier: MIT
/* gpuar-bench --strategies service: its summaries, table and JSON. */
#include <errno.h>
#include <stdio.h>

#include "bench_service.h"
#include "bench_stats.h"

void bench_service_percentiles(double *v, size_t n, double *p50, double *p99)
{
	*p50 = *p99 = 0;
	if (!n)
		return;
	bench_sort(v, n);
	*p50 = bench_percentile(v, n, 50);
	*p99 = bench_percentile(v, n, 99);
}

double bench_service_ratio(const struct bench_service_mode *off,
			   const struct bench_service_mode *on, bool p99)
{
	double a = p99 ? off->rtt_p99_us : off->rtt_p50_us;
	double b = p99 ? on->rtt_p99_us : on->rtt_p50_us;

	if (!off->ran || !on->ran || a <= 0)
		return 0;
	return b / a;
}

static void mode_row(FILE *out, const char *engine, const char *mode,
		     const struct bench_service_mode *m)
{
	if (!m->ran) {
		fprintf(out, "%-7s %-9s skipped: %s\n", engine, mode, m->reason);
		return;
	}
	fprintf(out, "%-7s %-9s %8llu %9.1f %9.1f %8llu %9.1f %9.1f %7llu %6llu\n",
		engine, mode, (unsigned long long)m->rtt_n, m->rtt_p50_us,
		m->rtt_p99_us, (unsigned long long)m->gpu_n, m->gpu_p50_us,
		m->gpu_p99_us, (unsigned long long)m->claims,
		(unsigned long long)m->errors);
}

void bench_service_print_table(FILE *out, const struct bench_service_result *r)
{
	fprintf(out, "service: an epoll loop serving a TCP echo socket on 127.0.0.1 "
		"while it awaits GPU work (%u round trips a mode, %.0f us jobs)\n",
		r->cfg.messages, r->cfg.work_ns / 1e3);
	fprintf(out, "%-7s %-9s %8s %9s %9s %8s %9s %9s %7s %6s\n", "engine",
		"imminent", "trips", "rtt p50", "rtt p99", "gpu", "gpu p50",
		"gpu p99", "claims", "errors");
	for (unsigned int i = 0; i < r->engines; i++) {
		const struct bench_service_engine *e = &r->eng[i];

		mode_row(out, e->engine, "off", &e->off);
		mode_row(out, e->engine, "on", &e->on);
		mode_row(out, e->engine, "on,lease", &e->on_lease);
		if (e->off.ran && e->on.ran)
			fprintf(out, "%-7s rtt on/off: p50 %.2fx, p99 %.2fx "
				"(target: p50 <= 1.2x)\n", e->engine,
				bench_service_ratio(&e->off, &e->on, false),
				bench_service_ratio(&e->off, &e->on, true));
		if (e->off.ran && e->on_lease.ran)
			fprintf(out, "%-7s rtt on,lease/off: p50 %.2fx, p99 %.2fx "
				"(claims watched for a whole lease)\n", e->engine,
				bench_service_ratio(&e->off, &e->on_lease, false),
				bench_service_ratio(&e->off, &e->on_lease, true));
		if (!e->idle.ran)
			fprintf(out, "%-7s never-completing wait: skipped: %s\n",
				e->engine, e->idle.reason);
		else
			fprintf(out, "%-7s never-completing wait: %.2f%% of a core "
				"in its first second, %.2f%% over the %.1f s after "
				"(target <= 1%%; %llu checks, %llu resubmits)\n",
				e->engine, e->idle.first_s_pct, e->idle.after_pct,
				e->idle.after_s,
				(unsigned long long)e->idle.checks_after,
				(unsigned long long)e->idle.resubmits);
	}
	fprintf(out, "(times in us; rtt: the client's send to its echo's "
		"arrival; gpu: the store to the loop's reap)\n");
}

/* A reason for JSON: quotes and backslashes dropped, never needed there. */
static void json_text(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++)
		if (*s != '"' && *s != '\\' && (unsigned char)*s >= 0x20)
			fputc(*s, out);
	fputc('"', out);
}

static void json_mode(FILE *out, const char *name,
		      const struct bench_service_mode *m)
{
	fprintf(out, "      \"%s\": {\"ran\": %s, ", name, m->ran ? "true" : "false");
	if (!m->ran) {
		fputs("\"reason\": ", out);
		json_text(out, m->reason);
		fputs("},\n", out);
		return;
	}
	fprintf(out, "\"rtt_n\": %llu, \"rtt_p50_us\": %.3f, \"rtt_p99_us\": %.3f, "
		"\"gpu_n\": %llu, \"gpu_p50_us\": %.3f, \"gpu_p99_us\": %.3f, "
		"\"claims\": %llu, \"errors\": %llu},\n",
		(unsigned long long)m->rtt_n, m->rtt_p50_us, m->rtt_p99_us,
		(unsigned long long)m->gpu_n, m->gpu_p50_us, m->gpu_p99_us,
		(unsigned long long)m->claims, (unsigned long long)m->errors);
}

static void json_idle(FILE *out, const struct bench_service_idle *w)
{
	fprintf(out, "      \"never_completing\": {\"ran\": %s, ",
		w->ran ? "true" : "false");
	if (!w->ran) {
		fputs("\"reason\": ", out);
		json_text(out, w->reason);
		fputs("}\n", out);
		return;
	}
	fprintf(out, "\"first_second_cpu_pct\": %.3f, \"after_cpu_pct\": %.3f, "
		"\"after_s\": %.3f, \"checks_after\": %llu, \"resubmits\": %llu}\n",
		w->first_s_pct, w->after_pct, w->after_s,
		(unsigned long long)w->checks_after,
		(unsigned long long)w->resubmits);
}

int bench_service_write_json(FILE *out, const struct bench_service_result *r)
{
	fprintf(out, "{\n  \"schema\": \"%s\",\n  \"messages\": %u,\n"
		"  \"work_us\": %.3f,\n  \"engines\": [\n",
		BENCH_SERVICE_JSON_SCHEMA, r->cfg.messages, r->cfg.work_ns / 1e3);
	for (unsigned int i = 0; i < r->engines; i++) {
		const struct bench_service_engine *e = &r->eng[i];

		fprintf(out, "    {\n      \"engine\": \"%s\",\n", e->engine);
		json_mode(out, "imminent_off", &e->off);
		json_mode(out, "imminent_on", &e->on);
		json_mode(out, "imminent_on_whole_lease", &e->on_lease);
		fprintf(out, "      \"rtt_p50_ratio\": %.4f,\n"
			"      \"rtt_p99_ratio\": %.4f,\n"
			"      \"whole_lease_rtt_p50_ratio\": %.4f,\n",
			bench_service_ratio(&e->off, &e->on, false),
			bench_service_ratio(&e->off, &e->on, true),
			bench_service_ratio(&e->off, &e->on_lease, false));
		json_idle(out, &e->idle);
		fprintf(out, "    }%s\n", i + 1 < r->engines ? "," : "");
	}
	fputs("  ]\n}\n", out);
	if (ferror(out)) {
		errno = EIO;
		return -1;
	}
	return 0;
}
