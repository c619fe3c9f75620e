/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Training a point's estimator the way a device would: predicted waits on
 * word 0 of a line, each done @ms after submission by a device thread,
 * each record collected. Include after port_harness.h.
 */
#ifndef GPUAR_SELFTEST_TRAIN_POINT_H
#define GPUAR_SELFTEST_TRAIN_POINT_H

#include "device_thread.h"

/*
 * @n waits at @point (plan_predict(8)), targets and user data the next
 * values of *@seq, each stored @ms after submission. 0, or -1.
 */
static inline int train_point(int port, __u64 *word, __u32 line,
			      __u64 point, __u64 *seq, int n, unsigned int ms)
{
	struct gpuar_record r;
	struct device_store d;
	int i;

	for (i = 0; i < n; i++) {
		++*seq;
		if (submit_word(port, word_wait(line, 0, *seq, point, *seq,
						plan_predict(8))) != 1)
			return -1;
		if (device_store_start(&d, word, *seq, ms))
			return -1;
		device_store_join(&d);
		if (collect_records(port, &r, 1, RECORD_TIMEOUT_MS) != 1)
			return -1;
	}
	return 0;
}

#endif /* GPUAR_SELFTEST_TRAIN_POINT_H */
