// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gpuar/gpuar.h>

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

int tool_output_check(const char *prog, const char *opt, const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;
	const char *why = NULL;

	if (!path[0] || (slash && !slash[1])) {
		why = "not a file name";
	} else if (!stat(path, &st)) {
		if (!S_ISREG(st.st_mode))
			why = "exists and is not a regular file";
		else if (access(path, W_OK))
			why = strerror(errno);
	} else if (errno != ENOENT) {
		why = strerror(errno);
	} else {
		size_t len = slash ? (size_t)(slash - path) : 1;

		if (len >= sizeof(dir)) {
			why = "path too long";
		} else {
			memcpy(dir, slash ? (len ? path : "/") : ".", len ? len : 1);
			dir[len ? len : 1] = '\0';
			if (stat(dir, &st))
				why = errno == ENOENT ? "its directory does not exist" :
					strerror(errno);
			else if (!S_ISDIR(st.st_mode))
				why = "its directory is not a directory";
			else if (access(dir, W_OK | X_OK))
				why = "its directory is not writable";
		}
	}
	if (!why)
		return 0;
	fprintf(stderr, "%s: --%s %s: %s\n", prog, opt, path, why);
	return -1;
}

void tool_print_version(FILE *f, const char *prog)
{
	fprintf(f, "%s %s (libgpuar %s)\n", prog, GPUAR_VERSION, gpuar_version());
}
