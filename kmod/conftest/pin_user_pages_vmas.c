// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Probe: pin_user_pages() still takes a vmas argument (before 6.5). */
#include <linux/mm.h>

long gpuar_conftest(void);
long gpuar_conftest(void)
{
	return pin_user_pages(0, 0, 0, NULL, NULL);
}
