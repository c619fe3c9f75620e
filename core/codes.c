// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The coded error registry. Append-only: a number, once given, keeps its
 * name, severity and meaning for good. Messages are for people; programs
 * branch on the number.
 */
#include "codes.h"
#include "textbuf.h"

#define CODE(num, sev, nm, tmpl, n) \
	[num] = { .code = num, .severity = sev, .name = nm, .template = tmpl, \
		  .nargs = n }

static const struct gpuar_code_info registry[GPUAR_CODE_NEXT] = {
	CODE(GPUAR_E_INVALID_PLAN, GPUAR_SEV_ERROR, "invalid-plan",
	     "invalid wait plan '{0}': {1} (at offset {2})", 3),
	CODE(GPUAR_W_PARK_FALLBACK, GPUAR_SEV_WARNING, "park-fallback",
	     "park '{0}' cannot run: {1}; using '{2}' instead", 3),
	CODE(GPUAR_W_EXECUTOR_FALLBACK, GPUAR_SEV_WARNING, "executor-fallback",
	     "executor '{0}' cannot run: {1}; using '{2}' instead", 3),
	CODE(GPUAR_E_EXECUTOR_REFUSED, GPUAR_SEV_ERROR, "executor-refused",
	     "executor '{0}' cannot run: {1} (strict mode, no fallback)", 2),
	CODE(GPUAR_E_INVALID_EXECUTOR, GPUAR_SEV_ERROR, "invalid-executor",
	     "invalid executor '{0}': expected {1}", 2),
	CODE(GPUAR_E_PENDED_INLINE, GPUAR_SEV_ERROR, "pended-inline",
	     "{0} pended under the inline executor '{1}', which cannot wake it",
	     2),
	CODE(GPUAR_E_STALLED, GPUAR_SEV_ERROR, "stalled",
	     "executor stalled: {0} task(s) remain and nothing can wake them",
	     1),
	CODE(GPUAR_E_BACKEND, GPUAR_SEV_ERROR, "backend-error",
	     "{0} backend error {1} ({2}): {3}", 4),
	CODE(GPUAR_E_INVALID_BANDS, GPUAR_SEV_ERROR, "invalid-bands",
	     "invalid wait bands '{0}': {1} (at offset {2})", 3),
	CODE(GPUAR_E_ENGINE_UNAVAILABLE, GPUAR_SEV_ERROR, "engine-unavailable",
	     "engine '{0}' unavailable: {1}", 2),
	CODE(GPUAR_W_ENGINE_FALLBACK, GPUAR_SEV_WARNING, "engine-fallback",
	     "engine '{0}' unavailable: {1}; using '{2}' instead", 3),
	CODE(GPUAR_E_SYSTEM, GPUAR_SEV_ERROR, "system-error",
	     "{0} failed: {1} (errno {2})", 3),
	CODE(GPUAR_E_INVALID_ARGUMENT, GPUAR_SEV_ERROR, "invalid-argument",
	     "invalid argument {0}: {1}", 2),
	CODE(GPUAR_E_FEATURE_UNAVAILABLE, GPUAR_SEV_ERROR, "feature-unavailable",
	     "{0} unavailable: {1} (strict mode, no fallback)", 2),
	CODE(GPUAR_W_FEATURE_FALLBACK, GPUAR_SEV_WARNING, "feature-fallback",
	     "{0} unavailable: {1}; going on without it", 2),
};

const struct gpuar_code_info *gpuar_code_info(u32 code)
{
	if (code >= GPUAR_CODE_NEXT || !registry[code].name)
		return NULL;
	return &registry[code];
}

size_t gpuar_code_format(char *buf, size_t size, u32 code,
			 const char *const *args, u32 nargs)
{
	const struct gpuar_code_info *info = gpuar_code_info(code);
	struct gpuar_textbuf tb;
	const char *t;

	gpuar_textbuf_init(&tb, buf, size);
	if (!info) {
		gpuar_textbuf_puts(&tb, "unknown[");
		gpuar_textbuf_u64(&tb, code);
		gpuar_textbuf_putc(&tb, ']');
		return gpuar_textbuf_finish(&tb);
	}
	gpuar_textbuf_puts(&tb, info->name);
	gpuar_textbuf_putc(&tb, '[');
	gpuar_textbuf_u64(&tb, code);
	gpuar_textbuf_puts(&tb, "]: ");
	for (t = info->template; *t; t++) {
		u32 i = (u32)(t[1] - '0');

		/* "{d}" is a placeholder; any other brace is literal text. */
		if (t[0] != '{' || t[1] < '0' || t[1] > '9' || t[2] != '}') {
			gpuar_textbuf_putc(&tb, *t);
			continue;
		}
		gpuar_textbuf_puts(&tb, args && i < nargs && args[i] ?
				   args[i] : "?");
		t += 2;
	}
	return gpuar_textbuf_finish(&tb);
}
