// SPDX-License-Identifier: MIT
#include "bench_options.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "bench_result.h"
#include "plan_text.h"
#include "../common/tool_options.h"

enum {
	OPT_WORK = 256, OPT_WORKLOAD, OPT_JITTER, OPT_WORK2, OPT_BIMODAL_PCT,
	OPT_WAITS, OPT_STREAMS, OPT_SEED, OPT_REPS, OPT_PLAN, OPT_POLL,
	OPT_MARGINS, OPT_STRATEGIES, OPT_LEAD, OPT_WAITER_CPU, OPT_DEVICE_CPU,
	OPT_DEVICE_PATH, OPT_JSON, OPT_PLOT, OPT_LIST, OPT_DEVICE, OPT_BACKGROUND, OPT_PLOT_SCRIPT, OPT_SPLIT_SUBMIT,
	OPT_PENDING, OPT_RATE, OPT_SECONDS, OPT_ENGINE,
	OPT_TARGETS, OPT_VERSION, OPT_THROUGHPUT,
};

static const struct option longopts[] = {
	{ "work-us", required_argument, NULL, OPT_WORK },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "jitter-us", required_argument, NULL, OPT_JITTER },
	{ "work2-us", required_argument, NULL, OPT_WORK2 },
	{ "bimodal-pct", required_argument, NULL, OPT_BIMODAL_PCT },
	{ "waits", required_argument, NULL, OPT_WAITS },
	{ "streams", required_argument, NULL, OPT_STREAMS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "plan", required_argument, NULL, OPT_PLAN },
	{ "poll-us", required_argument, NULL, OPT_POLL },
	{ "oracle-margins", required_argument, NULL, OPT_MARGINS },
	{ "strategies", required_argument, NULL, OPT_STRATEGIES },
	{ "device-lead-us", required_argument, NULL, OPT_LEAD },
	{ "waiter-cpu", required_argument, NULL, OPT_WAITER_CPU },
	{ "device-cpu", required_argument, NULL, OPT_DEVICE_CPU },
	{ "device-path", required_argument, NULL, OPT_DEVICE_PATH },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "background-ms", required_argument, NULL, OPT_BACKGROUND },
	{ "split-submit", no_argument, NULL, OPT_SPLIT_SUBMIT },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "plot-script", required_argument, NULL, OPT_PLOT_SCRIPT },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "pending", required_argument, NULL, OPT_PENDING },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "seconds", required_argument, NULL, OPT_SECONDS },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "targets", no_argument, NULL, OPT_TARGETS },
	{ "throughput", required_argument, NULL, OPT_THROUGHPUT },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void bench_usage(FILE *f)
{
	fprintf(f,
"usage: gpuar-bench [options]\n"
"\n"
"Measures every wait strategy side by side against a simulated device (a\n"
"thread on its own CPU that sleeps until just before each scheduled store,\n"
"spins the last stretch and stores a sequence number into a completion\n"
"line), or a real GPU (--device cuda). Per strategy: wake latency (waiter\n"
"saw it - device stored) p50, p90, p99, max; the waiter's CPU per wait;\n"
"the system CPU per wait (all CPUs x wall - idle from /proc/stat, minus\n"
"the simulated device's own time but not its wake-ups), also as a share of\n"
"one core; waits/s; errors. Medians [min-max] over the repetitions.\n"
"Percentiles are nearest-rank. The table goes to stdout, last.\n"
"\n"
"Workload (same seed, same workload):\n"
"  --workload KIND        fixed | jitter | bimodal              [fixed]\n"
"  --work-us N            duration of each job, us              [1000]\n"
"  --jitter-us N          jitter: uniform in work +-N us        [200]\n"
"  --work2-us N           bimodal: the second duration, us      [3000]\n"
"  --bimodal-pct N        bimodal: percent of jobs taking it    [50]\n"
"  --waits N              waits per repetition (all streams)    [2000]\n"
"  --streams N            concurrent streams, 1..64             [1]\n"
"  --seed N               PRNG seed                             [1]\n"
"  --reps N               repetitions of each strategy, 1..64   [5]\n"
"                         (fewer than 5: the spread means little)\n"
"\n"
"Strategies:\n"
"  --strategies LIST      comma-separated names or families     [all]\n"
"  --plan TEXT            the plan of user-predict and kport-*; the kernel\n"
"                         strategies' check interval is its park_us\n"
"                         [" BENCH_DEFAULT_PLAN "]\n"
"  --poll-us N            sleep-poll interval, us               [50]\n"
"  --oracle-margins LIST  oracle margin sweep, us (max 8)       [10,20,50,100,200]\n"
"  --list                 list the strategies and whether each can run here\n"
"  --strategies service   instead: an epoll loop serving a TCP echo socket\n"
"                         on 127.0.0.1 while it awaits GPU work (--waits\n"
"                         round trips, --work-us jobs), imminent readiness\n"
"                         off and on, per engine; then one wait that never\n"
"                         completes, its CPU cost over its first second\n"
"                         and the --seconds after (JSON: --json)\n"
"\n"
"Machine:\n"
"  --device KIND          the completion producer:                [sim]\n"
"                         sim: the simulated device (a pinned thread);\n"
"                         cuda: a real GPU (device 0): each job is a spin\n"
"                         kernel of its duration, then the stream's\n"
"                         write-value; latency counts from the kernel's\n"
"                         last %%globaltimer read, mapped onto the host\n"
"                         clock by a ping-pong before each repetition.\n"
"                         oracle and fence-vgem need sim (skipped);\n"
"                         futex-wake becomes a blocking-sync CUDA event.\n"
"                         Driver: libcuda.so.1 or $GPUAR_CUDA_LIBRARY.\n"
"                         (hip is not built: no AMD code object)\n"
"  --device-lead-us N     sim: spins this long before a store   [200]\n"
"  --waiter-cpu N         pin the waiter here   [first CPU of the affinity set]\n"
"  --device-cpu N         sim: pin the device here [last CPU of the affinity set]\n"
"  --device-path PATH     the module's device                   [/dev/gpuar]\n"
"  --background-ms N      before each round of repetitions, measure the\n"
"                         machine's own load for N ms with the benchmark\n"
"                         idle (reported as background CPU per wait, not\n"
"                         subtracted; 0: skip)                  [1000]\n"
"  --split-submit         also time the waiter's submissions (port submit,\n"
"                         fence export) apart: a diagnostic, it adds two\n"
"                         thread-clock reads to every such wait\n"
"  --throughput N         also, after the strategies: N completed waits\n"
"                         (1..4096) reaped from the module's shared\n"
"                         completion area against read() on a port\n"
"                         without it, --reps rounds taking turns; records/s\n"
"                         and system calls per record (kernel engine with\n"
"                         GPUAR_FEATURE_AREA, else \"not available\")\n"
"\n"
"Scale (instead of the strategies):\n"
"  --pending N            N waits outstanding on one port (all on one word,\n"
"                         targets N apart), completing in a steady stream:\n"
"                         each record is answered by a wait N further on.\n"
"                         Prints records/s, the process's CPU per record\n"
"                         (less the producer thread's) and the machine's\n"
"                         (/proc/stat, less the producer), per engine.\n"
"                         --plan sets the waits' plan\n"
"                         [" BENCH_SCALE_PLAN "]\n"
"  --rate N               completions per second    [2N: a wait lives 0.5 s]\n"
"                         (a wait lives N/rate s: at most 0.5 s, under the\n"
"                         backstop)\n"
"  --seconds N            measured, after a warm-up             [3]\n"
"  --engine NAME          user or kernel    [both; kernel where it opens]\n"
"\n"
"Output (files are checked before anything is measured):\n"
"  --json FILE            write the gpuar-bench/1 JSON to FILE\n"
"  --plot FILE.png        latency p50/p99 vs CPU per wait (gnuplot)\n"
"  --plot-script FILE     write the gnuplot program instead of running it;\n"
"                         `gnuplot FILE` draws --plot (default bench.png)\n"
"  --targets              after the table, the project's performance targets\n"
"                         (docs/performance.md) for the strategies that ran\n"
"  --version              the tool's and the library's version\n"
"  -h, --help             this text\n"
"\n"
"Strategy families:\n");
	for (unsigned int i = 0; bench_strategy_help[i]; i++)
		fprintf(f, "  %s\n", bench_strategy_help[i]);
	fprintf(f,
"A strategy whose requirement is missing (the module, vgem, io_uring, the\n"
"CUDA driver) is listed as skipped with the reason. A progress line is shown\n"
"on stderr when stderr is a terminal. Exit status: 0 when every measured\n"
"strategy ran without errors, 1 when a wait failed, an output could not be\n"
"written or no selected strategy could run, 2 for bad options (an output\n"
"file that cannot be written included).\n");
}

/* A decimal option value in min..max, or a message naming the option. */
static int number(const char *opt, const char *arg, uint64_t min, uint64_t max,
		  uint64_t *out)
{
	return tool_option_number("gpuar-bench", opt, arg, min, max, out);
}

static int margins(const char *arg, struct bench_config *cfg)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "gpuar-bench: --oracle-margins: list too long\n");
		return -1;
	}
	strcpy(buf, arg);
	cfg->margins = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cfg->margins == BENCH_MARGINS_MAX) {
			fprintf(stderr, "gpuar-bench: --oracle-margins: at most %d values\n",
				BENCH_MARGINS_MAX);
			return -1;
		}
		if (number("oracle-margins", tok, 1, 1000000,
			   &cfg->margins_us[cfg->margins]))
			return -1;
		cfg->margins++;
	}
	if (!cfg->margins) {
		fprintf(stderr, "gpuar-bench: --oracle-margins: empty list\n");
		return -1;
	}
	return 0;
}

static int plan(const char *text, struct bench_config *cfg)
{
	struct gpuar_parse_error err = { 0 };

	if (gpuar_plan_parse(text, &cfg->plan, &err)) {
		fprintf(stderr, "gpuar-bench: --plan '%s': at offset %u: %s\n", text,
			err.offset, err.what);
		return -1;
	}
	if (cfg->plan.park == GPUAR_PARK_BLOCK) {
		fprintf(stderr, "gpuar-bench: --plan '%s': block is the vendor's blocking "
			"wait; the port strategies need poll or flag\n", text);
		return -1;
	}
	gpuar_plan_label(&cfg->plan, cfg->plan_text, sizeof(cfg->plan_text));
	return 0;
}

/* --device KIND; -1 after saying why not. */
static int device_kind(const char *arg, enum bench_device_kind *kind)
{
	if (!strcmp(arg, "sim")) {
		*kind = BENCH_DEVICE_SIM;
		return 0;
	}
	if (!strcmp(arg, "cuda")) {
		*kind = BENCH_DEVICE_CUDA;
		return 0;
	}
	if (!strcmp(arg, "hip"))
		fprintf(stderr, "gpuar-bench: --device hip: not built: the timed "
			"kernel would need an AMD GPU code object (HIP has no "
			"portable text the runtime compiles, as CUDA's driver does "
			"PTX), compiled per gfx target with the ROCm toolchain; "
			"use sim or cuda\n");
	else
		fprintf(stderr, "gpuar-bench: --device %s: unknown (sim or cuda)\n",
			arg);
	return -1;
}

static void default_cpus(struct bench_config *cfg)
{
	cpu_set_t set;
	int first = -1, last = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (first < 0)
			first = i;
		last = i;
	}
	if (cfg->waiter_cpu < 0)
		cfg->waiter_cpu = first;
	if (cfg->device_cpu < 0 && last != cfg->waiter_cpu)
		cfg->device_cpu = last;
	if (cfg->device_cpu < 0 && first >= 0 && first != cfg->waiter_cpu)
		cfg->device_cpu = first;
}

bool bench_selected(const char *list, const struct bench_strategy *st)
{
	const char *p = list;
	size_t len;

	if (!list)
		return true;
	while (*p) {
		len = strcspn(p, ",");
		if ((strlen(st->name) == len && !strncmp(p, st->name, len)) ||
		    (strlen(st->family) == len && !strncmp(p, st->family, len)))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

static int check_strategies(const struct bench_options *o)
{
	struct bench_strategy all[BENCH_STRATEGIES_MAX];
	size_t n = bench_strategies(&o->cfg, all, BENCH_STRATEGIES_MAX);
	const char *p = o->strategies;

	while (p && *p) {
		size_t len = strcspn(p, ",");
		bool known = false;

		for (size_t i = 0; i < n && !known; i++)
			known = (strlen(all[i].name) == len && !strncmp(p, all[i].name, len)) ||
				(strlen(all[i].family) == len && !strncmp(p, all[i].family, len));
		if (!known) {
			fprintf(stderr, "gpuar-bench: --strategies: unknown strategy '%.*s' "
				"(--list shows them)\n", (int)len, p);
			return -1;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* The output files, before anything is measured (not for --list). */
static int check_outputs(const struct bench_options *o)
{
	if (o->list)
		return 0;
	if (o->json && tool_output_check("gpuar-bench", "json", o->json))
		return -1;
	if (o->plot_script)
		return tool_output_check("gpuar-bench", "plot-script", o->plot_script);
	if (!o->plot)
		return 0;
	if (tool_output_check("gpuar-bench", "plot", o->plot))
		return -1;
	if (strpbrk(o->plot, "'\n")) {
		fprintf(stderr, "gpuar-bench: --plot: the path may not contain ' or a newline\n");
		return -1;
	}
	if (system("command -v gnuplot >/dev/null 2>&1")) {
		fprintf(stderr, "gpuar-bench: --plot %s: gnuplot is not installed "
			"(Debian: gnuplot-nox; or write the program with "
			"--plot-script)\n", o->plot);
		return -1;
	}
	return 0;
}

int bench_options_parse(int argc, char **argv, struct bench_options *o)
{
	struct bench_config *c = &o->cfg;
	const char *plan_text = BENCH_DEFAULT_PLAN, *wl_err;
	const char *sim_only = NULL;	/* a simulated-device option given */
	bool plan_given = false;
	uint64_t v;
	int opt;

	memset(o, 0, sizeof(*o));
	c->wl = (struct bench_workload){
		.kind = BENCH_WL_FIXED, .work_us = 1000, .jitter_us = 200,
		.work2_us = 3000, .bimodal_pct = 50, .waits = 2000, .streams = 1,
		.seed = 1,
	};
	c->reps = 5;
	c->poll_ns = 50000;
	c->lead_ns = 200000;
	c->background_ns = 1000000000;
	c->waiter_cpu = -1;
	c->device_cpu = -1;
	c->device_path = GPUAR_DEVICE_PATH;
	margins("10,20,50,100,200", c);
	o->scale.seconds = 3;
	o->scale.plan = NULL;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int err = 0;

		switch (opt) {
		case OPT_WORK:
			err = number("work-us", optarg, 1, 10000000, &c->wl.work_us);
			break;
		case OPT_WORKLOAD:
			if (bench_workload_kind_parse(optarg, &c->wl.kind)) {
				fprintf(stderr, "gpuar-bench: --workload: '%s' is not fixed, "
					"jitter or bimodal\n", optarg);
				err = -1;
			}
			break;
		case OPT_JITTER:
			err = number("jitter-us", optarg, 0, 10000000, &c->wl.jitter_us);
			break;
		case OPT_WORK2:
			err = number("work2-us", optarg, 1, 10000000, &c->wl.work2_us);
			break;
		case OPT_BIMODAL_PCT:
			err = number("bimodal-pct", optarg, 0, 100, &v);
			c->wl.bimodal_pct = (unsigned int)v;
			break;
		case OPT_WAITS:
			err = number("waits", optarg, 1, 100000000, &c->wl.waits);
			break;
		case OPT_STREAMS:
			err = number("streams", optarg, 1, BENCH_MAX_STREAMS, &v);
			c->wl.streams = (unsigned int)v;
			break;
		case OPT_SEED:
			err = number("seed", optarg, 0, UINT64_MAX, &c->wl.seed);
			break;
		case OPT_REPS:
			err = number("reps", optarg, 1, BENCH_REPS_MAX, &v);
			c->reps = (unsigned int)v;
			break;
		case OPT_PLAN:
			plan_text = optarg;
			plan_given = true;
			break;
		case OPT_POLL:
			err = number("poll-us", optarg, 1, 1000000, &v);
			c->poll_ns = v * 1000;
			break;
		case OPT_MARGINS:
			err = margins(optarg, c);
			break;
		case OPT_STRATEGIES:
			o->strategies = optarg;
			break;
		case OPT_LEAD:
			sim_only = "--device-lead-us";
			err = number("device-lead-us", optarg, 0, 1000000, &v);
			c->lead_ns = v * 1000;
			break;
		case OPT_WAITER_CPU:
			err = number("waiter-cpu", optarg, 0, CPU_SETSIZE - 1, &v);
			c->waiter_cpu = (int)v;
			break;
		case OPT_DEVICE_CPU:
			sim_only = "--device-cpu";
			err = number("device-cpu", optarg, 0, CPU_SETSIZE - 1, &v);
			c->device_cpu = (int)v;
			break;
		case OPT_DEVICE_PATH:
			c->device_path = optarg;
			break;
		case OPT_DEVICE:
			err = device_kind(optarg, &c->device);
			break;
		case OPT_BACKGROUND:
			err = number("background-ms", optarg, 0, 10000, &v);
			c->background_ns = v * 1000000;
			break;
		case OPT_SPLIT_SUBMIT:
			c->split_submit = true;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case OPT_PLOT:
			o->plot = optarg;
			break;
		case OPT_PLOT_SCRIPT:
			o->plot_script = optarg;
			break;
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_PENDING:
			err = number("pending", optarg, 1, 1000000, &v);
			o->scale.pending = (uint32_t)v;
			break;
		case OPT_RATE:
			err = number("rate", optarg, 1, 100000000, &o->scale.rate);
			break;
		case OPT_SECONDS:
			err = number("seconds", optarg, 1, 3600, &v);
			o->scale.seconds = (uint32_t)v;
			break;
		case OPT_ENGINE:
			o->scale.engines = optarg;
			if (strcmp(optarg, "user") && strcmp(optarg, "kernel")) {
				fprintf(stderr, "gpuar-bench: --engine %s: user or kernel\n",
					optarg);
				err = -1;
			}
			break;
		case OPT_TARGETS:
			o->targets = true;
			break;
		case OPT_THROUGHPUT:
			err = number("throughput", optarg, 1, BENCH_THROUGHPUT_MAX, &v);
			c->throughput = (uint32_t)v;
			break;
		case OPT_VERSION:
			tool_print_version(stdout, "gpuar-bench");
			return 1;
		case 'h':
			bench_usage(stdout);
			return 1;
		default:
			fprintf(stderr, "gpuar-bench: bad option '%s' (unknown, or its "
				"value is missing)\n", argv[optind - 1]);
			err = -1;
			break;
		}
		if (err)
			goto refuse;
	}
	if (optind < argc) {
		fprintf(stderr, "gpuar-bench: unexpected argument '%s'\n", argv[optind]);
		goto refuse;
	}
	if (o->scale.pending) {
		o->scale.device_path = c->device_path;
		o->scale.plan = plan_given ? plan_text : BENCH_SCALE_PLAN;
		return 0;
	}
	if (o->scale.rate || o->scale.engines) {
		fprintf(stderr, "gpuar-bench: --rate and --engine go with --pending\n");
		goto refuse;
	}
	wl_err = bench_workload_check(&c->wl);
	if (wl_err) {
		fprintf(stderr, "gpuar-bench: %s\n", wl_err);
		goto refuse;
	}
	if (o->strategies && !strcmp(o->strategies, "service")) {
		o->service = true;
		o->service_cfg = (struct bench_service_config){
			.messages = c->wl.waits,
			.work_ns = (uint64_t)c->wl.work_us * 1000,
			.idle_after_s = o->scale.seconds,
			.device_path = c->device_path,
		};
		return check_outputs(o) ? -1 : 0;
	}
	if (plan(plan_text, c) || check_strategies(o) || check_outputs(o))
		goto refuse;
	if (c->device != BENCH_DEVICE_SIM && sim_only) {
		fprintf(stderr, "gpuar-bench: %s applies to the simulated device "
			"only (--device sim)\n", sim_only);
		goto refuse;
	}
	default_cpus(c);
	/* A GPU has no device thread to pin: only the waiter is. */
	if (c->device != BENCH_DEVICE_SIM)
		c->device_cpu = -1;
	if (c->waiter_cpu >= 0 && c->waiter_cpu == c->device_cpu) {
		fprintf(stderr, "gpuar-bench: the waiter and the device need different CPUs\n");
		goto refuse;
	}
	return 0;
refuse:
	fprintf(stderr, "gpuar-bench: see --help\n");
	return -1;
}
