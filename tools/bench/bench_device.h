/* SPDX-License-Identifier: MIT */
/*
 * The simulated device: a thread pinned to its own CPU that stands in for
 * a GPU. For each launched job it sleeps (an absolute hrtimer sleep with 1
 * ns timer slack) until a short lead before the job's due time, spins the
 * rest, stores the sequence number into the stream's line with a release
 * store and records when it stored. It never spins through a whole job:
 * that would take a CPU from the waiter and distort every ratio.
 *
 * Each stream's line is the first 64 bytes of a page of its own, as a
 * device-written line must be. A launch is a doorbell: the launching
 * thread publishes the job and wakes the device only when the device is
 * asleep past the new job's wake time (a real launch costs a few µs too).
 *
 * After a store the device can notify, as a producer that wakes its
 * consumer would: a futex wake (the stand-in for an interrupt-driven
 * blocking sync) or a vgem fence signal. The CPU time of that notification
 * is measured apart, because it counts against the strategy while the rest
 * of the device's time does not.
 *
 * With --device cuda the same interface drives a real GPU instead
 * (bench_cuda.h): the lines are registered for the device, a launch is a
 * spin kernel of the job's duration followed by the stream's write-value
 * of the sequence number, and the store time is the kernel's last
 * %globaltimer read mapped onto CLOCK_MONOTONIC. There is no device
 * thread, so nothing is subtracted from the system CPU for it.
 */
#ifndef GPUAR_BENCH_DEVICE_H
#define GPUAR_BENCH_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BENCH_MAX_STREAMS 64

/* The completion producer (--device). */
enum bench_device_kind {
	BENCH_DEVICE_SIM,	/* the pinned thread */
	BENCH_DEVICE_CUDA,	/* a CUDA GPU through the driver API */
};

/* "sim", "cuda". */
const char *bench_device_kind_name(enum bench_device_kind kind);

struct bench_device;
struct bench_cuda;

struct bench_stream {
	uint64_t *line;			/* 64-byte line at the start of its page */
	_Atomic uint64_t due_ns;	/* when the pending job's store is due */
	_Atomic uint64_t due_seq;	/* the sequence number it stores */
	_Atomic uint64_t stored_seq;	/* last stored; store_ns is its time */
	_Atomic uint64_t store_ns;
	_Atomic uint32_t fence;		/* vgem fence to signal after the store, 0 none */
	struct bench_device *dev;	/* owner (its producer gives store times) */
	unsigned int index;		/* in dev->stream[] */
};

enum bench_notify {
	BENCH_NOTIFY_NONE,
	BENCH_NOTIFY_FUTEX,	/* bump ->event and wake its waiters */
	BENCH_NOTIFY_VGEM,	/* signal the stream's vgem fence */
	BENCH_NOTIFY_EVENT,	/* CUDA: record the stream's event after the write */
	BENCH_NOTIFY_HOSTFN,	/* CUDA: enqueue a host function after the write */
};

/* What a run reports about its producer (the JSON env, the table header). */
struct bench_device_info {
	enum bench_device_kind kind;
	char gpu[96];			/* CUDA: the device's name */
	int driver_version;		/* CUDA: cuDriverGetVersion */
	char sched[96];			/* CUDA: the primary context's scheduling */
	unsigned int clock_syncs;	/* CUDA: ping-pong calibrations made */
	double clock_sync_uncertainty_us;	/* the worst one's half round trip */
	double clock_offset_drift_us;	/* max - min offset over the syncs */
	uint64_t early_waits;		/* seen before the mapped store time */
	double most_early_us;		/* by how much, at most */
	char error[320];		/* why the device did not start */
};

struct bench_device {
	struct bench_stream stream[BENCH_MAX_STREAMS];
	unsigned int streams;
	uint64_t lead_ns;		/* spin this long before each store */
	int cpu;			/* pinned CPU, -1 for none */

	_Atomic enum bench_notify notify;
	int vgem_fd;			/* for BENCH_NOTIFY_VGEM */
	_Atomic uint32_t event;		/* futex word bumped after each store */
	_Atomic uint32_t event_waiters;	/* waiters blocked on ->event */

	_Atomic uint32_t doorbell;	/* futex word bumped by each launch */
	_Atomic uint64_t asleep_until;	/* device's wake time; 0 while awake */
	_Atomic bool stop;
	_Atomic uint64_t notify_cpu_ns;	/* CPU spent notifying */
	_Atomic uint64_t notify_errors;	/* failed fence signals */
	_Atomic uint64_t late_stores;	/* stores after their due time + 50 µs */

	pthread_t thread;
	bool running;

	enum bench_device_kind kind;
	struct bench_cuda *cuda;	/* kind CUDA: the producer */
	bool failed;			/* a launch or store time failed */
	char failure[160];		/* the first such failure */
	uint64_t early_waits;		/* waits seen before their store time */
	uint64_t most_early_ns;
};

/*
 * Map the lines and start the thread on @cpu (-1: unpinned). Returns 0 or
 * a negative errno.
 */
int bench_device_start(struct bench_device *dev, unsigned int streams,
		       uint64_t lead_ns, int cpu);
void bench_device_stop(struct bench_device *dev);

/*
 * Start the CUDA producer for @streams streams on device 0 (the driver
 * loaded as the CUDA backend does: libcuda.so.1 or $GPUAR_CUDA_LIBRARY).
 * Must be called, and the device used, from one thread (the primary
 * context stays current on it). 0, or a negative errno with @why.
 */
int bench_device_start_cuda(struct bench_device *dev, unsigned int streams,
			    char *why, size_t size);

/*
 * Before a repetition, with the strategy's lines in place: CUDA registers
 * the lines a strategy swapped in (user-predict's port lines) and
 * re-synchronises the clocks. 0, or a negative errno with @why.
 */
int bench_device_arm(struct bench_device *dev, char *why, size_t size);
/* After a repetition, before the strategy closes: undo bench_device_arm. */
void bench_device_disarm(struct bench_device *dev);

/* Let the device finish everything launched (after a failed repetition). */
void bench_device_drain(struct bench_device *dev);

/* CPU time of the device's own thread (0 for a GPU: it has none). */
uint64_t bench_device_cpu_ns(const struct bench_device *dev);

/* 0, or -EIO with the first launch or store-time failure in @why. */
int bench_device_failure(const struct bench_device *dev, char *why, size_t size);

/* Count a wait seen @early_ns before its store time (clock mapping error). */
void bench_device_note_early(struct bench_device *dev, uint64_t early_ns);

/* What to report about the producer. */
void bench_device_describe(const struct bench_device *dev,
			   struct bench_device_info *info);

/*
 * Launch a job on @stream: store @seq into its line @duration_ns from now.
 * The stream must be idle (its previous job stored). Returns the due time.
 */
uint64_t bench_device_launch(struct bench_device *dev, unsigned int stream,
			     uint64_t seq, uint64_t duration_ns);

/* The store time of @seq, waiting the few ns between store and record. */
uint64_t bench_device_store_ns(struct bench_stream *s, uint64_t seq);

/* Clear the lines and counters between repetitions (device idle). */
void bench_device_reset(struct bench_device *dev);

#endif /* GPUAR_BENCH_DEVICE_H */
