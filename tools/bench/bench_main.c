// SPDX-License-Identifier: MIT
/*
 * gpuar-bench: every wait strategy side by side against a simulated
 * device or a real GPU (--device cuda).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <gpuar/cuda.h>

#include "bench_env.h"
#include "bench_options.h"
#include "bench_report.h"
#include "bench_run.h"
#include "bench_scale.h"
#include "bench_select.h"

static int pin_waiter(struct bench_run *run)
{
	struct bench_config *cfg = &run->cfg;

	/* The waiter's sleeps must not be stretched by the default 50 µs slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (cfg->waiter_cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cfg->waiter_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "gpuar-bench: cannot pin the waiter to CPU %d: %s\n",
				cfg->waiter_cpu, strerror(errno));
			return -1;
		}
	}
	if (cfg->device != BENCH_DEVICE_SIM) {
		snprintf(run->env.wait_cpus, sizeof(run->env.wait_cpus),
			 "waiter CPU %d, device GPU", cfg->waiter_cpu);
		return 0;
	}
	if (cfg->device_cpu < 0)
		fprintf(stderr, "gpuar-bench: warning: one CPU only; the device is not "
			"pinned apart and every figure is distorted\n");
	snprintf(run->env.wait_cpus, sizeof(run->env.wait_cpus), "waiter CPU %d, device CPU %d",
		 cfg->waiter_cpu, cfg->device_cpu);
	return 0;
}

/*
 * --device cuda: nothing is ready unless the driver loads and device 0
 * opens; every strategy not already skipped is then skipped with the
 * driver's own reason.
 */
static void probe_cuda(struct bench_run *run)
{
	struct gpuar_cuda *cuda;
	struct gpuar_error err;

	if (run->cfg.device != BENCH_DEVICE_CUDA)
		return;
	if (!gpuar_cuda_open(&cuda, 0, &err)) {
		gpuar_cuda_close(cuda);
		return;
	}
	for (unsigned int i = 0; i < run->results; i++) {
		struct bench_result *r = &run->result[i];

		if (r->skipped)
			continue;
		r->skipped = true;
		snprintf(r->reason, sizeof(r->reason), "--device cuda: %.140s", err.message);
	}
}

/* Nothing selected can run: say why for each, and fail. */
static int nothing_runs(const struct bench_run *run)
{
	for (unsigned int i = 0; i < run->results; i++)
		if (!run->result[i].skipped)
			return 0;
	fprintf(stderr, "gpuar-bench: nothing to measure: no selected strategy can run here\n");
	for (unsigned int i = 0; i < run->results; i++)
		fprintf(stderr, "  %-13s %s\n", run->result[i].st.name, run->result[i].reason);
	return 1;
}

int main(int argc, char **argv)
{
	static struct bench_run run;
	struct bench_options o;
	int r = bench_options_parse(argc, argv, &o), status = 0;

	if (r)
		return r > 0 ? 0 : 2;
	if (o.scale.pending)
		return bench_scale_main(&o.scale, stdout);
	if (o.service)
		return bench_service_main(&o.service_cfg, o.json, stdout);
	run.cfg = o.cfg;
	bench_env_read(&run.env, &run.cfg);
	bench_select_strategies(&run, o.strategies);
	probe_cuda(&run);
	if (o.list) {
		for (unsigned int i = 0; i < run.results; i++)
			printf("%-20s %-7s %s%s\n", run.result[i].st.name,
			       run.result[i].skipped ? "skipped" : "ready",
			       run.result[i].skipped ? run.result[i].reason : run.result[i].plan,
			       "");
		return 0;
	}
	if (run.cfg.reps < 5)
		fprintf(stderr, "gpuar-bench: note: %u repetitions; the medians and "
			"spreads reported assume at least 5\n", run.cfg.reps);
	if (nothing_runs(&run) || pin_waiter(&run))
		return 1;
	r = bench_run_all(&run, isatty(STDERR_FILENO));
	if (r && run.cfg.device == BENCH_DEVICE_CUDA) {
		fprintf(stderr, "gpuar-bench: --device cuda: the GPU did not start: %s\n",
			run.env.device.error[0] ? run.env.device.error : strerror(-r));
		return 1;
	}
	if (r) {
		fprintf(stderr, "gpuar-bench: the simulated device did not start: %s\n",
			strerror(-r));
		return 1;
	}
	if (run.cfg.throughput && bench_throughput_run(&run.cfg, &run.tp))
		status = 1;
	for (unsigned int i = 0; i < run.results; i++) {
		const struct bench_result *res = &run.result[i];

		if (!res->skipped && (res->sum.errors || res->reps != run.cfg.reps))
			status = 1;
	}
	if (o.json && bench_write_json(o.json, &run)) {
		fprintf(stderr, "gpuar-bench: --json %s: %s\n", o.json, strerror(errno));
		status = 1;
	}
	if (o.plot_script) {
		if (bench_write_plot_script(o.plot_script, o.plot ? o.plot : "bench.png",
					    &run))
			status = 1;
	} else if (o.plot && bench_write_plot(o.plot, &run)) {
		status = 1;
	}
	bench_print_table(stdout, &run);
	if (o.targets)
		bench_print_targets(stdout, &run);
	return status;
}
