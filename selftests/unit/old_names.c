// SPDX-License-Identifier: MIT
/*
 * A program of the 1.0 names that were renamed (check-quickstart builds
 * it against the installed library, as a program built before the
 * renames was): each still resolves, at GPUAR_1.0, and runs, refusing a
 * NULL object with -EINVAL as its new name does.
 */
#define GPUAR_DISABLE_DEPRECATION_WARNINGS
#include <gpuar/cuda.h>
#include <gpuar/hip.h>

#include <errno.h>
#include <stdio.h>

#define SAME(call)                                                  \
	do {                                                        \
		int rc_ = (call);                                   \
		if (rc_ != -EINVAL) {                               \
			printf("not ok - %s: %d\n", #call, rc_);    \
			return 1;                                   \
		}                                                   \
	} while (0)

int main(void)
{
	struct gpuar_record rec;

	SAME(gpuar_reap(NULL, &rec, 1, 0));
	SAME(gpuar_reap_interruptible(NULL, &rec, 1, 0, NULL));
	SAME(gpuar_wait(NULL, NULL, NULL, 0, 0, &rec, NULL));
	SAME(gpuar_cuda_await(NULL, 0, NULL, NULL, 0, 0, NULL, NULL));
	SAME(gpuar_cuda_await_event(NULL, 0, NULL, NULL, 0, 0, NULL, NULL));
	SAME(gpuar_cuda_reap(NULL, NULL, NULL, 1, 0, NULL));
	SAME(gpuar_cuda_wait(NULL, NULL, NULL, 0, 0, &rec, NULL));
	SAME(gpuar_hip_await(NULL, 0, NULL, NULL, 0, 0, NULL, NULL));
	SAME(gpuar_hip_await_event(NULL, 0, NULL, NULL, 0, 0, NULL, NULL));
	SAME(gpuar_hip_reap(NULL, NULL, NULL, 1, 0, NULL));
	SAME(gpuar_hip_wait(NULL, NULL, NULL, 0, 0, &rec, NULL));
	printf("ok - the 11 renamed 1.0 names resolve and run\n");
	return 0;
}
