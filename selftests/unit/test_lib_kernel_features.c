// SPDX-License-Identifier: MIT
/*
 * The kernel engine against modules with and without the newer features
 * (GPUAR_FEATURE_IMMINENT, GPUAR_FEATURE_WAIT_READY), on the host: this
 * binary defines ioctl(2) itself, so the library's calls on the "device"
 * (/dev/null) and on the port come here. The fake module answers VERSION
 * with the features a test chooses, and the port is a pipe whose other
 * end the test writes records into; every other ioctl goes to the kernel.
 * It checks what the library asks of the module (the create flags, which
 * calls it makes) and what it does with the answers: a module without a
 * feature keeps working, as before.
 */
#include <gpuar/gpuar.h>

#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ULL

static struct {
	uint64_t features;
	uint32_t create_flags;
	int port_rd, port_wr;
	uint64_t line_addr;
	unsigned int claims, wait_readies;
	bool offer_claim;	/* the next CLAIM hands out one wait */
} fake;

static int fake_wait_ready(int fd, const struct gpuar_wait_ready *w)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t now = gpuar_now_ns();
	int ms = w->deadline_ns > now ? (int)((w->deadline_ns - now + MS - 1) / MS) : 0;

	fake.wait_readies++;
	if (poll(&pfd, 1, ms) == 1)
		return 0;
	errno = ETIME;
	return -1;
}

static int fake_claim(const struct gpuar_claim *c)
{
	struct gpuar_claim_entry *e = (void *)(uintptr_t)c->entries;

	fake.claims++;
	if (!fake.offer_claim || !c->count)
		return 0;
	fake.offer_claim = false;
	*e = (struct gpuar_claim_entry){
		.user_data = 7, .addr = fake.line_addr, .target = 1,
		.lease_end_ns = gpuar_now_ns() + 200 * MS, .line = 1, .slot = 0,
	};
	return 1;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int p[2];

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	switch (req) {
	case GPUAR_IOC_VERSION: {
		struct gpuar_version *v = arg;

		v->abi = 1;
		v->record_max = GPUAR_RECORD_VERSION_1;
		v->features = fake.features;
		return 0;
	}
	case GPUAR_IOC_PORT_CREATE:
		fake.create_flags = ((struct gpuar_port_create *)arg)->flags;
		if (pipe2(p, O_CLOEXEC))
			return -1;
		fake.port_rd = p[0];
		fake.port_wr = p[1];
		return p[0];
	case GPUAR_IOC_LINE_REGISTER:
		fake.line_addr = ((struct gpuar_line_register *)arg)->addr;
		((struct gpuar_line_register *)arg)->id = 1;
		return 0;
	case GPUAR_IOC_LINE_UNREGISTER:
		return 0;
	case GPUAR_IOC_PORT_STATS:
		((struct gpuar_port_stats *)arg)->queued = 0;
		return 0;
	case GPUAR_IOC_CLAIM:
		return fake_claim(arg);
	case GPUAR_IOC_WAIT_READY:
		return fake_wait_ready(fd, arg);
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static struct gpuar_port *open_fake(uint64_t features, uint32_t flags,
				    struct gpuar_error *err, int expect)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_KERNEL,
		.flags = flags,
		.device_path = "/dev/null",
	};
	struct gpuar_port *p = NULL;

	memset(&fake, 0, sizeof(fake));
	fake.port_rd = fake.port_wr = -1;
	fake.features = features | GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_FENCE_WAIT;
	ck_assert_int_eq(gpuar_port_open(&p, &o, err), expect);
	if (!expect)
		ck_assert_int_eq(gpuar_port_engine(p), GPUAR_ENGINE_KERNEL);
	return p;
}

static void close_fake(struct gpuar_port *p)
{
	gpuar_port_close(p);
	if (fake.port_wr >= 0)
		close(fake.port_wr);
}

/* The "module" queues a record; a reap with @timeout_ns gets it. */
static void reap_queued(struct gpuar_port *p, uint64_t user_data,
			int64_t timeout_ns)
{
	struct gpuar_record rec = {
		.version = GPUAR_RECORD_VERSION_1, .user_data = user_data,
	};

	ck_assert_int_eq(write(fake.port_wr, &rec, sizeof(rec)), sizeof(rec));
	memset(&rec, 0, sizeof(rec));
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, timeout_ns), 1);
	ck_assert_uint_eq(rec.user_data, user_data);
}

START_TEST(without_imminent_the_port_opens_without_it)
{
	struct gpuar_claim_entry e[1];
	struct gpuar_record rec;
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(0, GPUAR_PORT_IMMINENT, &err, 0);

	ck_assert_uint_eq(err.code, GPUAR_W_FEATURE_FALLBACK);
	ck_assert(!gpuar_port_imminent(p));
	ck_assert_uint_eq(fake.create_flags & GPUAR_PORT_IMMINENT, 0);
	ck_assert_int_eq(gpuar_port_claim(p, e, 1, 0, &err), -EOPNOTSUPP);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
	ck_assert_uint_eq(fake.claims, 0);
	reap_queued(p, 3, 0);
	close_fake(p);
}
END_TEST

START_TEST(without_imminent_a_strict_port_is_refused)
{
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(0, GPUAR_PORT_IMMINENT | GPUAR_PORT_STRICT,
					 &err, -EOPNOTSUPP);

	ck_assert_ptr_null(p);
	ck_assert_uint_eq(err.code, GPUAR_E_FEATURE_UNAVAILABLE);
	/* The port the module made was closed: its pipe has no reader. */
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(write(fake.port_wr, "x", 1), -1);
	ck_assert_int_eq(errno, EPIPE);
	close(fake.port_wr);
}
END_TEST

START_TEST(with_imminent_the_flag_reaches_the_module)
{
	struct gpuar_record rec;
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(GPUAR_FEATURE_IMMINENT,
					 GPUAR_PORT_IMMINENT | GPUAR_PORT_STRICT,
					 &err, 0);

	ck_assert_uint_eq(err.code, GPUAR_OK);
	ck_assert(gpuar_port_imminent(p));
	ck_assert_uint_ne(fake.create_flags & GPUAR_PORT_IMMINENT, 0);
	/* Nothing queued, nothing imminent: one claim, no wait. */
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
	ck_assert_uint_eq(fake.claims, 1);
	/* A queued record is read without a claim. */
	reap_queued(p, 4, 0);
	ck_assert_uint_eq(fake.claims, 1);
	close_fake(p);
}
END_TEST

/*
 * A claimed wait: gpuar_port_process() watches the claimed word in this
 * thread until the store, and counts the record the module will find.
 */
START_TEST(a_claimed_word_is_watched_until_the_store)
{
	struct gpuar_soft_producer *prod;
	struct gpuar_line *line;
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(GPUAR_FEATURE_IMMINENT,
					 GPUAR_PORT_IMMINENT, &err, 0);
	uint64_t t0;

	ck_assert_int_eq(gpuar_line_alloc(p, &line), 0);
	ck_assert_uint_eq(fake.line_addr, (uint64_t)(uintptr_t)gpuar_line_words(line));
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_soft_store_after(prod, gpuar_line_words(line), 1,
						20 * MS), 0);
	fake.offer_claim = true;
	t0 = gpuar_now_ns();
	ck_assert_int_eq(gpuar_port_process(p), 1);
	ck_assert_uint_ge(gpuar_now_ns() - t0, 19 * MS);
	ck_assert_uint_eq(gpuar_line_words(line)[0], 1);
	ck_assert_uint_eq(fake.claims, 1);
	gpuar_soft_producer_free(prod);
	close_fake(p);
}
END_TEST

/* A lease that runs out: the watch ends, nothing counted. */
START_TEST(a_lease_that_runs_out_ends_the_watch)
{
	struct gpuar_claim_entry e[1];
	struct gpuar_line *line;
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(GPUAR_FEATURE_IMMINENT,
					 GPUAR_PORT_IMMINENT, &err, 0);
	uint64_t t0;

	ck_assert_int_eq(gpuar_line_alloc(p, &line), 0);
	fake.offer_claim = true;
	t0 = gpuar_now_ns();
	ck_assert_int_eq(gpuar_port_process(p), 0);
	/* The fake's lease is 200 ms. */
	ck_assert_uint_ge(gpuar_now_ns() - t0, 190 * MS);
	/* The caller's own claim gets what the module hands out. */
	fake.offer_claim = true;
	ck_assert_int_eq(gpuar_port_claim(p, e, 1, 0, &err), 1);
	ck_assert_uint_eq(e[0].user_data, 7);
	close_fake(p);
}
END_TEST

START_TEST(finite_reaps_use_wait_ready_where_the_module_has_it)
{
	struct gpuar_record rec;
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(GPUAR_FEATURE_WAIT_READY, 0, &err, 0);

	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 5 * MS), -ETIME);
	ck_assert_uint_ge(fake.wait_readies, 1);
	reap_queued(p, 5, 1000 * MS);
	close_fake(p);

	/* A module without it: poll, as before. */
	p = open_fake(0, 0, &err, 0);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 5 * MS), -ETIME);
	reap_queued(p, 6, 1000 * MS);
	ck_assert_uint_eq(fake.wait_readies, 0);
	close_fake(p);
}
END_TEST

/* The "module" queues a record 20 ms from now, from another thread. */
static void *queue_later(void *arg)
{
	struct gpuar_record rec = {
		.version = GPUAR_RECORD_VERSION_1, .user_data = 8,
	};
	struct timespec ts = { .tv_nsec = 20 * MS };

	(void)arg;
	nanosleep(&ts, NULL);
	ck_assert_int_eq(write(fake.port_wr, &rec, sizeof(rec)), sizeof(rec));
	return NULL;
}

/* No timeout: the module's blocking read(), not WAIT_READY. */
START_TEST(an_infinite_reap_blocks_in_read)
{
	struct gpuar_record rec;
	struct gpuar_error err;
	struct gpuar_port *p = open_fake(GPUAR_FEATURE_WAIT_READY, 0, &err, 0);
	uint64_t t0 = gpuar_now_ns();
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, queue_later, NULL), 0);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, -1), 1);
	ck_assert_uint_eq(rec.user_data, 8);
	ck_assert_uint_ge(gpuar_now_ns() - t0, 19 * MS);
	ck_assert_uint_eq(fake.wait_readies, 0);
	pthread_join(t, NULL);
	close_fake(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_kernel_features");
	TCase *t = tcase_create("features");
	struct unit_skips skips = { 0 };

	tcase_set_timeout(t, 30);
	tcase_add_test(t, without_imminent_the_port_opens_without_it);
	tcase_add_test(t, without_imminent_a_strict_port_is_refused);
	tcase_add_test(t, with_imminent_the_flag_reaches_the_module);
	tcase_add_test(t, a_claimed_word_is_watched_until_the_store);
	tcase_add_test(t, a_lease_that_runs_out_ends_the_watch);
	tcase_add_test(t, finite_reaps_use_wait_ready_where_the_module_has_it);
	tcase_add_test(t, an_infinite_reap_blocks_in_read);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
