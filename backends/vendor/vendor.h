/* SPDX-License-Identifier: MIT */
/*
 * The part of the CUDA and HIP backends that does not depend on the
 * vendor: line pages and their settling, per-slot sequence numbers, the
 * awaits a backend has submitted to ports and their backstop resolution,
 * the wait-driver source, sticky-error bookkeeping and coded errors. Each
 * backend supplies a struct gv_ops of vendor calls.
 */
#ifndef GPUAR_BACKENDS_VENDOR_H
#define GPUAR_BACKENDS_VENDOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <gpuar/gpuar.h>
#include <gpuar/vendor.h>

#include "internal.h"	/* core/line.h: gpuar_word_load, gpuar_reached */

/* A vendor status meaning "no vendor call failed" in diagnostics. */
#define GV_NO_VENDOR_STATUS 0xffffffffu
/*
 * Reverse waits are settled by fences: after each wait-value the backend
 * enqueues, on the same stream, a store of a fresh number into a fence
 * word of the line's own page (past the line's 64 bytes, which the port
 * reads; the rest of the page is the backend's). Freeing a line then
 * looks at its words only, never at a stream the caller may have
 * destroyed. A fence word carries one store at a time, so GV_FENCES
 * reverse waits may be pending on a line at once.
 */
#define GV_FENCE_WORD0 GPUAR_LINE_SLOTS	/* word index of fence 0 */
#define GV_FENCES 64

/* Private streams of event awaits a backend handle makes at most. */
#define GV_EVENT_STREAMS 32

struct gv_backend;

/* Why loading a vendor library failed, for the open call's coded error. */
struct gv_load_error {
	int err;		/* positive errno */
	unsigned int status;	/* the vendor's, or GV_NO_VENDOR_STATUS */
	char detail[512];
};

/* Fill @why and return -@err. */
int gv_load_fail(struct gv_load_error *why, int err, unsigned int status,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The vendor calls on a stream (struct gv_ops.stream_call). */
enum gv_stream_op {
	/* Store value at devaddr once the stream's earlier work is done and
	 * its writes are visible to the host (CUDA: an explicit system-scope
	 * barrier before the write). */
	GV_WRITE_VALUE,
	GV_WAIT_VALUE,	/* wait until the word at devaddr reaches value */
	GV_QUERY,	/* 0 done, not_ready, or an error */
	GV_SYNCHRONIZE,
	GV_WAIT_EVENT,	/* later work waits for the event passed as value */
};

/* What admitting a stream learnt about it (struct gv_ops.stream_admit). */
struct gv_stream_id {
	/* Tells streams apart for slot ownership: the driver's stream id
	 * where it has one (unique for the life of the process, resolving
	 * a per-thread handle to the calling thread's stream), else the
	 * handle. */
	uint64_t key;
	/* The handle names a different stream in each thread (CUDA's
	 * CU_STREAM_PER_THREAD, hipStreamPerThread): another thread must
	 * not ask it for the stream's status. */
	bool thread_relative;
};

/*
 * How a record's store is enqueued: by default (NULL) the backend's
 * GV_WRITE_VALUE; a graph launch whose memop node stores the value
 * instead. 0 or a vendor status.
 */
struct gv_store {
	unsigned int (*enqueue)(struct gv_backend *b, void *stream,
				uint64_t devaddr, uint64_t value, void *arg);
	void *arg;
};


struct gv_ops {
	const char *name;	/* "cuda", "hip" */
	const char *domain;	/* what a sticky error poisons: "context" */
	unsigned int not_ready;	/* the vendor's "still running" status */
	/* The vendor's "not a valid handle" status: asked about a stream
	 * that was destroyed (or reset away), the driver says this, and the
	 * work enqueued there still finishes (or died with the context). */
	unsigned int invalid_handle;
	/* The device's wait-value compares in wrapping order (CUDA GEQ);
	 * false for HIP's plain >=. */
	bool wait_wraps;
	/* A stream handle alive as long as the device context is (CUDA's
	 * legacy stream, hipStreamPerThread): asked only whether the domain
	 * is poisoned, while a line settles and for awaits on a
	 * thread-relative handle. */
	void *domain_stream;
	/* Hold the device context for the lifetime of a line's registration
	 * (CUDA: retain the primary context). 0 or a vendor status. */
	unsigned int (*line_hold)(struct gv_backend *b);
	void (*line_release)(struct gv_backend *b);
	unsigned int (*page_register)(struct gv_backend *b, void *page,
				      size_t bytes, uint64_t *devaddr);
	unsigned int (*page_unregister)(struct gv_backend *b, void *page);
	/* 0 while the device's registration of @page stands at @devaddr;
	 * else the vendor's status (GV_NO_VENDOR_STATUS: another address):
	 * a device or context reset destroyed it, and with it every store
	 * the device had pending there. */
	unsigned int (*page_registered)(struct gv_backend *b, void *page,
					uint64_t devaddr);
	/* Refuse streams the backend cannot record on: 0 with *id filled,
	 * or a negative errno with *diag filled. */
	int (*stream_admit)(struct gv_backend *b, void *stream,
			    struct gv_stream_id *id, struct gpuar_error *diag);
	/* A private stream of the device (event awaits), and its end. */
	unsigned int (*stream_create)(struct gv_backend *b, void **stream);
	void (*stream_destroy)(struct gv_backend *b, void *stream);
	/* One call on @stream with the backend's device (context) current
	 * and the caller's restored after; devaddr and value only for the
	 * write and the wait. 0 or a vendor status. */
	unsigned int (*stream_call)(struct gv_backend *b, enum gv_stream_op op,
				    void *stream, uint64_t devaddr,
				    uint64_t value);
	/* Static name of a status ("CUDA_ERROR_LAUNCH_FAILED"). */
	const char *(*status_name)(struct gv_backend *b, unsigned int status);
	/* True when the status leaves the context/device unusable: it will
	 * never store again, so pending stores and awaits end at once. */
	bool (*status_sticky)(unsigned int status);
	/* True when the status only says "not now": a graph capture in
	 * progress forbade the call (CUDA 900-909). Neither done nor failed. */
	bool (*status_not_now)(unsigned int status);
};

struct gv_await;

struct gv_backend {
	const struct gv_ops *ops;
	int device;
	pthread_mutex_t lock;		/* sticky; never held across a driver call */
	/* A pool of private streams for event awaits, made as needed: an
	 * event await takes the stream its slot's pending stores are on, else
	 * an idle one, so unrelated events never queue behind each other
	 * (gv_event_stream). */
	pthread_mutex_t event_lock;
	void *event_streams[GV_EVENT_STREAMS];
	uint64_t event_keys[GV_EVENT_STREAMS];	/* their stream_admit keys */
	uint32_t nevent_streams;
	uint32_t event_next;	/* round robin once all are busy */
	unsigned int sticky;		/* first sticky status, 0 if none */
	char sticky_op[64];		/* the call that first reported it */
	uint64_t leaked_lines;
};

struct gpuar_vendor_line {
	struct gv_backend *b;
	struct gpuar_port *port;
	struct gpuar_line *line;
	uint64_t *words;
	size_t page_bytes;
	uint64_t devaddr;
	pthread_mutex_t lock;		/* seq, owner, fences */
	uint64_t seq[GPUAR_LINE_SLOTS];
	uint64_t owner[GPUAR_LINE_SLOTS];	/* key of the stream storing there */
	bool owned[GPUAR_LINE_SLOTS];
	uint64_t fence_seq[GV_FENCES];	/* last number stored per fence */
	uint64_t fence_busy;		/* bit i: fence i's store is pending */
	bool unfenced;			/* a reverse wait without its fence */
	uint32_t awaits;		/* submitted, not yet reaped (registry lock) */
	struct gpuar_vendor_line *leaked_next;	/* on the leaked list */
	/* On the live list (gv_lines_lock) from alloc to free or leak, so a
	 * closing port finds its lines (gv_lines_port_closed). */
	struct gpuar_vendor_line *live_next;
	/* The port closed first: the line kept its page (gpuar_line_keep),
	 * takes no more stores or waits (-EBADF), and freeing it unmaps the
	 * page once the device is done with it. */
	bool port_closed;
};

static inline unsigned int gv_query(struct gv_backend *b, void *stream)
{
	return b->ops->stream_call(b, GV_QUERY, stream, 0, 0);
}

void gv_backend_init(struct gv_backend *b, const struct gv_ops *ops,
		     int device);
void gv_backend_destroy(struct gv_backend *b);
/* Forget every await of @b not yet reaped (the backend is going away). */
void gv_awaits_drop(struct gv_backend *b);
/* Destroy the private event-await streams (the backend is going away). */
void gv_event_streams_destroy(struct gv_backend *b);

/*
 * Fill @diag with GPUAR_E_BACKEND "{name} backend error {status} ({status
 * name}): {detail}" and return -@err. @status GV_NO_VENDOR_STATUS prints
 * "-" and "gpuar" (the refusal is the backend's, not the vendor's).
 */
int gv_fail(struct gv_backend *b, struct gpuar_error *diag, int err,
	    unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * A vendor call @op failed with @status: fill @diag (noting, for a sticky
 * status, the first such error and what it poisons) and return a negative
 * errno (-EIO, -ENOMEM, -EINVAL, -ENODEV...).
 */
int gv_vendor_fail(struct gv_backend *b, struct gpuar_error *diag,
		   unsigned int status, const char *op);

void gv_diag_clear(struct gpuar_error *diag);

/*
 * An argument refused before any backend work: -EINVAL with
 * GPUAR_E_INVALID_ARGUMENT naming @what, so *@diag never keeps a stale
 * code from an earlier call.
 */
int gv_refuse(struct gpuar_error *diag, const char *what);

/*
 * The vendor's per-thread capture-mode exchange (both vendors take the
 * mode by pointer and return a status), and its relaxed mode.
 */
typedef unsigned int (*gv_capture_exchange_fn)(unsigned int *mode);
#define GV_CAPTURE_MODE_RELAXED 2u
/* Around the backend's own driver calls: the calling thread in the relaxed
 * mode, then its own mode again (nesting allowed; no-op when NULL, a
 * driver without the exchange). */
void gv_capture_relax(gv_capture_exchange_fn exchange);
void gv_capture_restore(gv_capture_exchange_fn exchange);

int gv_line_alloc(struct gv_backend *b, struct gpuar_port *port,
		  struct gpuar_vendor_line **line, struct gpuar_error *diag);
int gv_line_free(struct gpuar_vendor_line *line, uint64_t timeout_ns,
		 struct gpuar_error *diag);
int gv_record(struct gpuar_vendor_line *line, uint32_t slot, void *stream,
	      uint64_t *target, struct gpuar_error *diag);
/* gv_record with the store enqueued by @store (NULL: the default);
 * *@id (if non-NULL) gets what admitting the stream learnt. */
int gv_record_store(struct gpuar_vendor_line *line, uint32_t slot,
		    void *stream, const struct gv_store *store,
		    struct gv_stream_id *id, uint64_t *target,
		    struct gpuar_error *diag);
int gv_await(struct gpuar_vendor_line *line, uint32_t slot, void *stream,
	     const struct gpuar_plan *plan, uint64_t point, uint64_t user_data,
	     uint64_t *target, struct gpuar_error *diag);
/* gv_await with the store enqueued by @store (NULL: the default). */
int gv_await_store(struct gpuar_vendor_line *line, uint32_t slot,
		   void *stream, const struct gv_store *store,
		   const struct gpuar_plan *plan, uint64_t point,
		   uint64_t user_data, uint64_t *target,
		   struct gpuar_error *diag);
/* Await @event: a private stream waits on it, then stores the number. */
int gv_await_event(struct gpuar_vendor_line *line, uint32_t slot,
		   void *event, const struct gpuar_plan *plan, uint64_t point,
		   uint64_t user_data, uint64_t *target,
		   struct gpuar_error *diag);
/*
 * True when the device will never store into @line again: its context
 * (device) is poisoned, or a reset destroyed the page's registration.
 * *@bad: the vendor status that says so; *@what: a sentence for a diag.
 */
bool gv_line_lost(struct gpuar_vendor_line *line, unsigned int *bad,
		  const char **what);
/*
 * The store of @target into @slot was lost (its stream went idle without
 * it reaching the host): where no later record followed, nothing is
 * pending in the slot, so it frees (and another stream may take it).
 */
void gv_slot_lost(struct gpuar_vendor_line *line, uint32_t slot,
		  uint64_t target);
/* For tests: the awaits the registry holds, the lookups of a record's
 * await, and the entries those lookups have stepped over, since the
 * process started. */
uint64_t gv_registry_awaits(void);
uint64_t gv_registry_steps(void);
uint64_t gv_registry_lookups(void);
/* Awaits submitted on @line and not yet reaped. */
uint32_t gv_line_awaits(struct gpuar_vendor_line *line);
/* Forget @line's awaits: their port closed, so none is ever reaped. */
void gv_line_awaits_forget(struct gpuar_vendor_line *line);
/* Install the port close observer (once): vendor_await.c. */
void gv_observe_ports_once(void);
/* @port is closing: its live lines keep their pages, port_closed. */
void gv_lines_port_closed(struct gpuar_port *port);
/* gpuar_vendor_resolve: 1 with *@out to hand out, 0 when resubmitted. */
int gv_resolve_record(struct gpuar_port *port, const struct gpuar_record *rec,
		      struct gpuar_vendor_completion *out,
		      struct gpuar_error *diag);
int gv_reap(struct gv_backend *b, struct gpuar_port *port,
	    struct gpuar_vendor_completion *out, uint32_t max,
	    int64_t timeout_ns, struct gpuar_error *diag);
int gv_stream_wait_word(struct gpuar_vendor_line *line, uint32_t slot,
			void *stream, uint64_t target,
			struct gpuar_error *diag);
/* The stream's state as the error authority: 0 done, 1 pending, <0 error. */
int gv_stream_status(struct gv_backend *b, void *stream,
		     struct gpuar_error *diag);
int gv_stream_synchronize(struct gv_backend *b, void *stream,
			  struct gpuar_error *diag);

/* The wait-driver source (see gpuar_vendor_source in <gpuar/vendor.h>). */
int gv_source_init(struct gpuar_vendor_source *src,
		   struct gpuar_vendor_line *line, uint32_t slot, void *stream,
		   struct gpuar_error *diag);
int gv_wait(struct gpuar_waiter *waiter, struct gpuar_vendor_source *src,
	    const struct gpuar_plan *plan, uint64_t point, uint64_t user_data,
	    struct gpuar_record *rec, struct gpuar_error *diag);

/*
 * A vendor queue (gpuar_cuda_queue_*, gpuar_hip_queue_*): a backend
 * handle, a port of its own and its lines; vendor_queue.c.
 */
struct gv_queue {
	struct gv_backend *b;
	void *handle;			/* the backend handle, closed last */
	void (*handle_close)(void *handle);
	struct gpuar_port *port;
	pthread_mutex_t lock;		/* lines, counters; held across an await */
	struct gpuar_vendor_line **lines;
	uint32_t nlines;
	uint64_t next_user_data;	/* the last user data handed out */
	uint64_t outstanding;		/* awaits submitted, not yet reaped */
};

/* Takes @handle: closed with @handle_close on failure and at close. */
int gv_queue_open(struct gv_queue **q, struct gv_backend *b, void *handle,
		  void (*handle_close)(void *handle), struct gpuar_error *diag);
/*
 * The public calls, on @queue (a struct gpuar_cuda_queue or
 * gpuar_hip_queue pointer, which is a struct gv_queue): refused (-EINVAL)
 * when NULL or not a queue of @ops' backend; close returns 0 for NULL.
 */
int gv_queue_await(const struct gv_ops *ops, void *queue, void *stream,
		   uint64_t *user_data, struct gpuar_error *diag);
int gv_queue_reap(const struct gv_ops *ops, void *queue,
		  struct gpuar_vendor_completion *out, uint32_t max,
		  int64_t timeout_ns, struct gpuar_error *diag);
int gv_queue_fd(const struct gv_ops *ops, const void *queue);
int gv_queue_close(const struct gv_ops *ops, void *queue,
		   uint64_t timeout_ns, struct gpuar_error *diag);

#endif /* GPUAR_BACKENDS_VENDOR_H */
