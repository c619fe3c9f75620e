/* SPDX-License-Identifier: MIT */
/*
 * TEST DOUBLE. The in-order stream queue shared by the fake CUDA driver
 * (libcuda.so.1) and the fake HIP runtime (libamdhip64.so.6) that the
 * backend tests load instead of the vendor's libraries. Nothing here talks
 * to a GPU and nothing here is shipped.
 *
 * A fake stream is an in-order queue run by its own worker thread. Its
 * operations are timed work, a 64-bit store into host memory (the device
 * write-value), a wait until a host word satisfies a comparison (the device
 * wait-value), a fault (a launch that fails) and a call (a function of the
 * double run in order on the worker: the kernels and events a double
 * models in C, since it cannot run device code). A fault poisons the
 * stream's "domain" (a CUDA context, a HIP device): like real drivers, the
 * error is sticky and every stream of the domain reports it from then on,
 * and queued operations of a poisoned domain are dropped, not run.
 */
#ifndef GPUAR_FAKE_QUEUE_H
#define GPUAR_FAKE_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The doubles' thread-local variables. The doubles are dlopen'ed, so
 * their TLS would be dynamic, reached through __tls_get_addr; clang 14's
 * LeakSanitizer tracks those blocks and takes one that happens to start
 * 16 bytes into a page for glibc 2.19's layout, reading a header that is
 * not there: its tracer then dies at exit ("Tracer caught signal 11",
 * the test exits 1), depending only on where the heap put the block.
 * initial-exec puts the few bytes in the static TLS that glibc keeps
 * spare for libraries opened later, scanned as static TLS.
 */
#define FQ_THREAD_LOCAL __thread __attribute__((tls_model("initial-exec")))

struct fq_domain {
	pthread_mutex_t lock;
	unsigned int sticky;	/* the first fault's code, 0 while healthy */
};

enum fq_op_kind {
	FQ_WORK = 1,		/* sleep ns */
	FQ_WRITE,		/* release-store value into *word */
	FQ_WAIT_WRAPPING,	/* until (int64_t)(*word - value) >= 0 */
	FQ_WAIT_PLAIN,		/* until (*word & mask) >= value */
	FQ_FAULT,		/* poison the domain with code */
	FQ_CALL,		/* code = call(s, args); a non-zero code poisons */
};

struct fq_stream;
#define FQ_CALL_ARGS 4

struct fq_op {
	struct fq_op *next;
	enum fq_op_kind kind;
	uint64_t ns;
	uint64_t *word;
	uint64_t value;
	uint64_t mask;
	unsigned int code;
	unsigned int (*call)(struct fq_stream *s, const uint64_t *args);
	/* If set, run once the op has run or been dropped (a poisoned
	 * domain's queue): gives back what the op holds (an event). */
	void (*finish)(const uint64_t *args);
	uint64_t args[FQ_CALL_ARGS];
};

struct fq_stream {
	struct fq_domain *domain;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t worker;
	struct fq_op *head, *tail;
	struct fq_op *current;	/* the op the worker is running, or NULL */
	bool stopping;
	bool capturing;
	/* While capturing: the capture's mode and thread, and whether a
	 * prohibited call invalidated it (fq_capture_*). */
	unsigned int capture_mode;
	pthread_t capture_thread;
	bool capture_invalidated;
	int device;
	/* The handle is no longer a stream (destroyed, or its context or
	 * device reset): every call on it answers this code (0: alive). */
	unsigned int gone;
	/* Its queued work is dropped, not run (a reset destroyed it). */
	bool dropping;
	/* Retired: the worker drains the queue (or drops it), then leaves on
	 * its own; the struct is never freed, so a stale handle stays safe
	 * to ask. */
	bool retired;
	/* Write-values to complete without storing (fault injection). */
	unsigned int drop_writes;
};

void fq_domain_init(struct fq_domain *d);
/* The domain's sticky error, 0 if none. */
unsigned int fq_domain_error(struct fq_domain *d);
/* Heal the domain (the doubles' reset between uses). */
void fq_domain_clear(struct fq_domain *d);

/*
 * 0, or -1 when the worker thread cannot start or too many streams run.
 * Started streams are known to fq_streams_touching until stopped.
 */
int fq_stream_start(struct fq_stream *s, struct fq_domain *d, int device);
/* Drain the queue (or drop it if poisoned), stop the worker. */
void fq_stream_stop(struct fq_stream *s);

/*
 * The handle is destroyed, its work is not (CUDA Driver API
 * cuStreamDestroy: "In case the device is still doing work in the stream
 * hStream when cuStreamDestroy() is called, the function will return
 * immediately and the resources associated with hStream will be released
 * automatically once the device has completed all work"): every later
 * call on the handle answers @code, the queue still runs, and the worker
 * leaves once it is empty. The struct must never be freed.
 */
void fq_stream_close_handle(struct fq_stream *s, unsigned int code);

/*
 * A reset destroyed the stream with its context or device: as
 * fq_stream_close_handle, and its queued work is dropped, the op that
 * runs (a wait) abandoned: nothing it would have stored lands.
 */
void fq_stream_kill(struct fq_stream *s, unsigned int code);

/* The code calls on the handle answer once it is gone, 0 while alive. */
unsigned int fq_stream_gone(struct fq_stream *s);

/*
 * Fault injection, not a documented driver behaviour: the next @n
 * write-values run on @s complete without storing, the stand-in for a
 * store that never becomes visible to the host.
 */
void fq_stream_drop_writes(struct fq_stream *s, unsigned int n);

/*
 * Enqueue an operation (copied) as a driver does: the domain's sticky
 * code when poisoned, @capture_refused while the stream is being
 * captured (faults are still taken), @no_memory when out of memory, else
 * 0.
 */
unsigned int fq_stream_enqueue(struct fq_stream *s, const struct fq_op *op,
			       unsigned int capture_refused,
			       unsigned int no_memory);

bool fq_stream_capturing(struct fq_stream *s);
/* A stream query: the sticky code, @not_ready while busy, else 0. */
unsigned int fq_stream_query(struct fq_stream *s, unsigned int not_ready);

/* True when nothing is queued or running. */
bool fq_stream_idle(struct fq_stream *s);
/* Block until idle or the domain is poisoned. Returns the sticky code. */
unsigned int fq_stream_sync(struct fq_stream *s);

/* How many started streams have a queued or running op that writes or
 * waits on [addr, addr+len). */
unsigned int fq_streams_touching(const void *addr, uint64_t len);

/* The domain's sticky error seen from a call running on @s (0 if none). */
unsigned int fq_stream_error(struct fq_stream *s);

/*
 * The calling thread's slot for its per-thread default stream of @device
 * (below FQ_THREAD_STREAM_DEVICES), which the double fills on first use:
 * kept as thread-specific data (a pthread key), not in the double's own
 * TLS, so every thread, including one that reuses an exited thread's id,
 * starts with empty slots; reachable for leak checkers. NULL when out of
 * memory.
 */
#define FQ_THREAD_STREAM_DEVICES 4
void **fq_thread_stream_slot(int device);

/*
 * Events, as both vendors have them: a record is an in-order marker on a
 * stream; a stream wait on an event makes the stream's later work wait
 * until the event's latest record *at the time of the wait call* has been
 * reached (CUDA Driver API cuStreamWaitEvent: "the stream will wait only
 * for the completion of the most recent host call to cuEventRecord() on
 * hEvent"; a never-recorded event is no wait at all). A wait also ends
 * when the recording stream's domain is poisoned (the record is dropped).
 * Destroying an event does not wait for it ("the call does not block on
 * completion of the event, and any associated resources will
 * automatically be released asynchronously at completion", CUDA Driver
 * API cuEventDestroy; hipEventDestroy likewise): every queued record and
 * wait holds a reference, and the last one given back frees the event.
 */
struct fq_event {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t recorded;	/* records made */
	uint64_t fired;		/* the latest record its stream reached */
	struct fq_domain *domain;	/* of the stream last recorded on */
	unsigned int refs;	/* the handle's, and one per queued op */
};

/* A new event (the handle's reference), or NULL when out of memory. */
struct fq_event *fq_event_new(void);
/* The handle is destroyed: the event goes once no queued op holds it. */
void fq_event_release(struct fq_event *e);
/* Enqueue a record of @e on @s (the enqueue's result, as fq_stream_enqueue). */
unsigned int fq_event_record(struct fq_event *e, struct fq_stream *s,
			     unsigned int capture_refused,
			     unsigned int no_memory);
/* Enqueue on @s a wait for @e's latest record. */
unsigned int fq_stream_wait_event(struct fq_stream *s, struct fq_event *e,
				  unsigned int capture_refused,
				  unsigned int no_memory);
/* Block until @e's latest record is reached: 0, or the sticky code. */
unsigned int fq_event_sync(struct fq_event *e);
/* 0 when @e's latest record is reached, @not_ready before, or sticky. */
unsigned int fq_event_query(struct fq_event *e, unsigned int not_ready);

/*
 * Graph capture modes, as both vendors document them (CUDA
 * cuThreadExchangeStreamCaptureMode in cuda.h; HIP's
 * hipThreadExchangeStreamCaptureMode mirrors it): a thread in the GLOBAL
 * mode (the default) "is prohibited from potentially unsafe API calls" if
 * it has an ongoing capture not begun RELAXED, or if "any other thread has
 * a concurrent capture sequence initiated with" GLOBAL; THREAD_LOCAL only
 * in the first case; RELAXED never. A prohibited call fails and the
 * capture that prohibited it is invalidated: ending it fails.
 */
enum {
	FQ_CAPTURE_GLOBAL = 0,
	FQ_CAPTURE_THREAD_LOCAL = 1,
	FQ_CAPTURE_RELAXED = 2,
};
/* Swap the calling thread's mode: the old one. */
unsigned int fq_capture_exchange_mode(unsigned int mode);
/* Begin capturing @s from this thread: false if it is already, or if too
 * many captures run. */
bool fq_capture_begin(struct fq_stream *s, unsigned int mode);
/* End it: false when it was not capturing; *@invalidated says whether a
 * prohibited call broke it meanwhile. */
bool fq_capture_end(struct fq_stream *s, bool *invalidated);
bool fq_capture_invalidated(struct fq_stream *s);
/* A potentially unsafe call by this thread: true when allowed, false
 * (after invalidating the captures that prohibit it) otherwise. */
bool fq_capture_permits_unsafe_call(void);

/* Read a fault-injection setting from the environment (names are listed
 * in each double's header comment). */
bool fq_env_flag(const char *name);

#endif /* GPUAR_FAKE_QUEUE_H */
