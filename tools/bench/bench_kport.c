// SPDX-License-Identifier: MIT
#include "bench_counts.h"
#include "bench_kport.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_word.h"

int bench_kport_probe(const char *path, uint64_t features, char *why,
		      size_t size)
{
	struct gpuar_version v = { .size = sizeof(v) };
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(why, size, "%s not present (module not loaded)", path);
		else
			snprintf(why, size, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (ioctl(fd, GPUAR_IOC_VERSION, &v)) {
		snprintf(why, size, "%s: VERSION: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	/* abi is the oldest ABI the module still serves: a minimum. */
	if (v.abi < 1 || v.abi > GPUAR_ABI_VERSION) {
		snprintf(why, size, "%s needs ABI %u, this tool speaks %u", path,
			 v.abi, GPUAR_ABI_VERSION);
		return -1;
	}
	return bench_kport_features_missing(path, v.features, features, why, size);
}

int bench_kport_features_missing(const char *path, uint64_t have,
				 uint64_t need, char *why, size_t size)
{
	static const struct { uint64_t bit; const char *name; } names[] = {
		{ GPUAR_FEATURE_WORD_WAIT, "GPUAR_FEATURE_WORD_WAIT" },
		{ GPUAR_FEATURE_FENCE_WAIT, "GPUAR_FEATURE_FENCE_WAIT" },
		{ GPUAR_FEATURE_BUSY_READ, "GPUAR_FEATURE_BUSY_READ" },
		{ GPUAR_FEATURE_IMMINENT, "GPUAR_FEATURE_IMMINENT" },
		{ GPUAR_FEATURE_WAIT_READY, "GPUAR_FEATURE_WAIT_READY" },
	};
	uint64_t missing = need & ~have;
	size_t len;

	if (!missing)
		return 0;
	len = (size_t)snprintf(why, size, "the module (%s) lacks", path);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(missing & names[i].bit) || len >= size)
			continue;
		len += (size_t)snprintf(why + len, size - len, " %s", names[i].name);
		missing &= ~names[i].bit;
	}
	if (missing && len < size)
		snprintf(why + len, size - len, " feature bits 0x%llx",
			 (unsigned long long)missing);
	return -1;
}

int bench_kport_open(struct bench_kport *kp, struct bench_ctx *ctx,
		     uint32_t flags, int lines, char *why, size_t size)
{
	struct gpuar_port_create pc = {
		.size = sizeof(pc), .flags = flags | GPUAR_PORT_CLOEXEC,
		.record_version = GPUAR_RECORD_VERSION_1,
	};
	int dev, err;

	memset(kp, 0, sizeof(*kp));
	dev = open(ctx->cfg->device_path, O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		err = -errno;
		snprintf(why, size, "open %s: %s", ctx->cfg->device_path, strerror(errno));
		return err;
	}
	kp->fd = ioctl(dev, GPUAR_IOC_PORT_CREATE, &pc);
	err = -errno;
	close(dev);
	if (kp->fd < 0) {
		snprintf(why, size, "PORT_CREATE: %s", strerror(-err));
		return err;
	}
	for (unsigned int i = 0; lines && i < ctx->dev->streams; i++) {
		struct gpuar_line_register lr = {
			.size = sizeof(lr),
			.addr = (uint64_t)(uintptr_t)ctx->dev->stream[i].line,
		};

		if (ioctl(kp->fd, GPUAR_IOC_LINE_REGISTER, &lr)) {
			err = -errno;
			snprintf(why, size, "LINE_REGISTER: %s", strerror(errno));
			close(kp->fd);
			return err;
		}
		kp->line[i] = lr.id;
	}
	return 0;
}

void bench_kport_close(struct bench_kport *kp)
{
	/* Closing the port cancels its waits and unpins its lines. */
	if (kp->fd >= 0)
		close(kp->fd);
	kp->fd = -1;
}

int bench_kport_port_stats(void *state, struct gpuar_port_stats *st)
{
	const struct bench_kport *kp = state;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(kp->fd, GPUAR_IOC_PORT_STATS, st) ? -errno : 0;
}

int bench_kport_submit_word(struct bench_kport *kp, struct bench_ctx *ctx,
			    unsigned int stream, uint64_t seq,
			    uint64_t start_ns)
{
	struct gpuar_word_wait w = {
		.user_data = stream,
		.target = seq,
		.point = 1,	/* one call site: every job is the same work */
		.start_ns = start_ns,
		.line = kp->line[stream],
		.slot = 0,
		.plan = ctx->cfg->plan,
	};
	struct gpuar_submit sub = {
		.size = sizeof(sub), .count = 1, .entry_size = sizeof(w),
		.entries = (uint64_t)(uintptr_t)&w,
	};

	if (!start_ns)
		kp->start_ns[stream] = bench_now_ns();
	if (BENCH_SYS(ioctl(kp->fd, GPUAR_IOC_SUBMIT_WORD, &sub)) != 1)
		return -errno;
	return 0;
}

unsigned int bench_kport_records(struct bench_kport *kp, struct bench_ctx *ctx,
				 unsigned int n, uint64_t seen_ns,
				 struct bench_done *done, unsigned int max)
{
	unsigned int out = 0;

	for (unsigned int i = 0; i < n && out < max; i++) {
		const struct gpuar_record *r = &kp->rec[i];
		unsigned int s = (unsigned int)r->user_data;
		bool ok;

		if (s >= ctx->dev->streams || !ctx->target[s]) {
			bench_note_error(ctx, "a record for no pending wait (user data %llu)",
					 (unsigned long long)r->user_data);
			ctx->errors++;
			continue;
		}
		if (r->outcome == GPUAR_OUTCOME_TIMEOUT &&
		    r->source == GPUAR_SOURCE_WORD) {
			/* The backstop expired; the work is merely late. */
			if (!bench_kport_submit_word(kp, ctx, s, ctx->target[s],
						     kp->start_ns[s]))
				continue;
		}
		ok = r->status == 0 &&
		     (r->outcome == GPUAR_OUTCOME_IMMEDIATE ||
		      r->outcome == GPUAR_OUTCOME_EXACT ||
		      r->outcome == GPUAR_OUTCOME_LATE ||
		      r->outcome == GPUAR_OUTCOME_FENCE);
		if (ok && r->source == GPUAR_SOURCE_WORD)
			ok = bench_word_reached(ctx->dev->stream[s].line,
					   ctx->target[s]);
		done[out].stream = s;
		done[out].seen_ns = seen_ns;
		done[out].complete_ns = r->complete_ns;
		done[out].error = !ok;
		if (!ok)
			bench_note_error(ctx, "record source %u outcome %u status %d value %llu for target %llu",
					 r->source, r->outcome, r->status,
					 (unsigned long long)r->value,
					 (unsigned long long)ctx->target[s]);
		ctx->target[s] = 0;
		out++;
	}
	return out;
}
