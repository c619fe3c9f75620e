// SPDX-License-Identifier: MIT
/*
 * The vendor queue (gpuar_cuda_queue_*, gpuar_hip_queue_*): a backend
 * handle, a port of its own and the lines it needs, so that awaiting a
 * stream is one call. Each await picks the slot itself (the stream's own
 * while its stores are pending, else any slot whose stores have landed,
 * else a slot of a new line), names the record with the next number of
 * the queue's counter (unique: nothing else submits to the port), and
 * waits under the default plan at the stream's estimator point.
 */
#include "vendor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Completions one close drains at a time. */
#define GV_QUEUE_DRAIN 32

static int gv_queue_fail(struct gv_backend *b, struct gpuar_error *diag,
			 int err, const char *what)
{
	return gv_fail(b, diag, err, GV_NO_VENDOR_STATUS, "%s", what);
}

int gv_queue_open(struct gv_queue **out, struct gv_backend *b, void *handle,
		  void (*handle_close)(void *handle), struct gpuar_error *diag)
{
	struct gpuar_error port_diag;
	struct gv_queue *q;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q) {
		rc = gv_queue_fail(b, diag, ENOMEM, "out of memory for a queue");
		handle_close(handle);
		return rc;
	}
	q->b = b;
	q->handle = handle;
	q->handle_close = handle_close;
	pthread_mutex_init(&q->lock, NULL);
	rc = gpuar_port_open(&q->port, NULL, &port_diag);
	if (rc < 0) {
		if (diag)
			*diag = port_diag;
		pthread_mutex_destroy(&q->lock);
		free(q);
		handle_close(handle);
		return rc;
	}
	/* An engine fallback is the caller's to hear of, as from the port. */
	if (diag)
		*diag = port_diag;
	*out = q;
	return 0;
}

/*
 * The slot for the stream of @key, under q->lock: one of its own with
 * stores pending (its awaits then complete in order), else the first
 * whose stores have all landed (the stream's own first). -1 when every
 * slot of every line is another stream's.
 */
static int gv_queue_pick(struct gv_queue *q, uint64_t key, uint32_t *line,
			 uint32_t *slot)
{
	int found = -1;

	for (uint32_t i = 0; i < q->nlines && found < 1; i++) {
		struct gpuar_vendor_line *l = q->lines[i];

		pthread_mutex_lock(&l->lock);
		for (uint32_t s = 0; s < GPUAR_LINE_SLOTS; s++) {
			bool landed = !l->owned[s] ||
				gpuar_reached(gpuar_word_load(&l->words[s]), l->seq[s]);
			bool mine = l->owned[s] && l->owner[s] == key;

			if (mine || (landed && found < 0)) {
				*line = i;
				*slot = s;
				found = mine ? 1 : 0;
				if (mine)
					break;
			}
		}
		pthread_mutex_unlock(&l->lock);
	}
	return found;
}

/* @queue as a queue of @ops' backend, or NULL. */
static struct gv_queue *gv_queue_of(const struct gv_ops *ops, const void *queue)
{
	const struct gv_queue *q = queue;

	return q && q->b->ops == ops ? (struct gv_queue *)q : NULL;
}

int gv_queue_await(const struct gv_ops *ops, void *queue, void *stream,
		   uint64_t *user_data, struct gpuar_error *diag)
{
	struct gv_queue *q = gv_queue_of(ops, queue);
	struct gv_stream_id id = { 0 };
	uint32_t line = 0, slot = 0;
	uint64_t ud;
	int rc;

	gv_diag_clear(diag);
	if (!q)
		return gv_refuse(diag, "queue");
	/* Refusals (a bare 0, a capture, another device) before any slot. */
	rc = q->b->ops->stream_admit(q->b, stream, &id, diag);
	if (rc)
		return rc;
	pthread_mutex_lock(&q->lock);
	if (gv_queue_pick(q, id.key, &line, &slot) < 0) {
		struct gpuar_vendor_line **grown;

		grown = realloc(q->lines, (q->nlines + 1) * sizeof(*grown));
		if (!grown) {
			pthread_mutex_unlock(&q->lock);
			return gv_queue_fail(q->b, diag, ENOMEM,
					     "out of memory for a queue's line");
		}
		q->lines = grown;
		rc = gv_line_alloc(q->b, q->port, &q->lines[q->nlines], diag);
		if (rc) {
			pthread_mutex_unlock(&q->lock);
			return rc;
		}
		line = q->nlines++;
		slot = 0;
	}
	ud = ++q->next_user_data;
	rc = gv_await(q->lines[line], slot, stream, NULL, id.key, ud, NULL,
		      diag);
	if (rc == 0) {
		q->outstanding++;
		if (user_data)
			*user_data = ud;
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int gv_queue_reap(const struct gv_ops *ops, void *queue,
		  struct gpuar_vendor_completion *out, uint32_t max,
		  int64_t timeout_ns, struct gpuar_error *diag)
{
	struct gv_queue *q = gv_queue_of(ops, queue);
	int n;

	gv_diag_clear(diag);
	if (!q)
		return gv_refuse(diag, "queue");
	n = gv_reap(q->b, q->port, out, max, timeout_ns, diag);
	if (n > 0) {
		pthread_mutex_lock(&q->lock);
		q->outstanding -= (uint64_t)n;
		pthread_mutex_unlock(&q->lock);
	}
	return n;
}

int gv_queue_fd(const struct gv_ops *ops, const void *queue)
{
	struct gv_queue *q = gv_queue_of(ops, queue);

	return q ? gpuar_port_fd(q->port) : -EINVAL;
}

/* Nanoseconds from now to @deadline (UINT64_MAX: forever), as a reap's. */
static int64_t gv_queue_left(uint64_t deadline)
{
	uint64_t now = gpuar_now_ns();

	if (deadline == UINT64_MAX)
		return -1;
	if (now >= deadline)
		return 0;
	return deadline - now > INT64_MAX ? INT64_MAX : (int64_t)(deadline - now);
}

int gv_queue_close(const struct gv_ops *ops, void *queue,
		   uint64_t timeout_ns, struct gpuar_error *diag)
{
	struct gpuar_vendor_completion drained[GV_QUEUE_DRAIN];
	uint64_t deadline = gpuar_add_sat(gpuar_now_ns(), timeout_ns);
	struct gv_queue *q = gv_queue_of(ops, queue);
	struct gpuar_error line_diag;
	int rc = 0;

	gv_diag_clear(diag);
	if (!queue)
		return 0;
	if (!q)
		return gv_refuse(diag, "queue");
	/* Awaits not reaped yet hold their lines: take their records. */
	while (q->outstanding) {
		int64_t left = gv_queue_left(deadline);
		int n = gv_queue_reap(ops, q, drained, GV_QUEUE_DRAIN,
				      left ? left : 0, NULL);

		if (n == -EAGAIN || n == -ETIME || (n < 0 && n != -EINTR))
			break;
	}
	if (q->outstanding)
		return gv_fail(q->b, diag, EBUSY, GV_NO_VENDOR_STATUS,
			       "%llu awaits still pending at the deadline; "
			       "nothing closed (reap or wait, then close again)",
			       (unsigned long long)q->outstanding);
	for (uint32_t i = 0; i < q->nlines; i++) {
		int64_t left = gv_queue_left(deadline);
		int r = gv_line_free(q->lines[i],
				     left < 0 ? UINT64_MAX : (uint64_t)left,
				     &line_diag);

		/* A line kept (-EIO, -ETIMEDOUT) is detached from the port,
		 * so closing the port stays safe; the first error is told. */
		if (r < 0 && rc == 0) {
			rc = r;
			if (diag)
				*diag = line_diag;
		}
	}
	gpuar_port_close(q->port);
	q->handle_close(q->handle);
	pthread_mutex_destroy(&q->lock);
	free(q->lines);
	free(q);
	return rc;
}
