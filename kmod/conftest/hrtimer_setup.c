// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Probe: hrtimer_setup() exists (6.13 and later). */
#include <linux/hrtimer.h>

void gpuar_conftest(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *));
void gpuar_conftest(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *))
{
	hrtimer_setup(t, fn, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
}
