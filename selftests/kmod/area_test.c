// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The area (GPUAR_PORT_AREA): records in a ring shared with userspace.
 *
 *   GPUAR_IOC_VERSION ....................... GPUAR_FEATURE_AREA
 *   create: ring_entries without the flag ... EINVAL; 0 the default
 *           (max_waits rounded up, capped); rounded up to a power of two;
 *           below GPUAR_AREA_RING_MIN or above GPUAR_AREA_RING_MAX EINVAL
 *   mmap: private, past bytes, offset != 0 .. EINVAL; a port without the
 *         area ENODEV; the header's fields as the header says
 *   immediate waits ......................... their records in the ring in
 *                                             order, tail advanced, no read()
 *   a consumer's swap of head ............... takes the record; the wait
 *                                             limit frees up
 *   a full ring ............................. OVERFLOW, the queue; read()
 *                                             gives the ring's records then
 *                                             the queue's, in order, refills
 *                                             the ring, clears OVERFLOW
 *   poll, blocking read, WAIT_READY,
 *   an io_uring read ........................ a ring record is ready
 *   cancel of a wait whose record is in the
 *   ring .................................... EALREADY, ENOENT once taken
 *   scribbling over every field ............. the module keeps working;
 *                                             records go to the queue while
 *                                             head is garbage, read() has them
 *   a forked child, munmap/close orders,
 *   two consuming threads, a fence's callback
 */
#include <pthread.h>
#include <sched.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "port_fixture.h"
#include "testfence_fixture.h"
#include "uring_probe.h"

#define RECORD_TIMEOUT_MS 5000

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* A port with the area (@entries asked), or -1 with errno. */
static int area_port_open(__u32 flags, __u32 entries)
{
	struct gpuar_port_create c;
	int dev = t_dev_open();
	int port, err;

	if (dev < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = GPUAR_PORT_CLOEXEC | flags;
	c.ring_entries = entries;
	port = ioctl(dev, GPUAR_IOC_PORT_CREATE, &c);
	err = errno;
	close(dev);
	errno = err;
	return port;
}

/* Map the whole area as the header says: its first page, then bytes. */
static struct gpuar_area *area_map(int port)
{
	struct gpuar_area *a;
	__u32 bytes;

	a = mmap(NULL, (size_t)page_size(), PROT_READ, MAP_SHARED, port, 0);
	if (a == MAP_FAILED)
		return NULL;
	bytes = a->bytes;
	munmap(a, (size_t)page_size());
	a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, port, 0);
	return a == MAP_FAILED ? NULL : a;
}

static void area_unmap(struct gpuar_area *a)
{
	munmap(a, a->bytes);
}

static struct gpuar_record *area_ring(struct gpuar_area *a)
{
	return (struct gpuar_record *)((char *)a + a->ring_off);
}

static __u32 load_acq(const __u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * The consumer's loop of the header: take up to @max records by the swap
 * of head, copying each out first. Returns how many were taken.
 */
static int area_reap(struct gpuar_area *a, struct gpuar_record *out, int max)
{
	struct gpuar_record *ring = area_ring(a);
	__u32 h = __atomic_load_n(&a->head, __ATOMIC_RELAXED);
	int n = 0;

	while (n < max && h != load_acq(&a->tail)) {
		struct gpuar_record rec = ring[h & a->ring_mask];

		if (__atomic_compare_exchange_n(&a->head, &h, h + 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			out[n++] = rec;
			h++;
		}
	}
	return n;
}

FIXTURE(area)
{
	int port;
	struct gpuar_area *a;
	__u64 *lines;
	__u32 line;
};

FIXTURE_SETUP(area)
{
	self->port = area_port_open(GPUAR_PORT_AREA, 8);
	ASSERT_LE(0, self->port) {
		TH_LOG("port with the area: %s", strerror(errno));
	}
	self->a = area_map(self->port);
	ASSERT_NE(NULL, self->a);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line));
	/* Slot 0 is done from the start: waits on it end at submit. */
	self->lines[0] = 1;
}

FIXTURE_TEARDOWN(area)
{
	if (self->a)
		area_unmap(self->a);
	close(self->port);
	lines_unmap(self->lines, 1);
}

/* @n waits on the done slot, user data @first .. @first + n - 1. */
static int submit_done(int port, __u32 line, __u64 first, unsigned int n)
{
	struct gpuar_word_wait w[64];
	unsigned int i;

	if (n > 64)
		return -1;
	for (i = 0; i < n; i++)
		w[i] = word_wait(line, 0, 1, 1, first + i, plan_poll());
	return submit_words(port, w, n, NULL);
}

/*
 * A read of up to @max records that never blocks (RWF_NOWAIT, as io_uring
 * reads): the count, or -1 with errno.
 */
static int nb_read(int port, struct gpuar_record *r, int max)
{
	struct iovec iov = { r, (size_t)max * sizeof(*r) };
	ssize_t n = preadv2(port, &iov, 1, -1, RWF_NOWAIT);

	return n < 0 ? -1 : (int)(n / (ssize_t)sizeof(*r));
}

TEST(feature_bit)
{
	EXPECT_TRUE(t_features() & GPUAR_FEATURE_AREA);
}

TEST(create_ring_entries)
{
	static const struct { __u32 ask, want; } ok[] = {
		{ 8, 8 }, { 9, 16 }, { 100, 128 }, { 65535, 65536 },
		{ 65536, 65536 },
	};
	static const __u32 bad[] = { 1, 7, 65537, 0x80000000u, 0xffffffffu };
	long long max = t_param("max_waits");
	unsigned int i;
	__u32 dflt;
	int port;

	/* Without the flag, ring_entries is the old pad: 0 or EINVAL. */
	EXPECT_EQ(-1, area_port_open(0, 8));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct gpuar_area *a;

		port = area_port_open(GPUAR_PORT_AREA, ok[i].ask);
		ASSERT_LE(0, port);
		a = area_map(port);
		ASSERT_NE(NULL, a);
		EXPECT_EQ(ok[i].want, a->ring_entries);
		EXPECT_EQ(ok[i].want - 1, a->ring_mask);
		EXPECT_EQ(GPUAR_AREA_MAGIC, a->magic);
		EXPECT_EQ(GPUAR_AREA_SIZE_VER1, a->size);
		EXPECT_EQ(sizeof(struct gpuar_record), a->record_size);
		EXPECT_LE(sizeof(struct gpuar_area), a->ring_off);
		EXPECT_EQ(0u, a->ring_off % 64);
		EXPECT_LE((__u64)a->ring_off +
			  (__u64)a->ring_entries * a->record_size, a->bytes);
		EXPECT_EQ(0u, a->bytes % page_size());
		EXPECT_EQ(0u, a->tail);
		EXPECT_EQ(0u, a->head);
		EXPECT_EQ(0u, a->flags);
		EXPECT_EQ((long long)ok[i].want, t_fdinfo(port, "area_ring_entries"));
		area_unmap(a);
		close(port);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-1, area_port_open(GPUAR_PORT_AREA, bad[i]));
		EXPECT_EQ(EINVAL, errno) {
			TH_LOG("ring_entries %u", bad[i]);
		}
	}
	/* 0: max_waits rounded up, between the bounds. */
	ASSERT_LT(0, max);
	dflt = 8;
	while (dflt < max && dflt < GPUAR_AREA_RING_MAX)
		dflt <<= 1;
	port = area_port_open(GPUAR_PORT_AREA, 0);
	ASSERT_LE(0, port);
	EXPECT_EQ((long long)dflt, t_fdinfo(port, "area_ring_entries"));
	close(port);
	/* A port without the area shows none. */
	port = area_port_open(0, 0);
	ASSERT_LE(0, port);
	EXPECT_EQ(-1, t_fdinfo(port, "area_ring_entries"));
	close(port);
}

TEST(mmap_rules)
{
	int port = area_port_open(GPUAR_PORT_AREA, 8);
	int plain = area_port_open(0, 0);
	struct gpuar_area *a;
	size_t bytes;
	void *m;

	ASSERT_LE(0, port);
	ASSERT_LE(0, plain);
	a = area_map(port);
	ASSERT_NE(NULL, a);
	bytes = a->bytes;
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, port, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, port, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, bytes + page_size(), PROT_READ, MAP_SHARED, port, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, port, page_size());
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, plain, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENODEV, errno);
	/* No growing it past what was checked. */
	m = mremap(a, bytes, bytes + page_size(), 0);
	EXPECT_EQ(MAP_FAILED, m);
	area_unmap(a);
	close(plain);
	close(port);
}

TEST_F(area, immediate_records_in_ring_in_order)
{
	struct gpuar_record *ring = area_ring(self->a);
	struct gpuar_port_stats st;
	unsigned int i;

	ASSERT_EQ(5, submit_done(self->port, self->line, 100, 5));
	EXPECT_EQ(5u, load_acq(&self->a->tail));
	EXPECT_EQ(0u, self->a->head);
	EXPECT_EQ(0u, self->a->flags);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(100 + i, ring[i].user_data);
		EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, ring[i].outcome);
		EXPECT_EQ(GPUAR_RECORD_VERSION_1, ring[i].version);
		EXPECT_EQ(GPUAR_SOURCE_WORD, ring[i].source);
	}
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(5u, st.queued);
	EXPECT_EQ(0u, st.pending);
	EXPECT_EQ(5, t_fdinfo(self->port, "area_tail"));
	EXPECT_EQ(0, t_fdinfo(self->port, "area_head"));
	EXPECT_EQ(0, t_fdinfo(self->port, "area_overflows"));
}

TEST_F(area, swap_takes_records_and_frees_the_limit)
{
	long long old = t_param("max_waits");
	struct gpuar_record r[8];
	int ret;

	ASSERT_LT(0, old);
	ASSERT_EQ(0, t_param_set("max_waits", 6));
	ret = submit_done(self->port, self->line, 1, 6);
	EXPECT_EQ(6, ret);
	/* Six records unread in the ring: the limit is reached. */
	EXPECT_EQ(-1, submit_done(self->port, self->line, 7, 1));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(4, area_reap(self->a, r, 4));
	EXPECT_EQ(1u, r[0].user_data);
	EXPECT_EQ(4u, r[3].user_data);
	EXPECT_EQ(4u, self->a->head);
	EXPECT_EQ(4, submit_done(self->port, self->line, 7, 4));
	EXPECT_EQ(-1, submit_done(self->port, self->line, 11, 1));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(6, area_reap(self->a, r, 8));
	EXPECT_EQ(5u, r[0].user_data);
	EXPECT_EQ(10u, r[5].user_data);
	EXPECT_TRUE(port_quiet(self->port, 0));
	t_param_set("max_waits", old);
}

/* Read everything readable now (non-blocking) into @r; the count. */
static int read_all(int port, struct gpuar_record *r, int max)
{
	int got = 0;

	while (got < max) {
		int n = nb_read(port, r + got, max - got);

		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

TEST_F(area, overflow_then_read_in_order)
{
	struct gpuar_record r[32];
	int i, n;

	ASSERT_EQ(20, submit_done(self->port, self->line, 0, 20));
	EXPECT_EQ(8u, load_acq(&self->a->tail));
	EXPECT_TRUE(load_acq(&self->a->flags) & GPUAR_AREA_OVERFLOW);
	EXPECT_EQ(12, t_fdinfo(self->port, "area_overflows"));
	EXPECT_EQ(1, t_fdinfo(self->port, "area_overflow"));
	/* A short read: the ring's four oldest; four refill the ring. */
	n = nb_read(self->port, r, 4);
	ASSERT_EQ(4, n);
	for (i = 0; i < 4; i++)
		EXPECT_EQ((__u64)i, r[i].user_data);
	EXPECT_EQ(12u, load_acq(&self->a->tail));
	EXPECT_EQ(4u, self->a->head);
	EXPECT_TRUE(load_acq(&self->a->flags) & GPUAR_AREA_OVERFLOW);
	/* The ring's next eight by swap, then read() for the queue's. */
	EXPECT_EQ(8, area_reap(self->a, r, 32));
	for (i = 0; i < 8; i++)
		EXPECT_EQ((__u64)(4 + i), r[i].user_data);
	n = read_all(self->port, r, 32);
	ASSERT_EQ(8, n);
	for (i = 0; i < 8; i++)
		EXPECT_EQ((__u64)(12 + i), r[i].user_data);
	EXPECT_EQ(0u, load_acq(&self->a->flags) & GPUAR_AREA_OVERFLOW);
	EXPECT_EQ(load_acq(&self->a->tail), self->a->head);
	EXPECT_TRUE(port_quiet(self->port, 0));
	/* Once the queue is empty, records take the ring again. */
	ASSERT_EQ(3, submit_done(self->port, self->line, 50, 3));
	EXPECT_EQ(0u, load_acq(&self->a->flags));
	EXPECT_EQ(3, area_reap(self->a, r, 32));
	EXPECT_EQ(50u, r[0].user_data);
}

TEST_F(area, one_read_takes_ring_then_queue)
{
	struct gpuar_record r[32];
	int i;

	ASSERT_EQ(20, submit_done(self->port, self->line, 0, 20));
	ASSERT_EQ(20, nb_read(self->port, r, 32));
	for (i = 0; i < 20; i++)
		EXPECT_EQ((__u64)i, r[i].user_data);
	EXPECT_EQ(0u, load_acq(&self->a->flags));
	EXPECT_TRUE(port_quiet(self->port, 0));
}

TEST_F(area, poll_sees_ring_records)
{
	struct gpuar_record r;

	EXPECT_TRUE(port_quiet(self->port, 0));
	ASSERT_EQ(1, submit_done(self->port, self->line, 1, 1));
	EXPECT_EQ(1, fd_readable(self->port, 0));
	EXPECT_EQ(1, area_reap(self->a, &r, 1));
	EXPECT_TRUE(port_quiet(self->port, 0));
}

struct storer {
	__u64 *word;
	unsigned int ms;
};

static void *store_later(void *arg)
{
	struct storer *s = arg;

	sleep_ms(s->ms);
	word_store(s->word, 1);
	return NULL;
}

TEST_F(area, blocking_read_wakes_for_ring_record)
{
	struct storer s = { .word = &self->lines[1], .ms = 50 };
	struct gpuar_record r;
	pthread_t t;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 1, 1, 1, 9,
						       plan_poll())));
	ASSERT_EQ(0, pthread_create(&t, NULL, store_later, &s));
	ASSERT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	pthread_join(t, NULL);
	EXPECT_EQ(9u, r.user_data);
	EXPECT_EQ(self->a->tail, self->a->head);
}

TEST_F(area, wait_ready_wakes_for_ring_record)
{
	struct storer s = { .word = &self->lines[1], .ms = 50 };
	struct gpuar_wait_ready wr;
	struct gpuar_record r;
	pthread_t t;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 1, 1, 1, 9,
						       plan_poll())));
	memset(&wr, 0, sizeof(wr));
	wr.size = sizeof(wr);
	wr.deadline_ns = mono_ns() + 5000000000ULL;
	ASSERT_EQ(0, pthread_create(&t, NULL, store_later, &s));
	EXPECT_EQ(0, ioctl(self->port, GPUAR_IOC_WAIT_READY, &wr));
	pthread_join(t, NULL);
	EXPECT_EQ(1u, load_acq(&self->a->tail));
	/* Ready and nothing taken: it answers at once. */
	wr.deadline_ns = 0;
	EXPECT_EQ(0, ioctl(self->port, GPUAR_IOC_WAIT_READY, &wr));
	EXPECT_EQ(1, area_reap(self->a, &r, 1));
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_WAIT_READY, &wr));
	EXPECT_EQ(ETIME, errno);
}

TEST_F(area, io_uring_read_takes_ring_record)
{
	struct storer s = { .word = &self->lines[1], .ms = 50 };
	struct gpuar_record r[2];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	pthread_t t;

	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 1, 1, 1, 12,
						       plan_poll())));
	sqe = io_uring_get_sqe(&ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_read(sqe, self->port, r, sizeof(r), 0);
	ASSERT_EQ(1, io_uring_submit(&ring));
	/* Parked on poll: nothing in the ring or the queue yet. */
	EXPECT_EQ(NULL, cqe_within(&ring, 20));
	ASSERT_EQ(0, pthread_create(&t, NULL, store_later, &s));
	cqe = cqe_within(&ring, RECORD_TIMEOUT_MS);
	pthread_join(t, NULL);
	ASSERT_NE(NULL, cqe);
	EXPECT_EQ((int)sizeof(r[0]), cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	EXPECT_EQ(12u, r[0].user_data);
	/* Taken from the ring, by the swap of head. */
	EXPECT_EQ(1u, load_acq(&self->a->tail));
	EXPECT_EQ(1u, self->a->head);
	io_uring_queue_exit(&ring);
}

TEST_F(area, cancel_ealready_for_ring_record)
{
	struct gpuar_record r;

	ASSERT_EQ(1, submit_done(self->port, self->line, 77, 1));
	EXPECT_EQ(-1, port_cancel(self->port, 77));
	EXPECT_EQ(EALREADY, errno);
	EXPECT_EQ(-1, port_cancel(self->port, 78));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(1, area_reap(self->a, &r, 1));
	EXPECT_EQ(-1, port_cancel(self->port, 77));
	EXPECT_EQ(ENOENT, errno);
	/* A cancellation's record in the ring is no completion's. */
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 1, 1, 1, 79,
						       plan_poll())));
	EXPECT_EQ(1, port_cancel(self->port, 79));
	EXPECT_EQ(1u, load_acq(&self->a->tail) - self->a->head);
	EXPECT_EQ(-1, port_cancel(self->port, 79));
	EXPECT_EQ(ENOENT, errno);
}

/*
 * Head out of range: records go to the queue and read() has every one;
 * poll says so; a sane head again, the ring is used again.
 */
static void scribbled_head_keeps_working(struct __test_metadata *_metadata,
					 FIXTURE_DATA(area) *self, __u32 head)
{
	struct gpuar_record r[16];
	__u32 tail = load_acq(&self->a->tail);
	int i;

	self->a->head = head;
	EXPECT_TRUE(port_quiet(self->port, 0));
	ASSERT_EQ(10, submit_done(self->port, self->line, 1000, 10));
	EXPECT_EQ(tail, load_acq(&self->a->tail));
	EXPECT_TRUE(load_acq(&self->a->flags) & GPUAR_AREA_OVERFLOW);
	EXPECT_EQ(1, fd_readable(self->port, 0));
	ASSERT_EQ(10, read_all(self->port, r, 16));
	for (i = 0; i < 10; i++)
		EXPECT_EQ((__u64)(1000 + i), r[i].user_data);
	EXPECT_TRUE(port_quiet(self->port, 0));
	/* The wait limit counts a garbage head as a full ring, no more. */
	self->a->head = tail;
	ASSERT_EQ(1, submit_done(self->port, self->line, 2000, 1));
	EXPECT_EQ(tail + 1, load_acq(&self->a->tail));
	ASSERT_EQ(1, read_all(self->port, r, 16));
	EXPECT_EQ(2000u, r[0].user_data);
	EXPECT_EQ(0u, load_acq(&self->a->flags));
}

TEST_F(area, scribbled_head)
{
	struct gpuar_record r[8];
	unsigned int i;

	ASSERT_EQ(3, submit_done(self->port, self->line, 1, 3));
	ASSERT_EQ(3, area_reap(self->a, r, 8));
	scribbled_head_keeps_working(_metadata, self, self->a->tail + 5);
	scribbled_head_keeps_working(_metadata, self, self->a->tail - 1000);
	scribbled_head_keeps_working(_metadata, self, self->a->tail - 9);
	srand(42);
	for (i = 0; i < 8; i++) {
		__u32 h = (__u32)rand() * 2654435761u;

		if (self->a->tail - h <= self->a->ring_entries)
			continue;
		scribbled_head_keeps_working(_metadata, self, h);
	}
}

TEST_F(area, scribbled_fields_ignored)
{
	struct gpuar_record *ring = area_ring(self->a);
	struct gpuar_record r[8];
	__u32 *w = (__u32 *)self->a;
	unsigned int i, k;

	srand(7);
	for (k = 0; k < 4; k++) {
		__u32 tail = (__u32)t_fdinfo(self->port, "area_tail");

		/* Every word but head, and every ring byte, garbage. */
		for (i = 0; i < sizeof(*self->a) / 4; i++)
			if (&w[i] != &self->a->head)
				w[i] = (__u32)rand();
		memset(ring, rand() & 0xff, 8 * sizeof(*ring));
		ASSERT_EQ(3, submit_done(self->port, self->line, 10 * k, 3));
		EXPECT_EQ(tail + 3, load_acq(&self->a->tail));
		EXPECT_EQ(tail + 3, (__u32)t_fdinfo(self->port, "area_tail"));
		ASSERT_EQ(3, read_all(self->port, r, 8));
		for (i = 0; i < 3; i++)
			EXPECT_EQ((__u64)(10 * k + i), r[i].user_data);
	}
	/* The geometry the module uses is its own, not the page's. */
	EXPECT_EQ(8, t_fdinfo(self->port, "area_ring_entries"));
}

TEST_F(area, forked_child_maps_and_reaps)
{
	int status;
	pid_t pid;

	ASSERT_EQ(4, submit_done(self->port, self->line, 40, 4));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct gpuar_area *a = area_map(self->port);
		struct gpuar_record r[8];
		int ok;

		/* The inherited mapping and a new one are the same memory. */
		ok = a && a->ring_entries == 8 &&
		     area_reap(self->a, r, 2) == 2 && r[0].user_data == 40 &&
		     area_reap(a, r, 8) == 2 && r[0].user_data == 42 &&
		     r[1].user_data == 43;
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(4u, self->a->head);
	EXPECT_TRUE(port_quiet(self->port, 0));
}

TEST_F(area, close_then_munmap)
{
	struct gpuar_record r[4];

	ASSERT_EQ(2, submit_done(self->port, self->line, 5, 2));
	ASSERT_EQ(0, close(self->port));
	/* The mapping holds the port: its records are still there. */
	EXPECT_EQ(2, area_reap(self->a, r, 4));
	EXPECT_EQ(5u, r[0].user_data);
	area_unmap(self->a);
	self->a = NULL;
	self->port = -1;
}

TEST_F(area, munmap_then_close)
{
	ASSERT_EQ(2, submit_done(self->port, self->line, 5, 2));
	area_unmap(self->a);
	self->a = NULL;
	/* Records unread in the ring, the queue too: freed at release. */
	ASSERT_EQ(10, submit_done(self->port, self->line, 7, 10));
}

struct consumer {
	int port;
	struct gpuar_area *a;
	unsigned char *seen;	/* per user data: how many times */
	unsigned int total;
	unsigned int *done;	/* shared count of records taken */
	unsigned int dup;
};

static void consumer_count(struct consumer *c, const struct gpuar_record *r,
			   int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (r[i].user_data >= c->total ||
		    __atomic_fetch_add(&c->seen[r[i].user_data], 1,
				       __ATOMIC_RELAXED))
			c->dup++;
	}
	__atomic_fetch_add(c->done, (unsigned int)n, __ATOMIC_RELAXED);
}

static void *consume(void *arg)
{
	struct consumer *c = arg;
	struct gpuar_record r[16];

	while (__atomic_load_n(c->done, __ATOMIC_RELAXED) < c->total) {
		int n = area_reap(c->a, r, 16);

		if (!n && (load_acq(&c->a->flags) & GPUAR_AREA_OVERFLOW)) {
			n = nb_read(c->port, r, 16);
			if (n < 0)
				n = 0;
		}
		consumer_count(c, r, n);
		if (!n)
			sched_yield();
	}
	return NULL;
}

TEST_F(area, two_threads_swap_exactly_once)
{
	const unsigned int total = 20000;
	struct consumer c[2];
	unsigned int done = 0, sent = 0, i;
	unsigned char *seen = calloc(total, 1);
	pthread_t t[2];

	ASSERT_NE(NULL, seen);
	for (i = 0; i < 2; i++) {
		c[i] = (struct consumer){ self->port, self->a, seen, total,
					  &done, 0 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, consume, &c[i]));
	}
	while (sent < total) {
		unsigned int n = total - sent < 13 ? total - sent : 13;
		int ret = submit_done(self->port, self->line, sent, n);

		if (ret < 0 && errno == ENOSPC) {
			sched_yield();
			continue;
		}
		ASSERT_EQ((int)n, ret);
		sent += n;
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0u, c[0].dup + c[1].dup);
	for (i = 0; i < total; i++)
		if (seen[i] != 1) {
			EXPECT_EQ(1, seen[i]) {
				TH_LOG("user data %u seen %u times", i, seen[i]);
			}
			break;
		}
	EXPECT_TRUE(port_quiet(self->port, 0));
	free(seen);
}

TEST_F(area, fence_callback_fills_the_ring)
{
	struct gpuar_record r;
	int timeline, fd;

	fd = testfence_pending(&timeline);
	if (fd < 0)
		SKIP(return, "no test fence module: %s", strerror(errno));
	ASSERT_EQ(1, submit_fence(self->port, fd, 31));
	EXPECT_EQ(0u, load_acq(&self->a->tail));
	ASSERT_EQ(0, testfence_signal(timeline, 1, 0));
	/* Signalled in the ioctl: the callback has run when it returns. */
	EXPECT_EQ(1u, load_acq(&self->a->tail));
	ASSERT_EQ(1, area_reap(self->a, &r, 1));
	EXPECT_EQ(31u, r.user_data);
	EXPECT_EQ(GPUAR_SOURCE_FENCE, r.source);
	EXPECT_EQ(GPUAR_OUTCOME_FENCE, r.outcome);
	EXPECT_EQ(1u, r.value);
	/* Cancel of a fence wait whose record is in the ring: EALREADY. */
	close(fd);
	fd = testfence_fence(timeline, 2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 32));
	ASSERT_EQ(0, testfence_signal(timeline, 2, -EIO));
	EXPECT_EQ(-1, port_cancel(self->port, 32));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_EQ(1, area_reap(self->a, &r, 1));
	EXPECT_EQ(-EIO, r.status);
	close(fd);
	close(timeline);
}

TEST_HARNESS_MAIN
