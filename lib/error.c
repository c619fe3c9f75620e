// SPDX-License-Identifier: MIT
/* Coded diagnostics: the core's registry, surfaced as struct gpuar_error. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

GPUAR_EXPORT const char *gpuar_version(void)
{
	return GPUAR_VERSION;
}

GPUAR_EXPORT const char *gpuar_code_name(uint32_t code)
{
	const struct gpuar_code_info *info = gpuar_code_info(code);

	return info ? info->name : NULL;
}

GPUAR_EXPORT bool gpuar_code_is_warning(uint32_t code)
{
	const struct gpuar_code_info *info = gpuar_code_info(code);

	return info && info->severity == GPUAR_SEV_WARNING;
}

void gpuar_diag_clear(struct gpuar_error *diag)
{
	if (diag) {
		diag->code = GPUAR_OK;
		diag->sys_errno = 0;
		diag->message[0] = '\0';
	}
}

int gpuar_diag_set(struct gpuar_error *diag, u32 code, int sys_errno,
		   const char *const *args, u32 nargs)
{
	if (diag) {
		diag->code = code;
		diag->sys_errno = sys_errno;
		gpuar_code_format(diag->message, sizeof(diag->message), code,
				  args, nargs);
	}
	return -sys_errno;
}

const char *gpuar_u64_text(u64 v, char *buf)
{
	snprintf(buf, 24, "%llu", (unsigned long long)v);
	return buf;
}

int gpuar_diag_sys(struct gpuar_error *diag, const char *what, int err)
{
	char num[24];
	const char *args[3] = { what, strerror(err), gpuar_u64_text((u64)err, num) };

	return gpuar_diag_set(diag, GPUAR_E_SYSTEM, err, args, 3);
}

GPUAR_EXPORT uint64_t gpuar_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

GPUAR_EXPORT const char *gpuar_outcome_name(uint32_t outcome)
{
	const char *name = gpuar_outcome_str(outcome);

	return name ? name : "?";
}
