/* SPDX-License-Identifier: MIT */
/*
 * gpuar-bench's CUDA producer (--device cuda): the completion stores of a
 * real GPU behind the bench's device interface (bench_device.h).
 *
 * The driver is loaded as the CUDA backend loads it (cuda_loader.h). Under
 * device 0's primary context (blocking-sync scheduling), each bench stream
 * gets a CUstream of its own and a blocking-sync event; its line's page is
 * registered with cuMemHostRegister (DEVICEMAP | PORTABLE). A launch is
 * the spin kernel of bench_cuda_kernels.ptx for the job's duration, then
 * cuStreamWriteValue64 of the sequence number into the line (default
 * flags: with the memory barrier), then, for the blocking-sync strategy,
 * the event. The kernel stamps its last %globaltimer read and the job's
 * sequence number into a control page; the store time is that stamp
 * mapped onto CLOCK_MONOTONIC by the latest clock sync (bench_clock_sync.h,
 * a ping-pong with the clock kernel, redone before every repetition).
 *
 * So latency counts from the kernel's last instruction: it includes the
 * stream's kernel-to-write-value gap, the same for every strategy, and is
 * known to within the clock sync's uncertainty (half the best round trip).
 *
 * Every call must come from the thread that opened the producer.
 */
#ifndef GPUAR_BENCH_CUDA_H
#define GPUAR_BENCH_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_device.h"

/* Room for a reason the driver gives (a step and a CUDA error name). */
#define BENCH_CUDA_WHY_MAX 160

/* Tries per clock sync: the best of these gives the offset. */
#define BENCH_CUDA_CLOCK_TRIES 200

/*
 * Open the producer for @dev (its streams and lines already set up).
 * 0, or a negative errno with @why naming the failing step.
 */
int bench_cuda_open(struct bench_cuda **out, struct bench_device *dev,
		    char *why, size_t size);
void bench_cuda_close(struct bench_cuda *c);

/*
 * Launch job @seq of @duration_ns on stream @i, then what @notify asks
 * for after the write: BENCH_NOTIFY_EVENT records the stream's event,
 * BENCH_NOTIFY_HOSTFN enqueues the host function (below).
 */
int bench_cuda_launch(struct bench_cuda *c, unsigned int i, uint64_t seq,
		      uint64_t duration_ns, enum bench_notify notify, char *why,
		      size_t size);

/*
 * The store time of job @seq on stream @i (CLOCK_MONOTONIC), waiting for
 * its stamp; 0 with @why when the stamp never comes (the context died).
 */
uint64_t bench_cuda_store_ns(struct bench_cuda *c, unsigned int i, uint64_t seq,
			     char *why, size_t size);

/* Zero the stamps (device idle). */
void bench_cuda_reset(struct bench_cuda *c);

/* See bench_device_arm / bench_device_disarm / bench_device_drain. */
int bench_cuda_arm(struct bench_cuda *c, char *why, size_t size);
void bench_cuda_disarm(struct bench_cuda *c);
void bench_cuda_drain(struct bench_cuda *c);

/* Run one clock sync now (bench_cuda_arm does; also for tests). */
int bench_cuda_sync_clock(struct bench_cuda *c, char *why, size_t size);

/* The offset (device timer - CLOCK_MONOTONIC) and its uncertainty, in ns. */
void bench_cuda_clock(const struct bench_cuda *c, int64_t *offset_ns,
		      uint64_t *uncertainty_ns);

/* Block (the driver's blocking sync) until stream @i's last event fired. */
int bench_cuda_event_wait(struct bench_cuda *c, unsigned int i, char *why,
			  size_t size);

/*
 * 0 while stream @i is healthy (busy or idle); -EIO with the driver's
 * sticky error in @why once its context failed: what a waiter asks when
 * the completion it waits for is late, so a dead stream is an error and
 * not a wait forever.
 */
int bench_cuda_stream_check(struct bench_cuda *c, unsigned int i, char *why,
			    size_t size);

/*
 * cuEventQuery of stream @i's event once job @seq's record of it was
 * enqueued: 1 when it fired, 0 before (or before that record), -EIO with
 * @why on an error. Any thread that called bench_cuda_attach.
 */
int bench_cuda_event_query(struct bench_cuda *c, unsigned int i, uint64_t seq,
			   char *why, size_t size);

/* Make the producer's context current on a helper thread, and undo it. */
int bench_cuda_attach(struct bench_cuda *c, char *why, size_t size);
void bench_cuda_detach(struct bench_cuda *c);

/* Entry points a strategy needs beyond the producer's own. */
enum bench_cuda_need {
	BENCH_CUDA_NEED_HOSTFN,		/* cuLaunchHostFunc */
	BENCH_CUDA_NEED_EVENT_QUERY,	/* cuEventQuery */
};

/*
 * For a strategy's open: 0 when @dev is a GPU whose driver has @need,
 * else a negative errno with @why.
 */
int bench_cuda_has(const struct bench_device *dev, enum bench_cuda_need need,
		   char *why, size_t size);

/*
 * For --list, before any producer opens: with --device cuda (@kind), load
 * the driver and check it has @need. 0 (also for the simulated device,
 * which bench_device_refusal refuses), or a negative errno with @why.
 */
int bench_cuda_probe(enum bench_device_kind kind, enum bench_cuda_need need,
		     char *why, size_t size);

/*
 * Host functions (BENCH_NOTIFY_HOSTFN): after job @seq's write, stream @i
 * runs a host function on the driver's thread that writes 1 (8 bytes)
 * into the eventfd set here (-1: none; set it only with the stream idle).
 * It makes no CUDA call: "The host function must not make any CUDA API
 * calls" (CUDA Driver API, cuLaunchHostFunc).
 */
void bench_cuda_set_hostfn_fd(struct bench_cuda *c, unsigned int i, int fd);

/* What the host functions saw, summed over the streams since open. */
struct bench_cuda_hostfn_stats {
	uint64_t calls;		/* host functions run */
	uint64_t early;		/* run before their job's word was visible */
	uint64_t lost;		/* eventfd writes that failed */
};
void bench_cuda_hostfn_stats(const struct bench_cuda *c,
			     struct bench_cuda_hostfn_stats *st);

void bench_cuda_describe(const struct bench_cuda *c,
			 struct bench_device_info *info);

#endif /* GPUAR_BENCH_CUDA_H */
