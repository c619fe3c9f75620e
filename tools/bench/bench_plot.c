// SPDX-License-Identifier: MIT
/*
 * The plot: wake latency (p50 and p99) against the system CPU (all CPUs) per
 * wait, log axes, one point per strategy, drawn by gnuplot (Debian's
 * gnuplot-nox) fed through a pipe.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "bench_report.h"

/* Log axes cannot show 0: put such points at the axis floor. */
static double floor_log(double v)
{
	return v < 0.01 ? 0.01 : v;
}

/* The whole gnuplot program, data inline, writing @png. */
static void script(FILE *gp, const char *png, const struct bench_run *run)
{
	unsigned int n = 0;

	fprintf(gp, "set terminal pngcairo size 1200,800 font ',10'\n");
	fprintf(gp, "set output '%s'\n", png);
	fprintf(gp, "set logscale xy\nset grid\nset key top right\n");
	fprintf(gp, "set xlabel 'system CPU per wait, us (all CPUs x wall - idle - the "
		"device); labels add it as %% of one core' noenhanced\n");
	fprintf(gp, "set ylabel 'wake latency, us (waiter saw it - device stored)' "
		"noenhanced\n");
	fprintf(gp, "set title 'gpuar-bench: %s %llu us x %llu waits x %u reps, kernel %s, %s, "
		"%u CPUs (medians)' noenhanced\n", bench_workload_kind_name(run->cfg.wl.kind),
		(unsigned long long)run->cfg.wl.work_us,
		(unsigned long long)run->cfg.wl.waits, run->cfg.reps, run->env.kernel,
		run->env.virt, run->env.cpus);
	fprintf(gp, "set label 'lower-left is better: less latency for less CPU' "
		"at graph 0.02, graph 0.04 noenhanced\n");
	/* name, CPU, p50, p99, label side (1 above, -1 below), % of a core */
	fprintf(gp, "$d << EOD\n");
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];

		if (r->skipped || !r->reps)
			continue;
		fprintf(gp, "\"%s\" %.4f %.4f %.4f %d %.1f\n", r->st.name,
			floor_log(r->sum.system_cpu_us.median),
			floor_log(r->sum.p50.median), floor_log(r->sum.p99.median),
			n++ % 2 ? -1 : 1, bench_core_pct(&r->sum));
	}
	fprintf(gp, "EOD\n");
	/*
	 * Each strategy is a dotted line from its p50 up to its p99 at the
	 * same CPU; the name and CPU share label the p50 point, alternating
	 * above and below it (neighbours in the table, such as the oracle
	 * sweep, often sit together), and the p99 point carries the name small.
	 */
	fprintf(gp, "plot $d using 2:3:(0):($4-$3) with vectors nohead dt 3 lc 'gray50' "
		"title 'p50 to p99 of one strategy', "
		"$d using 2:3 with points pt 7 ps 1.5 lc 'royalblue' title 'p50', "
		"$d using 2:4 with points pt 6 ps 1.5 lc 'orange-red' title 'p99', "
		"$d using 2:($5 > 0 ? $3 * 1.3 : $3 / 1.3):(sprintf('%%s %%.0f%%%%', "
		"stringcolumn(1), $6)) with labels left offset 0.8,0 noenhanced notitle, "
		"$d using 2:4:1 with labels right offset -0.8,0 font ',8' noenhanced notitle\n");
}

static int bad_path(const char *what, const char *path)
{
	if (!strpbrk(path, "'\n"))
		return 0;
	fprintf(stderr, "gpuar-bench: %s: the path may not contain ' or a newline\n", what);
	return -1;
}

int bench_write_plot(const char *path, const struct bench_run *run)
{
	FILE *gp;
	int status;

	if (bad_path("--plot", path))
		return -1;
	gp = popen("gnuplot", "w");
	if (!gp) {
		fprintf(stderr, "gpuar-bench: --plot: cannot run gnuplot: %s\n", strerror(errno));
		return -1;
	}
	script(gp, path, run);
	status = pclose(gp);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "gpuar-bench: --plot: gnuplot failed (status %d)\n", status);
		return -1;
	}
	return 0;
}

int bench_write_plot_script(const char *path, const char *png,
			    const struct bench_run *run)
{
	FILE *f;

	if (bad_path("--plot", png))
		return -1;
	f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "gpuar-bench: --plot-script %s: %s\n", path, strerror(errno));
		return -1;
	}
	script(f, png, run);
	if (fclose(f)) {
		fprintf(stderr, "gpuar-bench: --plot-script %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}
