// SPDX-License-Identifier: MIT
/*
 * The plot: wake latency (p50 and p99) against the whole machine's CPU per
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
	fprintf(gp, "set terminal pngcairo size 1100,750 font ',10'\n");
	fprintf(gp, "set output '%s'\n", png);
	fprintf(gp, "set logscale xy\nset grid\nset key top right\n");
	fprintf(gp, "set xlabel 'whole-machine CPU per wait (us; CPUs x wall - idle - the device)' noenhanced\n");
	fprintf(gp, "set ylabel 'wake latency: waiter saw it - device stored (us)' noenhanced\n");
	fprintf(gp, "set title 'gpuar-bench: %s %llu us x %llu waits x %u reps, kernel %s, %s, "
		"%u CPUs (medians)' noenhanced\n", bench_workload_kind_name(run->cfg.wl.kind),
		(unsigned long long)run->cfg.wl.work_us,
		(unsigned long long)run->cfg.wl.waits, run->cfg.reps, run->env.kernel,
		run->env.virt, run->env.cpus);
	fprintf(gp, "$d << EOD\n");
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];

		if (r->skipped || !r->reps)
			continue;
		fprintf(gp, "\"%s\" %.4f %.4f %.4f\n", r->st.name,
			floor_log(r->sum.system_cpu_us.median),
			floor_log(r->sum.p50.median), floor_log(r->sum.p99.median));
	}
	fprintf(gp, "EOD\n");
	/*
	 * Labels alternate above and below their points: neighbours in the
	 * table (the oracle sweep, the kport strategies) often sit together.
	 */
	fprintf(gp, "plot $d using 2:3 with points pt 7 ps 1.5 title 'p50', "
		"$d using 2:4 with points pt 6 ps 1.5 title 'p99', "
		"$d every 2 using 2:3:1 with labels left offset 0.8,0.6 noenhanced notitle, "
		"$d every 2::1 using 2:3:1 with labels left offset 0.8,-0.6 noenhanced notitle\n");
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
