/* SPDX-License-Identifier: MIT */
/*
 * Shared scaffolding for the Check unit tests: a suite runner that prints
 * Check's summary line and turns failures into the exit status.
 */
#ifndef GPUAR_UNIT_H
#define GPUAR_UNIT_H

#include <check.h>
#include <stdlib.h>

static inline int unit_run(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	int failed;

	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* GPUAR_UNIT_H */
