// SPDX-License-Identifier: MIT
/*
 * The wait-driver source over a stream (struct gpuar_vendor_source): the
 * slot's next number is recorded behind the stream's work when the source
 * is made, so every plan checks the word ("the work enqueued so far"),
 * never whether the whole stream is idle: work other threads enqueue
 * later does not hold the wait. The stream's status is asked only as the
 * error authority.
 */
#include <errno.h>
#include <string.h>

#include "vendor.h"

static struct gpuar_vendor_source *gv_src(void *ctx)
{
	return ctx;
}

static int gv_src_check(void *ctx, uint64_t *value)
{
	struct gpuar_vendor_source *s = gv_src(ctx);
	uint64_t word = gpuar_word_load(&s->line->words[s->slot]);

	if (value)
		*value = word;
	return gpuar_reached(word, s->target) ? 1 : 0;
}

/* Recorded when the source was made: nothing left to arm. */
static int gv_src_arm(void *ctx)
{
	(void)ctx;
	return 0;
}

static int gv_src_park(void *ctx, const struct gpuar_clock *clock,
		       uint64_t until_ns)
{
	struct gpuar_vendor_source *s = gv_src(ctx);

	if (clock->ops->wait_word) {
		const uint64_t *w = &s->line->words[s->slot];

		clock->ops->wait_word(clock->ctx, w, gpuar_word_load(w),
				      until_ns);
	} else {
		clock->ops->sleep_until(clock->ctx, until_ns);
	}
	return 0;
}

static int gv_src_status(void *ctx)
{
	struct gpuar_vendor_source *s = gv_src(ctx);
	int rc = gv_stream_status(s->line->b, s->stream, &s->diag);

	return rc < 0 ? rc : 0;
}

static int gv_src_block(void *ctx)
{
	struct gpuar_vendor_source *s = gv_src(ctx);

	return gv_stream_synchronize(s->line->b, s->stream, &s->diag);
}

static const uint64_t *gv_src_word(void *ctx)
{
	struct gpuar_vendor_source *s = gv_src(ctx);

	return &s->line->words[s->slot];
}

static const struct gpuar_src_ops gv_source_ops = {
	.check = gv_src_check,
	.arm = gv_src_arm,
	.park = gv_src_park,
	.status = gv_src_status,
	.block = gv_src_block,
	.word = gv_src_word,
};

int gv_source_init(struct gpuar_vendor_source *src,
		   struct gpuar_vendor_line *line, uint32_t slot, void *stream,
		   struct gpuar_error *diag)
{
	int rc;

	gv_diag_clear(diag);
	if (!src || !line)
		return -EINVAL;
	if (slot >= GPUAR_LINE_SLOTS)
		return gv_fail(line->b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "slot %u out of range (0..%d)", slot,
			       GPUAR_LINE_SLOTS - 1);
	memset(src, 0, sizeof(*src));
	rc = gv_record(line, slot, stream, &src->target, diag);
	if (rc)
		return rc;
	src->source.ops = &gv_source_ops;
	src->source.ctx = src;
	src->line = line;
	src->stream = stream;
	src->slot = slot;
	src->armed = true;
	return 0;
}

int gv_wait(struct gpuar_waiter *waiter, struct gpuar_vendor_source *src,
	    const struct gpuar_plan *plan, uint64_t point, uint64_t user_data,
	    struct gpuar_record *rec, struct gpuar_error *diag)
{
	int rc;

	gv_diag_clear(&src->diag);
	rc = gpuar_wait(waiter, &src->source, plan, point, user_data, rec, diag);
	/* The driver only saw an errno; the source kept the vendor's code. */
	if (rc && diag && src->diag.code != GPUAR_OK)
		*diag = src->diag;
	return rc;
}
