// SPDX-License-Identifier: MIT
#include "bench_device.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_cpu.h"
#include "bench_cuda.h"
#include "bench_futex.h"
#include "bench_vgem.h"

#define LATE_STORE_NS 50000ULL

const char *bench_device_kind_name(enum bench_device_kind kind)
{
	return kind == BENCH_DEVICE_CUDA ? "cuda" : "sim";
}

static void notify(struct bench_device *dev, struct bench_stream *s)
{
	enum bench_notify how = atomic_load(&dev->notify);
	uint64_t t0;

	/* EVENT and HOSTFN are the CUDA producer's: its stream does them. */
	if (how == BENCH_NOTIFY_NONE || how == BENCH_NOTIFY_EVENT ||
	    how == BENCH_NOTIFY_HOSTFN)
		return;
	t0 = bench_thread_cpu_ns();
	if (how == BENCH_NOTIFY_FUTEX) {
		atomic_fetch_add(&dev->event, 1);
		if (atomic_load(&dev->event_waiters))
			bench_futex_wake((uint32_t *)&dev->event, 1 << 30);
	} else {
		uint32_t fence = atomic_exchange(&s->fence, 0);

		if (fence && bench_vgem_signal(dev->vgem_fd, fence))
			atomic_fetch_add(&dev->notify_errors, 1);
	}
	atomic_fetch_add(&dev->notify_cpu_ns, bench_thread_cpu_ns() - t0);
}

static void store(struct bench_device *dev, struct bench_stream *s,
		  uint64_t seq, uint64_t due)
{
	uint64_t t = bench_now_ns();

	__atomic_store_n(&s->line[0], seq, __ATOMIC_RELEASE);
	atomic_store(&s->store_ns, t);
	atomic_store(&s->stored_seq, seq);
	if (t > due + LATE_STORE_NS)
		atomic_fetch_add(&dev->late_stores, 1);
	notify(dev, s);
}

/* The earliest pending job, or NULL when every stream is idle. */
static struct bench_stream *earliest(struct bench_device *dev, uint64_t *due,
				     uint64_t *seq)
{
	struct bench_stream *best = NULL;

	for (unsigned int i = 0; i < dev->streams; i++) {
		struct bench_stream *s = &dev->stream[i];
		uint64_t q = atomic_load(&s->due_seq);

		if (q == atomic_load(&s->stored_seq))
			continue;
		uint64_t d = atomic_load(&s->due_ns);

		if (!best || d < *due) {
			best = s;
			*due = d;
			*seq = q;
		}
	}
	return best;
}

static void *device_main(void *arg)
{
	struct bench_device *dev = arg;

	/* Without this a 50 µs default slack would make every sleep late. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!atomic_load(&dev->stop)) {
		uint32_t bell = atomic_load(&dev->doorbell);
		uint64_t due = 0, seq = 0, wake;
		struct bench_stream *s = earliest(dev, &due, &seq);

		wake = s ? (due > dev->lead_ns ? due - dev->lead_ns : 0) : UINT64_MAX;
		if (bench_now_ns() < wake) {
			/*
			 * Publish the wake time, then re-check the doorbell:
			 * a launch either sees asleep_until and rings, or
			 * bumped the doorbell before this load and the futex
			 * wait returns at once.
			 */
			atomic_store(&dev->asleep_until, wake);
			if (atomic_load(&dev->doorbell) == bell)
				bench_futex_wait((uint32_t *)&dev->doorbell, bell,
						 wake == UINT64_MAX ? 0 : wake);
			atomic_store(&dev->asleep_until, 0);
			continue;
		}
		while (bench_now_ns() < due)
			bench_cpu_relax();
		store(dev, s, seq, due);
	}
	return NULL;
}

static void unmap_lines(struct bench_device *dev)
{
	long page = sysconf(_SC_PAGESIZE);

	for (unsigned int i = 0; i < dev->streams; i++)
		if (dev->stream[i].line)
			munmap(dev->stream[i].line, (size_t)page);
}

/* Reset @dev and give each stream a line alone in its page. */
static int map_lines(struct bench_device *dev, unsigned int streams,
		     enum bench_device_kind kind)
{
	long page = sysconf(_SC_PAGESIZE);

	if (streams == 0 || streams > BENCH_MAX_STREAMS)
		return -EINVAL;
	memset(dev, 0, sizeof(*dev));
	dev->kind = kind;
	dev->streams = streams;
	dev->vgem_fd = -1;
	dev->cpu = -1;
	for (unsigned int i = 0; i < streams; i++) {
		void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p == MAP_FAILED) {
			int err = -errno;

			unmap_lines(dev);
			return err;
		}
		dev->stream[i].line = p;
		dev->stream[i].dev = dev;
		dev->stream[i].index = i;
	}
	return 0;
}

int bench_device_start(struct bench_device *dev, unsigned int streams,
		       uint64_t lead_ns, int cpu)
{
	int err = map_lines(dev, streams, BENCH_DEVICE_SIM);

	if (err)
		return err;
	dev->lead_ns = lead_ns;
	dev->cpu = cpu;
	err = -pthread_create(&dev->thread, NULL, device_main, dev);
	if (err) {
		unmap_lines(dev);
		return err;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		err = -pthread_setaffinity_np(dev->thread, sizeof(set), &set);
		if (err) {
			dev->running = true;
			bench_device_stop(dev);
			return err;
		}
	}
	dev->running = true;
	return 0;
}

int bench_device_start_cuda(struct bench_device *dev, unsigned int streams,
			    char *why, size_t size)
{
	int err = map_lines(dev, streams, BENCH_DEVICE_CUDA);

	if (err) {
		snprintf(why, size, "%s", strerror(-err));
		return err;
	}
	err = bench_cuda_open(&dev->cuda, dev, why, size);
	if (err) {
		unmap_lines(dev);
		return err;
	}
	dev->running = true;
	return 0;
}

void bench_device_stop(struct bench_device *dev)
{
	if (!dev->running)
		return;
	if (dev->kind == BENCH_DEVICE_CUDA) {
		/* Unregisters the lines before they are unmapped. */
		bench_cuda_close(dev->cuda);
		dev->cuda = NULL;
	} else {
		atomic_store(&dev->stop, true);
		atomic_fetch_add(&dev->doorbell, 1);
		bench_futex_wake((uint32_t *)&dev->doorbell, 1);
		pthread_join(dev->thread, NULL);
	}
	unmap_lines(dev);
	dev->running = false;
}

/* Keep the first failure; later ones follow from it. */
static void note_failure(struct bench_device *dev, const char *why)
{
	if (dev->failed)
		return;
	dev->failed = true;
	snprintf(dev->failure, sizeof(dev->failure), "%s", why);
}

static uint64_t cuda_launch(struct bench_device *dev, unsigned int stream,
			    uint64_t seq, uint64_t duration_ns)
{
	struct bench_stream *s = &dev->stream[stream];
	uint64_t due = bench_now_ns() + duration_ns;
	char why[160];

	atomic_store(&s->due_ns, due);
	atomic_store(&s->due_seq, seq);
	if (bench_cuda_launch(dev->cuda, stream, seq, duration_ns,
			      atomic_load(&dev->notify), why, sizeof(why)))
		note_failure(dev, why);
	return due;
}

static uint64_t cuda_store_ns(struct bench_stream *s, uint64_t seq)
{
	struct bench_device *dev = s->dev;
	char why[160];
	uint64_t t;

	if (dev->failed)
		return bench_now_ns();
	t = bench_cuda_store_ns(dev->cuda, s->index, seq, why, sizeof(why));
	if (!t) {
		note_failure(dev, why);
		return bench_now_ns();
	}
	/* Late: the kernel ended > 50 us past launch + duration (the launch
	 * latency, or a GPU busy with other work). */
	if (t > atomic_load(&s->due_ns) + LATE_STORE_NS)
		atomic_fetch_add(&dev->late_stores, 1);
	atomic_store(&s->store_ns, t);
	atomic_store(&s->stored_seq, seq);
	return t;
}

uint64_t bench_device_launch(struct bench_device *dev, unsigned int stream,
			     uint64_t seq, uint64_t duration_ns)
{
	struct bench_stream *s = &dev->stream[stream];
	uint64_t due, wake, asleep;

	if (dev->kind == BENCH_DEVICE_CUDA)
		return cuda_launch(dev, stream, seq, duration_ns);
	due = bench_now_ns() + duration_ns;
	wake = due > dev->lead_ns ? due - dev->lead_ns : 0;

	atomic_store(&s->due_ns, due);
	atomic_store(&s->due_seq, seq);
	atomic_fetch_add(&dev->doorbell, 1);
	asleep = atomic_load(&dev->asleep_until);
	if (asleep && wake < asleep)
		bench_futex_wake((uint32_t *)&dev->doorbell, 1);
	return due;
}

uint64_t bench_device_store_ns(struct bench_stream *s, uint64_t seq)
{
	if (s->dev && s->dev->kind == BENCH_DEVICE_CUDA)
		return cuda_store_ns(s, seq);
	while (atomic_load(&s->stored_seq) != seq)
		bench_cpu_relax();
	return atomic_load(&s->store_ns);
}

void bench_device_reset(struct bench_device *dev)
{
	for (unsigned int i = 0; i < dev->streams; i++) {
		struct bench_stream *s = &dev->stream[i];

		__atomic_store_n(&s->line[0], 0, __ATOMIC_RELEASE);
		atomic_store(&s->due_seq, 0);
		atomic_store(&s->stored_seq, 0);
		atomic_store(&s->store_ns, 0);
		atomic_store(&s->fence, 0);
	}
	atomic_store(&dev->notify, BENCH_NOTIFY_NONE);
	atomic_store(&dev->notify_cpu_ns, 0);
	atomic_store(&dev->notify_errors, 0);
	atomic_store(&dev->late_stores, 0);
	if (dev->kind == BENCH_DEVICE_CUDA)
		bench_cuda_reset(dev->cuda);
}

int bench_device_arm(struct bench_device *dev, char *why, size_t size)
{
	return dev->kind == BENCH_DEVICE_CUDA ? bench_cuda_arm(dev->cuda, why, size) : 0;
}

void bench_device_disarm(struct bench_device *dev)
{
	if (dev->kind == BENCH_DEVICE_CUDA)
		bench_cuda_disarm(dev->cuda);
}

void bench_device_drain(struct bench_device *dev)
{
	if (dev->kind == BENCH_DEVICE_CUDA) {
		bench_cuda_drain(dev->cuda);
		return;
	}
	for (unsigned int i = 0; i < dev->streams; i++)
		while (atomic_load(&dev->stream[i].stored_seq) !=
		       atomic_load(&dev->stream[i].due_seq))
			bench_sleep_until(bench_now_ns() + 100000);
}

uint64_t bench_device_cpu_ns(const struct bench_device *dev)
{
	return dev->kind == BENCH_DEVICE_CUDA ? 0 :
		bench_other_thread_cpu_ns(dev->thread);
}

int bench_device_failure(const struct bench_device *dev, char *why, size_t size)
{
	if (!dev->failed)
		return 0;
	snprintf(why, size, "%s", dev->failure);
	return -EIO;
}

void bench_device_note_early(struct bench_device *dev, uint64_t early_ns)
{
	dev->early_waits++;
	if (early_ns > dev->most_early_ns)
		dev->most_early_ns = early_ns;
}

void bench_device_describe(const struct bench_device *dev,
			   struct bench_device_info *info)
{
	memset(info, 0, sizeof(*info));
	info->kind = dev->kind;
	info->early_waits = dev->early_waits;
	info->most_early_us = (double)dev->most_early_ns / 1000.0;
	if (dev->kind == BENCH_DEVICE_CUDA && dev->cuda)
		bench_cuda_describe(dev->cuda, info);
}
