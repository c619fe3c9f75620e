/* SPDX-License-Identifier: MIT */
/*
 * Suite runner for the engine-agnostic library suites, which also run
 * inside the test VMs (tools/vm/lib-tests.sh). Check has no notion of a
 * skipped test, so a suite that cannot run a test in its environment (the
 * kernel engine, no DRM device) leaves it out and names it here with the
 * reason; the runner reports it:
 *
 *   GPUAR_TEST_TAP unset   Check's usual summary, then "skipped: NAME:
 *                          REASON" per left-out test (the host's make).
 *   GPUAR_TEST_TAP=1       TAP 13 on stdout, Check's results followed by
 *                          "ok N - NAME # SKIP REASON" lines, under one
 *                          plan counting both, for the VM runner's verdict.
 *
 * Exit status: failure when any test failed, as unit_run().
 */
#ifndef GPUAR_UNIT_TAP_H
#define GPUAR_UNIT_TAP_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNIT_MAX_SKIPS 32

struct unit_skips {
	int n;
	const char *name[UNIT_MAX_SKIPS];
	const char *reason[UNIT_MAX_SKIPS];
};

static inline void unit_skip(struct unit_skips *s, const char *name,
			     const char *reason)
{
	if (s->n < UNIT_MAX_SKIPS) {
		s->name[s->n] = name;
		s->reason[s->n] = reason;
		s->n++;
	}
}

/* Add @fn to @tc unless @reason is set, in which case record the skip. */
#define unit_add_or_skip(tc, skips, fn, reason)			\
	do {							\
		const char *unit_r_ = (reason);			\
		if (unit_r_)					\
			unit_skip((skips), #fn, unit_r_);	\
		else						\
			tcase_add_test((tc), fn);		\
	} while (0)

static inline int unit_tap_result(const char *line)
{
	return !strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7);
}

static inline int unit_tap_count(FILE *f)
{
	char line[4096];
	int n = 0;

	while (fgets(line, sizeof(line), f))
		n += unit_tap_result(line);
	return n;
}

/* Copy Check's TAP from @f to stdout without its plan. */
static inline void unit_tap_copy(FILE *f)
{
	char line[4096];

	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "1..", 3))
			fputs(line, stdout);
}

static inline int unit_run_tap(Suite *suite, const struct unit_skips *skips)
{
	const char *tap = getenv("GPUAR_TEST_TAP");
	char path[] = "/tmp/gpuar-unit-tap.XXXXXX";
	SRunner *runner = srunner_create(suite);
	int failed, fd = -1, ran = 0, i;
	FILE *f;

	if (tap && *tap && strcmp(tap, "0")) {
		fd = mkstemp(path);
		if (fd < 0) {
			perror("mkstemp");
			srunner_free(runner);
			return EXIT_FAILURE;
		}
		srunner_set_tap(runner, path);
		srunner_run_all(runner, CK_SILENT);
	} else {
		srunner_run_all(runner, CK_NORMAL);
	}
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);	/* closes Check's TAP file */
	if (fd < 0) {
		for (i = 0; i < skips->n; i++)
			printf("skipped: %s: %s\n", skips->name[i],
			       skips->reason[i]);
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;
	}
	/* The plan first: the runner needs it to count missing results. */
	f = fdopen(fd, "r");
	if (!f) {
		perror("fdopen");
		unlink(path);
		return EXIT_FAILURE;
	}
	unlink(path);
	ran = unit_tap_count(f);
	rewind(f);
	printf("TAP version 13\n1..%d\n", ran + skips->n);
	unit_tap_copy(f);
	fclose(f);
	for (i = 0; i < skips->n; i++)
		printf("ok %d - %s # SKIP %s\n", ran + i + 1, skips->name[i],
		       skips->reason[i]);
	fflush(stdout);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* GPUAR_UNIT_TAP_H */
