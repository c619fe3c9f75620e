// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tool_options.h"

int tool_option_number(const char *prog, const char *opt, const char *arg,
		       uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	/* strtoull would take a sign (and wrap a '-'): refuse both. */
	if (!arg[0] || arg[0] == '-' || arg[0] == '+')
		goto bad;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "%s: --%s: '%s' is not a number in %llu..%llu\n", prog,
		opt, arg, (unsigned long long)min, (unsigned long long)max);
	return -1;
}
