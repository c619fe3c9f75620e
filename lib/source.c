// SPDX-License-Identifier: MIT
/* The built-in sources: a word in memory, and a pollable fd (sync_file). */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

static int word_check(void *ctx, uint64_t *value)
{
	struct gpuar_word_source *ws = ctx;
	u64 v = gpuar_word_load(ws->word);

	if (value)
		*value = v;
	return gpuar_reached(v, ws->target);
}

static int word_park(void *ctx, const struct gpuar_clock *clock,
		     uint64_t until_ns)
{
	struct gpuar_word_source *ws = ctx;

	if (clock->ops->wait_word)
		clock->ops->wait_word(clock->ctx, ws->word,
				      gpuar_word_load(ws->word), until_ns);
	else
		clock->ops->sleep_until(clock->ctx, until_ns);
	return 0;
}

static const uint64_t *word_word(void *ctx)
{
	return ((struct gpuar_word_source *)ctx)->word;
}

static const struct gpuar_src_ops word_ops = {
	.check = word_check,
	.park = word_park,
	.word = word_word,
};

GPUAR_EXPORT const struct gpuar_src *
gpuar_word_source_init(struct gpuar_word_source *ws, const uint64_t *word,
		       uint64_t target)
{
	if (!ws)
		return NULL;
	ws->source.ops = &word_ops;
	ws->source.ctx = ws;
	ws->word = word;
	ws->target = target;
	return &ws->source;
}

static int fd_check(void *ctx, uint64_t *value)
{
	struct gpuar_fd_source *fs = ctx;
	struct pollfd pfd = { .fd = fs->fd, .events = POLLIN };
	int signalled = 0, status = 0;
	int n = poll(&pfd, 1, 0);

	if (value)
		*value = 0;
	if (n < 0)
		return -errno;
	if (pfd.revents & POLLNVAL)
		return -EBADF;
	if (!n)
		return 0;
	/* A sync_file carries its fence's error; another fd is just done. */
	if (gpuar_sync_file_info(fs->fd, &signalled, &status, NULL) == 0)
		return status < 0 ? status : 1;
	return 1;
}

static int fd_park(void *ctx, const struct gpuar_clock *clock,
		   uint64_t until_ns)
{
	struct gpuar_fd_source *fs = ctx;
	struct pollfd pfd = { .fd = fs->fd, .events = POLLIN };
	u64 now = clock->ops->now(clock->ctx);
	u64 left = until_ns > now ? until_ns - now : 0;
	struct timespec ts = {
		.tv_sec = (time_t)(left / 1000000000ULL),
		.tv_nsec = (long)(left % 1000000000ULL),
	};
	int old, ret;

	/* A park must not overshoot its bound by the timer slack. */
	old = gpuar_slack_tighten();
	ret = ppoll(&pfd, 1, &ts, NULL) < 0 && errno != EINTR ? -errno : 0;
	gpuar_slack_restore(old);
	return ret;
}

static int fd_fd(void *ctx)
{
	return ((struct gpuar_fd_source *)ctx)->fd;
}

static const struct gpuar_src_ops fd_ops = {
	.check = fd_check,
	.park = fd_park,
	.fd = fd_fd,
};

GPUAR_EXPORT const struct gpuar_src *
gpuar_fd_source_init(struct gpuar_fd_source *fs, int fd)
{
	if (!fs)
		return NULL;
	fs->source.ops = &fd_ops;
	fs->source.ctx = fs;
	fs->fd = fd;
	return &fs->source;
}
