/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The gpuar port fixture: open /dev/gpuar, create ports, register lines
 * from anonymous memory, submit word and fence waits in batches, read
 * records. Written against include/uapi/linux/gpuar.h only.
 *
 * Helpers return the ioctl's result, or -1 with errno set, exactly as the
 * system call did, so tests assert the errno next to the call. None of
 * them asserts, so threads may use them. Those that would otherwise share
 * a name with libgpuar's API carry a t_ prefix (t_port_open is the raw
 * ioctl, gpuar_port_open the library's call).
 */
#ifndef GPUAR_SELFTEST_PORT_FIXTURE_H
#define GPUAR_SELFTEST_PORT_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/gpuar.h>

/* The plans the tests use, in binary form. */
#define PLAN_PARK_NS 100000ULL		/* park_us=100 */
#define PLAN_BACKSTOP_NS 1000000000ULL	/* 1 s: far past any test's work */

static inline struct gpuar_plan plan_poll(void)
{
	struct gpuar_plan p;

	memset(&p, 0, sizeof(p));
	p.park = GPUAR_PARK_POLL;
	return p;
}

static inline struct gpuar_plan plan_flag(__u64 park_ns, __u64 backstop_ns)
{
	struct gpuar_plan p;

	memset(&p, 0, sizeof(p));
	p.park = GPUAR_PARK_FLAG;
	p.park_ns = park_ns;
	p.backstop_ns = backstop_ns;
	return p;
}

/* flag + predict: margin 150 us, sleep 20 us..50 ms. */
static inline struct gpuar_plan plan_predict(__u32 window)
{
	struct gpuar_plan p = plan_flag(PLAN_PARK_NS, PLAN_BACKSTOP_NS);

	p.flags = GPUAR_PLAN_PREDICT;
	p.margin_ns = 150000;
	p.min_sleep_ns = 20000;
	p.max_sleep_ns = 50000000;
	p.window = window;
	return p;
}

static inline __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* A store as a device makes it: release, after its other writes. */
static inline void word_store(__u64 *word, __u64 value)
{
	__atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/* /dev/gpuar, or -1 with errno. */
static inline int t_dev_open(void)
{
	return open(GPUAR_DEVICE_PATH, O_RDWR | O_CLOEXEC);
}

static inline int t_version(int dev, struct gpuar_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	return ioctl(dev, GPUAR_IOC_VERSION, v);
}

/* The module's feature bits (GPUAR_FEATURE_*), or 0 if VERSION fails. */
static inline __u64 t_features(void)
{
	struct gpuar_version v;
	int dev = t_dev_open();
	__u64 f = 0;

	if (dev < 0)
		return 0;
	if (!t_version(dev, &v))
		f = v.features;
	close(dev);
	return f;
}

/* A new port fd (the ioctl's return value), or -1 with errno. */
static inline int t_port_create(int dev, __u32 flags)
{
	struct gpuar_port_create c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	return ioctl(dev, GPUAR_IOC_PORT_CREATE, &c);
}

/* Open the device, create a port with @flags, close the device. */
static inline int t_port_open(__u32 flags)
{
	int dev = t_dev_open();
	int port, err;

	if (dev < 0)
		return -1;
	port = t_port_create(dev, flags);
	err = errno;
	close(dev);
	errno = err;
	return port;
}

/*
 * Anonymous memory for lines: @pages pages, written once so the pages
 * exist. Each page holds 64 lines. NULL on failure.
 */
static inline __u64 *lines_map(size_t pages)
{
	size_t len = pages * (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0, len);
	return m;
}

static inline void lines_unmap(__u64 *lines, size_t pages)
{
	munmap(lines, pages * (size_t)sysconf(_SC_PAGESIZE));
}

/* Line @i of a mapping: its first word. */
static inline __u64 *line_at(__u64 *lines, unsigned int i)
{
	return lines + (size_t)i * GPUAR_LINE_SLOTS;
}

/* Register the line at @addr; the id goes to *@id. */
static inline int line_register(int port, const void *addr, __u32 *id)
{
	struct gpuar_line_register r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (__u64)(uintptr_t)addr;
	ret = ioctl(port, GPUAR_IOC_LINE_REGISTER, &r);
	if (ret == 0 && id)
		*id = r.id;
	return ret;
}

static inline int line_unregister(int port, __u32 id)
{
	struct gpuar_line_unregister u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.id = id;
	return ioctl(port, GPUAR_IOC_LINE_UNREGISTER, &u);
}

static inline struct gpuar_word_wait word_wait(__u32 line, __u32 slot,
					       __u64 target, __u64 point,
					       __u64 user_data,
					       struct gpuar_plan plan)
{
	struct gpuar_word_wait w;

	memset(&w, 0, sizeof(w));
	w.user_data = user_data;
	w.target = target;
	w.point = point;
	w.line = line;
	w.slot = slot;
	w.plan = plan;
	return w;
}

static inline struct gpuar_fence_wait fence_wait(int fd, __u64 user_data)
{
	struct gpuar_fence_wait f;

	memset(&f, 0, sizeof(f));
	f.user_data = user_data;
	f.fd = fd;
	return f;
}

/*
 * Submit @count entries of @entry_size bytes with ioctl @req. Returns the
 * number submitted or -1 with errno; *@error_index (if given) gets the
 * kernel's error_index.
 */
static inline int submit_raw(int port, unsigned long req, const void *entries,
			     __u32 count, __u32 entry_size, __u32 *error_index)
{
	struct gpuar_submit s;
	int ret;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.count = count;
	s.entry_size = entry_size;
	s.entries = (__u64)(uintptr_t)entries;
	s.error_index = 0xdeadbeef;
	ret = ioctl(port, req, &s);
	if (error_index)
		*error_index = s.error_index;
	return ret;
}

static inline int submit_words(int port, const struct gpuar_word_wait *w,
			       __u32 count, __u32 *error_index)
{
	return submit_raw(port, GPUAR_IOC_SUBMIT_WORD, w, count, sizeof(*w),
			  error_index);
}

static inline int submit_word(int port, struct gpuar_word_wait w)
{
	return submit_words(port, &w, 1, NULL);
}

static inline int submit_fences(int port, const struct gpuar_fence_wait *f,
				__u32 count, __u32 *error_index)
{
	return submit_raw(port, GPUAR_IOC_SUBMIT_FENCE, f, count, sizeof(*f),
			  error_index);
}

static inline int submit_fence(int port, int fd, __u64 user_data)
{
	struct gpuar_fence_wait f = fence_wait(fd, user_data);

	return submit_fences(port, &f, 1, NULL);
}

static inline int port_cancel(int port, __u64 user_data)
{
	struct gpuar_cancel c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.user_data = user_data;
	return ioctl(port, GPUAR_IOC_CANCEL, &c);
}

static inline int port_stats(int port, struct gpuar_port_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(port, GPUAR_IOC_PORT_STATS, st);
}

static inline int point_stats(int port, __u64 point,
			      struct gpuar_point_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->point = point;
	return ioctl(port, GPUAR_IOC_POINT_STATS, st);
}

/* 1 when @fd polls readable within @timeout_ms, 0 if not, -1 on error. */
static inline int fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	return n == 1 && (p.revents & POLLIN);
}

/*
 * Read up to @max records, waiting up to @timeout_ms for the first. Returns
 * the number read (0 on timeout) or -1 with errno.
 */
static inline int read_records(int port, struct gpuar_record *r, size_t max,
			       int timeout_ms)
{
	ssize_t n;
	int ready = fd_readable(port, timeout_ms);

	if (ready <= 0)
		return ready;
	n = read(port, r, max * sizeof(*r));
	if (n < 0)
		return -1;
	if (n % sizeof(*r)) {
		errno = EPROTO;	/* the module broke "whole records only" */
		return -1;
	}
	return (int)(n / sizeof(*r));
}

/*
 * Collect exactly @want records within @timeout_ms in total. Returns the
 * number collected; stops early on an error.
 */
static inline int collect_records(int port, struct gpuar_record *r,
				  size_t want, int timeout_ms)
{
	__u64 end = mono_ns() + (__u64)timeout_ms * 1000000ULL;
	size_t got = 0;

	while (got < want) {
		__u64 now = mono_ns();
		int n;

		if (now >= end)
			break;
		n = read_records(port, r + got, want - got,
				 (int)((end - now) / 1000000ULL) + 1);
		if (n < 0)
			break;
		got += (size_t)n;
	}
	return (int)got;
}

/* The record carrying @user_data among @n records, or NULL. */
static inline const struct gpuar_record *
record_find(const struct gpuar_record *r, int n, __u64 user_data)
{
	int i;

	for (i = 0; i < n; i++)
		if (r[i].user_data == user_data)
			return &r[i];
	return NULL;
}

/* Nothing readable on the port for @ms (a non-blocking read says EAGAIN). */
static inline int port_quiet(int port, int ms)
{
	return fd_readable(port, ms) == 0;
}

/* A module parameter from /sys/module/gpuar/parameters, or -1. */
/* Pinned memory of this process (VmPin, kB), or -1. */
static inline long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Write @text to the file at @path (sysfs, tracefs): 0, or -1. */
static inline int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The reference count of module @name (/sys/module/<name>/refcnt), or -1. */
static inline long module_refcnt(const char *name)
{
	char path[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static inline long long t_param(const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/gpuar/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * A counter the port's fdinfo shows by @key ("point_visits",
 * "verify_queued"): not in the ABI's statistics, so read from
 * /proc/self/fdinfo. -1 when the key is missing.
 */
static inline long long t_fdinfo(int port, const char *key)
{
	char path[64], line[128];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", port);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Write @value to a module parameter; 0, or the errno of the write. */
static inline int t_param_write(const char *name, const char *value)
{
	char path[128];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/module/gpuar/parameters/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	n = write(fd, value, strlen(value));
	if (n < 0)
		err = errno;
	close(fd);
	return err;
}

/* The same for a number. */
static inline int t_param_set(const char *name, long long value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", value);
	return t_param_write(name, buf);
}

#endif /* GPUAR_SELFTEST_PORT_FIXTURE_H */
