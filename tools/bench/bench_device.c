// SPDX-License-Identifier: MIT
#include "bench_device.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_cpu.h"
#include "bench_futex.h"
#include "bench_vgem.h"

#define LATE_STORE_NS 50000ULL

static void notify(struct bench_device *dev, struct bench_stream *s)
{
	enum bench_notify how = atomic_load(&dev->notify);
	uint64_t t0;

	if (how == BENCH_NOTIFY_NONE)
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

int bench_device_start(struct bench_device *dev, unsigned int streams,
		       uint64_t lead_ns, int cpu)
{
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (streams == 0 || streams > BENCH_MAX_STREAMS)
		return -EINVAL;
	memset(dev, 0, sizeof(*dev));
	dev->streams = streams;
	dev->lead_ns = lead_ns;
	dev->cpu = cpu;
	dev->vgem_fd = -1;
	for (unsigned int i = 0; i < streams; i++) {
		void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (p == MAP_FAILED) {
			err = -errno;
			goto unmap;
		}
		dev->stream[i].line = p;
	}
	err = -pthread_create(&dev->thread, NULL, device_main, dev);
	if (err)
		goto unmap;
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
unmap:
	for (unsigned int i = 0; i < streams; i++)
		if (dev->stream[i].line)
			munmap(dev->stream[i].line, (size_t)page);
	return err;
}

void bench_device_stop(struct bench_device *dev)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!dev->running)
		return;
	atomic_store(&dev->stop, true);
	atomic_fetch_add(&dev->doorbell, 1);
	bench_futex_wake((uint32_t *)&dev->doorbell, 1);
	pthread_join(dev->thread, NULL);
	for (unsigned int i = 0; i < dev->streams; i++)
		munmap(dev->stream[i].line, (size_t)page);
	dev->running = false;
}

uint64_t bench_device_launch(struct bench_device *dev, unsigned int stream,
			     uint64_t seq, uint64_t duration_ns)
{
	struct bench_stream *s = &dev->stream[stream];
	uint64_t due = bench_now_ns() + duration_ns;
	uint64_t wake = due > dev->lead_ns ? due - dev->lead_ns : 0;
	uint64_t asleep;

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
}
