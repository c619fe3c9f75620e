// SPDX-License-Identifier: MIT
/* Plans, bands and the published row count: the core's parsers, surfaced. */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* GPUAR_PLAN_DEFAULT_TEXT, parsed (test_lib_plan holds the two equal). */
static const struct gpuar_plan default_plan = {
	.park = GPUAR_PARK_FLAG,
	.flags = GPUAR_PLAN_PREDICT,
	.park_ns = 100000,
	.backstop_ns = 1000000000,
	.margin_ns = 100000,
	.min_sleep_ns = 20000,
	.max_sleep_ns = 1000000000,
	.window = 8,
};

const struct gpuar_plan *gpuar_plan_or_default(const struct gpuar_plan *plan)
{
	return plan ? plan : &default_plan;
}

GPUAR_EXPORT int gpuar_plan_from_text(const char *text, struct gpuar_plan *plan,
				      struct gpuar_error *diag)
{
	struct gpuar_parse_error pe = { 0 };
	char off[24];
	const char *args[3];

	gpuar_diag_clear(diag);
	if (!text || !plan) {
		args[0] = text ? "plan" : "text";
		args[1] = "must not be NULL";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	if (!strcmp(text, "default")) {
		*plan = default_plan;
		return 0;
	}
	if (gpuar_plan_parse(text, plan, &pe) == 0)
		return 0;
	args[0] = text;
	args[1] = pe.what;
	args[2] = gpuar_u64_text(pe.offset, off);
	return gpuar_diag_set(diag, GPUAR_E_INVALID_PLAN, EINVAL, args, 3);
}

GPUAR_EXPORT size_t gpuar_plan_to_text(const struct gpuar_plan *plan,
				       char *buf, size_t size)
{
	if (!plan) {
		if (buf && size)
			buf[0] = '\0';
		return 0;
	}
	return gpuar_plan_label(plan, buf, size);
}

/* The public struct mirrors the core's; copy field by field. */
static void bands_from_core(struct gpuar_wait_bands *out,
			    const struct gpuar_bands *in)
{
	u32 i;

	memset(out, 0, sizeof(*out));
	out->count = in->count;
	for (i = 0; i < in->count && i < GPUAR_WAIT_BANDS_MAX; i++) {
		out->from_rows[i] = in->from_rows[i];
		out->plan[i] = in->plan[i];
	}
}

static void bands_to_core(struct gpuar_bands *out,
			  const struct gpuar_wait_bands *in)
{
	u32 i;

	memset(out, 0, sizeof(*out));
	out->count = in->count;
	for (i = 0; i < in->count && i < GPUAR_BANDS_MAX; i++) {
		out->from_rows[i] = in->from_rows[i];
		out->plan[i] = in->plan[i];
	}
}

GPUAR_EXPORT int gpuar_bands_from_text(const char *text,
				       struct gpuar_wait_bands *bands,
				       struct gpuar_error *diag)
{
	struct gpuar_parse_error pe = { 0 };
	struct gpuar_bands core;
	char off[24];
	const char *args[3];

	gpuar_diag_clear(diag);
	if (!text || !bands) {
		args[0] = text ? "bands" : "text";
		args[1] = "must not be NULL";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	if (gpuar_bands_parse(text, &core, &pe) == 0) {
		bands_from_core(bands, &core);
		return 0;
	}
	args[0] = text;
	args[1] = pe.what;
	args[2] = gpuar_u64_text(pe.offset, off);
	return gpuar_diag_set(diag, GPUAR_E_INVALID_BANDS, EINVAL, args, 3);
}

GPUAR_EXPORT size_t gpuar_bands_to_text(const struct gpuar_wait_bands *bands,
					char *buf, size_t size)
{
	struct gpuar_bands core;

	if (!bands) {
		if (buf && size)
			buf[0] = '\0';
		return 0;
	}
	bands_to_core(&core, bands);
	return gpuar_bands_label(&core, buf, size);
}

GPUAR_EXPORT const struct gpuar_plan *
gpuar_bands_for_rows(const struct gpuar_wait_bands *bands, uint64_t rows)
{
	const struct gpuar_plan *p;
	struct gpuar_bands core;

	if (!bands || bands->count == 0 || bands->count > GPUAR_WAIT_BANDS_MAX)
		return NULL;
	/* The core's rule, mapped back onto the caller's struct. */
	bands_to_core(&core, bands);
	p = gpuar_bands_select(&core, rows);
	return p ? &bands->plan[p - core.plan] : NULL;
}

GPUAR_EXPORT void gpuar_rows_publish(struct gpuar_rows *rows, uint64_t count)
{
	if (rows)
		__atomic_store_n(&rows->rows, count, __ATOMIC_RELEASE);
}

GPUAR_EXPORT uint64_t gpuar_rows_read(const struct gpuar_rows *rows)
{
	return rows ? __atomic_load_n(&rows->rows, __ATOMIC_ACQUIRE) : 0;
}

GPUAR_EXPORT const struct gpuar_plan *
gpuar_bands_current(const struct gpuar_wait_bands *bands,
		    const struct gpuar_rows *rows)
{
	return gpuar_bands_for_rows(bands, gpuar_rows_read(rows));
}
