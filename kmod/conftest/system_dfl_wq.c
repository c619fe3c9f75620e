// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Probe: system_dfl_wq exists (6.17 and later; 7.2 warns on system_unbound_wq). */
#include <linux/workqueue.h>

struct workqueue_struct *gpuar_conftest(void);
struct workqueue_struct *gpuar_conftest(void)
{
	return system_dfl_wq;
}
