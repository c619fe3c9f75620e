// SPDX-License-Identifier: MIT
#include "stat_output.h"

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

void stat_print_table(FILE *f, const struct stat_snapshot *s)
{
	fprintf(f, "gpuar-stat: %zu port%s (from %s)\n", s->nport,
		s->nport == 1 ? "" : "s", s->source ? s->source : "?");
	if (!s->nport)
		return;
	fprintf(f, "%-20s %7s %7s %6s %5s %9s %9s %9s %9s %9s %8s %9s %11s %11s %10s\n",
		"port", "pid", "pending", "queued", "lines", "submitted", "immediate",
		"exact", "late", "fence", "timeout", "cancelled", "checks/wait",
		"sleeps/wait", "wakelat_us");
	for (size_t i = 0; i < s->nport; i++) {
		const struct stat_port *p = &s->port[i];
		uint64_t ended = stat_port_ended(p);

		fprintf(f, "%-20s %7d %7llu %6llu %5llu %9llu %9llu %9llu %9llu %9llu %8llu %9llu %11.2f %11.2f %10.1f\n",
			p->id, p->pid, (unsigned long long)p->pending,
			(unsigned long long)p->queued, (unsigned long long)p->lines,
			(unsigned long long)p->submitted,
			(unsigned long long)p->outcomes[GPUAR_OUTCOME_IMMEDIATE],
			(unsigned long long)p->outcomes[GPUAR_OUTCOME_EXACT],
			(unsigned long long)p->outcomes[GPUAR_OUTCOME_LATE],
			(unsigned long long)p->outcomes[GPUAR_OUTCOME_FENCE],
			(unsigned long long)p->outcomes[GPUAR_OUTCOME_TIMEOUT],
			(unsigned long long)p->outcomes[GPUAR_OUTCOME_CANCELLED],
			per(p->checks, ended), per(p->sleeps, ended),
			(double)p->wakeup_latency_ns / 1000.0);
		if (!p->has_points) {
			fprintf(f, "  (%llu points; this source does not list them: "
				"debugfs does, as root)\n", (unsigned long long)p->points);
			continue;
		}
		for (size_t k = 0; k < p->npt; k++) {
			const struct stat_point *pt = &p->pt[k];

			fprintf(f, "  point 0x%-12llx samples %-8llu predicted ",
				(unsigned long long)pt->point, (unsigned long long)pt->samples);
			if (pt->predicted_ns)
				fprintf(f, "%10.1f us", (double)pt->predicted_ns / 1000.0);
			else
				fprintf(f, "%13s", "none");
			fprintf(f, "  waits %llu: exact %llu late %llu immediate %llu timeout %llu\n",
				(unsigned long long)stat_point_ended(pt),
				(unsigned long long)pt->outcomes[GPUAR_OUTCOME_EXACT],
				(unsigned long long)pt->outcomes[GPUAR_OUTCOME_LATE],
				(unsigned long long)pt->outcomes[GPUAR_OUTCOME_IMMEDIATE],
				(unsigned long long)pt->outcomes[GPUAR_OUTCOME_TIMEOUT]);
		}
	}
}

static void outcomes(FILE *f, const uint64_t *o)
{
	fputc('{', f);
	for (unsigned int i = 1; i < GPUAR_OUTCOME_COUNT; i++)
		fprintf(f, "%s\"%s\": %llu", i > 1 ? ", " : "", stat_outcome_name(i),
			(unsigned long long)o[i]);
	fputc('}', f);
}

void stat_print_json(FILE *f, const struct stat_snapshot *s)
{
	fprintf(f, "{\"schema\": \"gpuar-stat/1\", \"source\": \"%s\", \"ports\": [",
		s->source ? s->source : "");
	for (size_t i = 0; i < s->nport; i++) {
		const struct stat_port *p = &s->port[i];
		uint64_t ended = stat_port_ended(p);

		/* Ids are kernel-printed hex handles or pid/fd: no escaping needed. */
		fprintf(f, "%s\n {\"port\": \"%s\", \"pid\": %d, \"pending\": %llu, "
			"\"queued\": %llu, \"lines\": %llu, \"points\": %llu, "
			"\"submitted\": %llu, \"outcomes\": ", i ? "," : "", p->id, p->pid,
			(unsigned long long)p->pending, (unsigned long long)p->queued,
			(unsigned long long)p->lines, (unsigned long long)p->points,
			(unsigned long long)p->submitted);
		outcomes(f, p->outcomes);
		fprintf(f, ", \"checks\": %llu, \"checks_per_wait\": %.3f, \"sleeps\": %llu, "
			"\"timer_fires\": %llu, \"busy_read_checks\": %llu, "
			"\"wakeup_latency_ns\": %llu",
			(unsigned long long)p->checks, per(p->checks, ended),
			(unsigned long long)p->sleeps, (unsigned long long)p->timer_fires,
			(unsigned long long)p->busy_read_checks,
			(unsigned long long)p->wakeup_latency_ns);
		if (p->has_points) {
			fputs(", \"point_list\": [", f);
			for (size_t k = 0; k < p->npt; k++) {
				const struct stat_point *pt = &p->pt[k];

				fprintf(f, "%s{\"point\": %llu, \"samples\": %llu, \"predicted_ns\": ",
					k ? ", " : "", (unsigned long long)pt->point,
					(unsigned long long)pt->samples);
				if (pt->predicted_ns)
					fprintf(f, "%llu", (unsigned long long)pt->predicted_ns);
				else
					fputs("null", f);
				fputs(", \"outcomes\": ", f);
				outcomes(f, pt->outcomes);
				fputc('}', f);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
}
