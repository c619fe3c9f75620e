// SPDX-License-Identifier: MIT
/* The monotonic clock with slack-free sleeps. */
#include "internal.h"

#include <errno.h>
#include <time.h>

static uint64_t mono_now(void *ctx)
{
	(void)ctx;
	return gpuar_now_ns();
}

static void mono_sleep_until(void *ctx, uint64_t until_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(until_ns / 1000000000ULL),
		.tv_nsec = (long)(until_ns % 1000000000ULL),
	};
	int old = gpuar_slack_tighten();

	(void)ctx;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	gpuar_slack_restore(old);
}

static void mono_wait_word(void *ctx, const uint64_t *word, uint64_t seen,
			   uint64_t until_ns)
{
	uint64_t now = gpuar_now_ns();

	if (now >= until_ns)
		return;
	if (gpuar_hw_word_wait(word, seen, until_ns, until_ns - now) == 0)
		return;
	mono_sleep_until(ctx, until_ns);
}

static const struct gpuar_clock_ops mono_ops = {
	.now = mono_now,
	.sleep_until = mono_sleep_until,
	.wait_word = mono_wait_word,
};

static const struct gpuar_clock mono = { .ops = &mono_ops };

GPUAR_EXPORT const struct gpuar_clock *gpuar_clock_monotonic(void)
{
	return &mono;
}
