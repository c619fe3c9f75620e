/* SPDX-License-Identifier: MIT */
/* Command-line helpers shared by gpuar-bench and gpuar-stat. */
#ifndef GPUAR_TOOL_OPTIONS_H
#define GPUAR_TOOL_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

/*
 * Parse @arg, the value of option --@opt, as a decimal number in
 * @min..@max (no sign, no trailing text) into *@out. On a bad value,
 * prints "@prog: --@opt: '@arg' is not a number in @min..@max" to stderr
 * and returns -1; 0 on success.
 */
int tool_option_number(const char *prog, const char *opt, const char *arg,
		       uint64_t min, uint64_t max, uint64_t *out);

/*
 * Whether --@opt's file @path can be written once the run is over,
 * checked before the run starts (so a typo costs no measurement): its
 * directory exists and is writable, and the file, if it exists, is a
 * writable regular file. Nothing is created. 0, or -1 after printing
 * "@prog: --@opt @path: why" to stderr.
 */
int tool_output_check(const char *prog, const char *opt, const char *path);

/* --version: "@prog VERSION (libgpuar VERSION)" on @f. */
void tool_print_version(FILE *f, const char *prog);

#endif /* GPUAR_TOOL_OPTIONS_H */
