/* SPDX-License-Identifier: MIT */
/* Command-line helpers shared by gpuar-bench and gpuar-stat. */
#ifndef GPUAR_TOOL_OPTIONS_H
#define GPUAR_TOOL_OPTIONS_H

#include <stdint.h>

/*
 * Parse @arg, the value of option --@opt, as a decimal number in
 * @min..@max (no sign, no trailing text) into *@out. On a bad value,
 * prints "@prog: --@opt: '@arg' is not a number in @min..@max" to stderr
 * and returns -1; 0 on success.
 */
int tool_option_number(const char *prog, const char *opt, const char *arg,
		       uint64_t min, uint64_t max, uint64_t *out);

#endif /* GPUAR_TOOL_OPTIONS_H */
