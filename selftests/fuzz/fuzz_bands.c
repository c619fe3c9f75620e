// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the wait-band grammar. On any input: parsing never
 * crashes; a refusal points inside the text; parsed bands are 1..4 plans
 * that pass the binary check, start at 0 rows with strictly increasing
 * edges, label back to the text itself, re-parse identically, label
 * safely into small buffers, and select(rows) returns the band whose range
 * holds rows, for rows at and around every edge and one taken from the
 * input's last bytes.
 */
#include <stdint.h>

#include "plan.h"
#include "plan_text.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_select(const struct gpuar_bands *bands, u64 rows)
{
	const struct gpuar_plan *got = gpuar_bands_select(bands, rows);
	u32 i;

	FUZZ_CHECK(got >= bands->plan && got < bands->plan + bands->count);
	i = (u32)(got - bands->plan);
	FUZZ_CHECK(bands->from_rows[i] <= rows);
	FUZZ_CHECK(i + 1 == bands->count || rows < bands->from_rows[i + 1]);
}

static void check_parsed(const char *text, const struct gpuar_bands *bands,
			 u64 extra_rows)
{
	static char label[GPUAR_BANDS_LABEL_MAX];
	struct gpuar_bands again;
	size_t n;
	u32 i;

	FUZZ_CHECK(bands->count >= 1 && bands->count <= GPUAR_BANDS_MAX);
	FUZZ_CHECK(bands->from_rows[0] == 0);
	for (i = 0; i < bands->count; i++) {
		FUZZ_CHECK(gpuar_plan_check(&bands->plan[i]) == GPUAR_PLAN_OK);
		if (i)
			FUZZ_CHECK(bands->from_rows[i] >
				   bands->from_rows[i - 1]);
	}
	n = gpuar_bands_label(bands, label, sizeof(label));
	FUZZ_CHECK(n < sizeof(label) && strlen(label) == n);
	FUZZ_CHECK(strcmp(label, text) == 0);
	FUZZ_CHECK(gpuar_bands_parse(label, &again, NULL) == 0);
	FUZZ_CHECK(memcmp(bands, &again, sizeof(again)) == 0);
	FUZZ_CHECK_SMALL_BUFFERS(gpuar_bands_label, bands, label);

	check_select(bands, 0);
	check_select(bands, UINT64_MAX);
	check_select(bands, extra_rows);
	for (i = 1; i < bands->count; i++) {
		check_select(bands, bands->from_rows[i] - 1);
		check_select(bands, bands->from_rows[i]);
		check_select(bands, bands->from_rows[i] + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct gpuar_parse_error err;
	struct gpuar_bands bands;
	u64 extra_rows = 0;
	size_t i;

	for (i = size > 8 ? size - 8 : 0; i < size; i++)
		extra_rows = extra_rows << 8 | data[i];
	memset(&err, '#', sizeof(err));
	if (gpuar_bands_parse(text, &bands, &err) == 0)
		check_parsed(text, &bands, extra_rows);
	else
		fuzz_check_refusal(text, &err);
	free(text);
	return 0;
}
