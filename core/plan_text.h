/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The wait-plan and wait-band text grammars. Userspace only (the kernel
 * sees binary plans); freestanding all the same.
 *
 *   plan  := park | park "+predict:" dl
 *   park  := "block" | "poll" | "flag:park_us=<n>,backstop_us=<n>"
 *   dl    := "margin_us=<n>,min_sleep_us=<n>,max_sleep_us=<n>,window=<n>"
 *   bands := plan | plan (";rows>=" <n> ":" plan)*      at most 4 bands
 *
 * Nothing is defaulted, every key appears exactly once and in this order,
 * <n> is decimal without sign, '+' or leading zero (so every text that
 * parses is its own label). Values are us in text and ns in the struct; a
 * value whose ns overflow a u64 is refused. A plan that parses passes
 * gpuar_plan_check(). label() writes a plan or bands back exactly: parse ->
 * label round-trips. A plan the grammar cannot express labels as
 * "invalid(<fault>)", and ns that are not whole us print with a fraction
 * ("100.5"); neither parses.
 *
 * Bands: the first band starts at 0 rows and has no edge in the text; each
 * "rows>=<n>" edge is strictly above the one before (the first above 0)
 * and belongs to the band it opens.
 */
#ifndef GPUAR_CORE_PLAN_TEXT_H
#define GPUAR_CORE_PLAN_TEXT_H

#include "types.h"

#define GPUAR_BANDS_MAX 4
/* Longest label a plan can have, including the terminating NUL. */
#define GPUAR_PLAN_LABEL_MAX 192
#define GPUAR_BANDS_LABEL_MAX (GPUAR_BANDS_MAX * (GPUAR_PLAN_LABEL_MAX + 32))

/* Why a text was refused: where, and the first thing wrong with it. */
struct gpuar_parse_error {
	u32 offset;		/* byte offset into the text */
	char what[120];		/* NUL-terminated phrase */
};

struct gpuar_bands {
	u32 count;				/* 1..GPUAR_BANDS_MAX */
	u64 from_rows[GPUAR_BANDS_MAX];		/* from_rows[0] == 0, increasing */
	struct gpuar_plan plan[GPUAR_BANDS_MAX];
};

/*
 * 0 on success; -1 with *@err filled (if non-NULL) on refusal, leaving
 * *@plan untouched. The offset is where the first thing wrong starts; the
 * phrase names it ("unknown park kind 'flog'", "expected 'backstop_us='",
 * "park_us 20000 out of range (max 10000)", "trailing text", ...).
 */
int gpuar_plan_parse(const char *text, struct gpuar_plan *plan,
		     struct gpuar_parse_error *err);

/*
 * Write @plan's text into @buf (always NUL-terminated when @size > 0).
 * Returns the length the full label needs, excluding the NUL, as snprintf.
 */
size_t gpuar_plan_label(const struct gpuar_plan *plan, char *buf, size_t size);

/* As gpuar_plan_parse(); offsets count from the start of the whole text. */
int gpuar_bands_parse(const char *text, struct gpuar_bands *bands,
		      struct gpuar_parse_error *err);
size_t gpuar_bands_label(const struct gpuar_bands *bands, char *buf,
			 size_t size);

/* The one band whose range holds @rows: edges are inclusive on their band. */
const struct gpuar_plan *gpuar_bands_select(const struct gpuar_bands *bands,
					    u64 rows);

#endif /* GPUAR_CORE_PLAN_TEXT_H */
