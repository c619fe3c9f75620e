// SPDX-License-Identifier: MIT
/*
 * What a newcomer leaves out: a port opened with NULL options, one word
 * wait by line and slot (gpuar_port_await_word), and a NULL plan meaning
 * the default plan for it and for the blocking wait driver.
 */
#include <gpuar/gpuar.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "unit.h"

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct late_store {
	uint64_t *word;
	uint64_t value;
	unsigned int after_ms;
};

static void *store_later(void *arg)
{
	struct late_store *ls = arg;

	sleep_ms(ls->after_ms);
	__atomic_store_n(ls->word, ls->value, __ATOMIC_RELEASE);
	return NULL;
}

static struct gpuar_port *open_user_port(void)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *port;

	ck_assert_int_eq(gpuar_port_open(&port, &o, NULL), 0);
	return port;
}

START_TEST(null_options_open_a_port)
{
	struct gpuar_error err;
	struct gpuar_port *port;

	ck_assert_int_eq(gpuar_port_open(&port, NULL, &err), 0);
	/* the kernel's where the module is, else a warned fallback */
	ck_assert(err.code == GPUAR_OK || gpuar_code_is_warning(err.code));
	ck_assert_int_ne(gpuar_port_engine(port), GPUAR_ENGINE_AUTO);
	ck_assert_int_ge(gpuar_port_fd(port), 0);
	gpuar_port_close(port);
}
END_TEST

START_TEST(await_word_completes_under_the_default_plan)
{
	struct gpuar_port *port = open_user_port();
	struct gpuar_point_stats ps = { 0 };
	struct gpuar_record rec;
	struct gpuar_line *line;
	struct late_store ls;
	pthread_t t;
	uint64_t point;

	ck_assert_int_eq(gpuar_line_alloc(port, &line), 0);
	point = GPUAR_POINT_OF_SLOT(gpuar_line_id(line), 3);
	ps.point = point;
	ck_assert_int_eq(gpuar_point_stats(port, &ps), -ENOENT);
	ck_assert_int_eq(gpuar_port_await_word(port, line, 3, 1, 42, NULL), 0);
	ls = (struct late_store){ &gpuar_line_words(line)[3], 1, 10 };
	ck_assert_int_eq(pthread_create(&t, NULL, store_later, &ls), 0);
	ck_assert_int_eq(gpuar_port_reap(port, &rec, 1, 5000000000LL), 1);
	pthread_join(t, NULL);
	ck_assert_uint_eq(rec.user_data, 42);
	ck_assert_int_eq(rec.status, 0);
	ck_assert_uint_eq(rec.value, 1);
	ck_assert_uint_eq(rec.source, GPUAR_SOURCE_WORD);
	/* the wait ran at its slot's point, which now has statistics */
	ck_assert_uint_eq(rec.point, point);
	ck_assert_uint_eq(point >> 63, 1);
	ck_assert_int_eq(gpuar_point_stats(port, &ps), 0);
	gpuar_port_close(port);
}
END_TEST

START_TEST(await_word_submits_the_plan_it_is_given)
{
	struct gpuar_port *port = open_user_port();
	struct gpuar_plan plan;
	struct gpuar_record rec;
	struct gpuar_line *line;

	ck_assert_int_eq(gpuar_line_alloc(port, &line), 0);
	/* a port refuses a block plan: the plan given is the one submitted */
	ck_assert_int_eq(gpuar_plan_from_text("block", &plan, NULL), 0);
	ck_assert_int_eq(gpuar_port_await_word(port, line, 0, 1, 1, &plan),
			 -EINVAL);
	ck_assert_int_eq(gpuar_plan_from_text("poll", &plan, NULL), 0);
	__atomic_store_n(&gpuar_line_words(line)[0], 5, __ATOMIC_RELEASE);
	ck_assert_int_eq(gpuar_port_await_word(port, line, 0, 5, 2, &plan), 0);
	ck_assert_int_eq(gpuar_port_reap(port, &rec, 1, 5000000000LL), 1);
	ck_assert_uint_eq(rec.user_data, 2);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_IMMEDIATE);
	/* refusals */
	ck_assert_int_eq(gpuar_port_await_word(port, line, 8, 1, 3, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_port_await_word(NULL, line, 0, 1, 3, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_port_await_word(port, NULL, 0, 1, 3, NULL), -EINVAL);
	gpuar_port_close(port);
}
END_TEST

START_TEST(blocking_wait_takes_the_default_plan)
{
	struct gpuar_word_source ws;
	struct gpuar_waiter *w;
	struct gpuar_record rec;
	struct gpuar_error err;
	struct late_store ls;
	uint64_t word = 0;
	pthread_t t;

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	ls = (struct late_store){ &word, 1, 10 };
	ck_assert_int_eq(pthread_create(&t, NULL, store_later, &ls), 0);
	ck_assert_msg(gpuar_wait_blocking(w, gpuar_word_source_init(&ws, &word, 1),
					  NULL, 7, 9, &rec, &err) == 0, "%s",
		      err.message);
	pthread_join(t, NULL);
	ck_assert_uint_eq(rec.user_data, 9);
	ck_assert_uint_eq(rec.point, 7);
	ck_assert_int_eq(rec.status, 0);
	ck_assert(rec.outcome == GPUAR_OUTCOME_EXACT ||
		  rec.outcome == GPUAR_OUTCOME_LATE);
	gpuar_waiter_free(w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_defaults");
	TCase *tc = tcase_create("defaults");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, null_options_open_a_port);
	tcase_add_test(tc, await_word_completes_under_the_default_plan);
	tcase_add_test(tc, await_word_submits_the_plan_it_is_given);
	tcase_add_test(tc, blocking_wait_takes_the_default_plan);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
