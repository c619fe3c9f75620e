/* SPDX-License-Identifier: MIT */
/* gpuar-bench's command line. */
#ifndef GPUAR_BENCH_OPTIONS_H
#define GPUAR_BENCH_OPTIONS_H

#include <stdio.h>

#include "bench_scale.h"
#include "bench_service.h"
#include "bench_strategy.h"

#define BENCH_DEFAULT_PLAN \
	"flag:park_us=50,backstop_us=100000+predict:margin_us=100," \
	"min_sleep_us=20,max_sleep_us=50000,window=8"

struct bench_options {
	struct bench_config cfg;
	const char *json;
	const char *plot;
	const char *plot_script;
	const char *strategies;	/* comma list of names or families; NULL: all */
	bool list;		/* --list: print strategies and availability */
	struct bench_scale_config scale;	/* --pending N: the scale mode */
	bool targets;		/* --targets: the project's targets after the table */
	/* --strategies service: the service mode (bench_service.h) */
	bool service;
	struct bench_service_config service_cfg;
};

void bench_usage(FILE *f);

/*
 * Parse argv, and check that the output files can be written. Returns 0
 * to run, 1 when --help or --version was printed, -1 after
 * printing what was wrong (and a pointer to --help) on stderr.
 */
int bench_options_parse(int argc, char **argv, struct bench_options *o);

/* True when strategy @st is selected by @list (NULL selects all). */
bool bench_selected(const char *list, const struct bench_strategy *st);

#endif /* GPUAR_BENCH_OPTIONS_H */
