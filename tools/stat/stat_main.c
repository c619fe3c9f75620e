// SPDX-License-Identifier: MIT
/*
 * gpuar-stat: the gpuar module's ports and estimator points — waits by
 * outcome, checks per wait, the learned wake-up latency and each point's
 * predicted residual — as a table, JSON, or refreshed with --watch.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plan_text.h"
#include "stat_collect.h"
#include "stat_exercise.h"
#include "stat_output.h"
#include "../common/tool_options.h"

#define STAT_MODULE_SYSFS "/sys/module/gpuar"

#define DEFAULT_PLAN \
	"flag:park_us=50,backstop_us=100000+predict:margin_us=100," \
	"min_sleep_us=20,max_sleep_us=50000,window=8"

enum source { SRC_AUTO, SRC_DEBUGFS, SRC_FDINFO };

struct options {
	enum source source;
	int pid;
	bool json, watch;
	uint64_t interval_ms;
	uint64_t exercise;	/* waits; 0: no own port */
	uint64_t work_us;
	const char *plan;
	const char *device_path;
	const char *debugfs;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpuar-stat [options]\n"
"\n"
"Shows the gpuar module's completion ports: waits by outcome (immediate,\n"
"exact, late, fence, timeout, cancelled), checks and estimator sleeps per\n"
"wait, the port's learned wake-up latency, and per estimator point the\n"
"samples and the predicted residual (the completion time it has learned).\n"
"\n"
"  --source S         auto | debugfs | fdinfo                        [auto]\n"
"                     debugfs: %s (root; every\n"
"                       port with its points)\n"
"                     fdinfo: /proc/PID/fdinfo of every port fd this user can\n"
"                       see (counters, no points)\n"
"                     auto: debugfs when readable, else fdinfo\n"
"  --pid PID          only the ports held by PID (fdinfo)\n"
"  --json             print JSON (schema gpuar-stat/1) instead of the table\n"
"  --watch            refresh until interrupted (or the exercise ends)\n"
"  --interval-ms N    refresh interval for --watch                   [1000]\n"
"  --exercise N       open a port of this tool's own, run N word waits of\n"
"                     --work-us each under --plan through it (a producer\n"
"                     thread stores the word), then show that port through\n"
"                     the statistics ioctls: the estimator learning live\n"
"  --work-us N        exercise: the work per wait, us               [1000]\n"
"  --plan TEXT        exercise: the wait plan\n"
"                     [" DEFAULT_PLAN "]\n"
"  --device-path P    the module's device                       [/dev/gpuar]\n"
"  --debugfs FILE     the debugfs listing    [" STAT_DEBUGFS_PORTS "]\n"
"  --version          the tool's and the library's version\n"
"  -h, --help         this text\n"
"\n"
"Without the module (no /sys/module/gpuar) it says \"module not loaded\"\n"
"and exits 1: the user engine's ports live in their own processes, and\n"
"gpuar_port_stats() reports them.\n"
"\n"
"Exit status: 0, 1 when the module is not loaded, no source could be read\n"
"or the exercise failed, 2 for bad options.\n", STAT_DEBUGFS_PORTS);
}

/* A decimal option value in min..max, or a message naming the option. */
static int number(const char *opt, const char *arg, uint64_t min, uint64_t max,
		  uint64_t *out)
{
	return tool_option_number("gpuar-stat", opt, arg, min, max, out);
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "source", required_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "watch", no_argument, NULL, 'w' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "exercise", required_argument, NULL, 'e' },
		{ "work-us", required_argument, NULL, 'u' },
		{ "plan", required_argument, NULL, 'P' },
		{ "device-path", required_argument, NULL, 'd' },
		{ "debugfs", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int opt;

	*o = (struct options){
		.interval_ms = 1000, .work_us = 1000, .plan = DEFAULT_PLAN,
		.device_path = GPUAR_DEVICE_PATH, .debugfs = STAT_DEBUGFS_PORTS,
	};
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int err = 0;

		switch (opt) {
		case 's':
			if (!strcmp(optarg, "auto"))
				o->source = SRC_AUTO;
			else if (!strcmp(optarg, "debugfs"))
				o->source = SRC_DEBUGFS;
			else if (!strcmp(optarg, "fdinfo"))
				o->source = SRC_FDINFO;
			else {
				fprintf(stderr, "gpuar-stat: --source: '%s' is not auto, "
					"debugfs or fdinfo\n", optarg);
				err = -1;
			}
			break;
		case 'p':
			err = number("pid", optarg, 1, 1 << 22, &v);
			o->pid = (int)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'w':
			o->watch = true;
			break;
		case 'i':
			err = number("interval-ms", optarg, 10, 3600000, &o->interval_ms);
			break;
		case 'e':
			err = number("exercise", optarg, 1, 100000000, &o->exercise);
			break;
		case 'u':
			err = number("work-us", optarg, 1, 10000000, &o->work_us);
			break;
		case 'P':
			o->plan = optarg;
			break;
		case 'd':
			o->device_path = optarg;
			break;
		case 'D':
			o->debugfs = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			tool_print_version(stdout, "gpuar-stat");
			return 1;
		default:
			fprintf(stderr, "gpuar-stat: bad option '%s' (unknown, or its "
				"value is missing)\n", argv[optind - 1]);
			err = -1;
		}
		if (err)
			goto refuse;
	}
	if (optind < argc) {
		fprintf(stderr, "gpuar-stat: unexpected argument '%s'\n", argv[optind]);
		goto refuse;
	}
	return 0;
refuse:
	fprintf(stderr, "gpuar-stat: see --help\n");
	return -1;
}

/* One snapshot from the configured source; 0 or a negative errno. */
static int collect(const struct options *o, struct stat_snapshot *s,
		   const struct stat_exercise *ex)
{
	static const uint64_t exercise_points[] = { 1 };
	int err;

	if (ex)
		return stat_collect_ioctl(ex->port, exercise_points, 1, "exercise", s);
	if (o->source != SRC_FDINFO) {
		err = stat_collect_debugfs(o->debugfs, s);
		if (!err || o->source == SRC_DEBUGFS) {
			if (err)
				fprintf(stderr, "gpuar-stat: %s: %s%s\n", o->debugfs,
					strerror(-err), err == -ENOENT ?
					" (module not loaded, or debugfs not mounted)" : "");
			return err;
		}
		stat_snapshot_free(s);
	}
	err = stat_collect_fdinfo(o->pid, s);
	if (err)
		fprintf(stderr, "gpuar-stat: /proc: %s\n", strerror(-err));
	return err;
}

static int show(const struct options *o, const struct stat_exercise *ex)
{
	struct stat_snapshot s = { 0 };
	int err = collect(o, &s, ex);

	if (!err) {
		if (o->watch && !o->json && isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		if (o->json)
			stat_print_json(stdout, &s);
		else
			stat_print_table(stdout, &s);
		fflush(stdout);
	}
	stat_snapshot_free(&s);
	return err;
}

static void nap(uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Without the module there is nothing to show: say so plainly instead of
 * "0 ports". 0 when it is loaded (or the sysfs tree is not there to ask).
 */
static int module_missing(const struct options *o)
{
	if (!access(STAT_MODULE_SYSFS, F_OK) || access("/sys/module", F_OK))
		return 0;
	fprintf(stderr, "gpuar-stat: module not loaded (no %s, %s: %s): "
		"`sudo modprobe gpuar`, or see the README's Troubleshooting\n",
		STAT_MODULE_SYSFS, o->device_path,
		access(o->device_path, F_OK) ? strerror(errno) : "present");
	return 1;
}

int main(int argc, char **argv)
{
	struct options o;
	struct stat_exercise ex = { 0 };
	int r = parse(argc, argv, &o), err;

	if (r)
		return r > 0 ? 0 : 2;
	if (o.exercise) {
		struct gpuar_parse_error perr = { 0 };
		char why[160] = "";

		if (gpuar_plan_parse(o.plan, &ex.plan, &perr) ||
		    ex.plan.park == GPUAR_PARK_BLOCK) {
			fprintf(stderr, "gpuar-stat: --plan '%s': %s\n", o.plan,
				ex.plan.park == GPUAR_PARK_BLOCK ?
				"block is not a port plan" : perr.what);
			return 2;
		}
		ex.device_path = o.device_path;
		ex.work_ns = o.work_us * 1000;
		ex.waits = o.exercise;
		if (stat_exercise_start(&ex, why, sizeof(why))) {
			fprintf(stderr, "gpuar-stat: --exercise: %s\n", why);
			return 1;
		}
		while (o.watch && !atomic_load(&ex.finished)) {
			if (show(&o, &ex))
				break;
			nap(o.interval_ms);
		}
		err = stat_exercise_join(&ex);
		r = show(&o, &ex) ? 1 : 0;
		close(ex.port);
		if (err) {
			fprintf(stderr, "gpuar-stat: --exercise: a wait failed: %s\n",
				strerror(-err));
			return 1;
		}
		return r;
	}
	if (module_missing(&o))
		return 1;
	do {
		if (show(&o, NULL))
			return 1;
		if (o.watch)
			nap(o.interval_ms);
	} while (o.watch);
	return 0;
}
