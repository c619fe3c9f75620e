// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Probe: get_user_pages_remote() still takes a vmas argument (before 6.5). */
#include <linux/mm.h>

long gpuar_conftest(void);
long gpuar_conftest(void)
{
	return get_user_pages_remote(NULL, 0, 0, 0, NULL, NULL, NULL);
}
