/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The coded error registry: one append-only table of stable numbers
 * (enum gpuar_code, defined once in include/gpuar/codes.h, which the
 * library installs), each with a name, a severity and a message template.
 * Callers branch on the number, never on the text. Numbers are never reused or renumbered; a
 * retired code keeps its entry.
 *
 * Templates hold positional placeholders {0}..{9}, filled from the
 * arguments given to gpuar_code_format().
 */
#ifndef GPUAR_CORE_CODES_H
#define GPUAR_CORE_CODES_H

#include "types.h"
#include <gpuar/codes.h>	/* enum gpuar_code: the numbers */

enum gpuar_severity {
	GPUAR_SEV_ERROR = 1,
	GPUAR_SEV_WARNING = 2,
};

struct gpuar_code_info {
	u32 code;
	u32 severity;		/* enum gpuar_severity */
	const char *name;	/* "invalid-plan" */
	const char *template;	/* "invalid wait plan '{0}': {1}" */
	u32 nargs;		/* placeholders the template uses */
};

/* The registry entry for @code; NULL for an unassigned number. */
const struct gpuar_code_info *gpuar_code_info(u32 code);

/*
 * Format "<name>[<code>]: <message>" into @buf, filling the template's
 * placeholders from @args (missing or NULL ones print as "?"). Always
 * NUL-terminates when @size > 0; returns the full length as snprintf.
 * An unassigned code formats as "unknown[<code>]".
 */
size_t gpuar_code_format(char *buf, size_t size, u32 code,
			 const char *const *args, u32 nargs);

#endif /* GPUAR_CORE_CODES_H */
