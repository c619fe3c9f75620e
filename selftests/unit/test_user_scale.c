// SPDX-License-Identifier: MIT
/*
 * The user engine's cost per run does not grow with the number of waits
 * pending: a run looks at the waits that are due (a heap by next check),
 * not at every pending one. Measured as the thread CPU time of
 * gpuar_port_process() with few and with many waits pending that are not
 * due, compared as a ratio, so the machine's speed (or a sanitizer's
 * slowdown) cancels out.
 */
#include <gpuar/gpuar.h>

#include "unit.h"

#include <check.h>
#include <stdlib.h>
#include <time.h>

#define MANY 20000
#define RUNS 2000
#define MS 1000000ULL

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * CPU per gpuar_port_process() with @pending flag waits asleep on their
 * point's prediction (900 ms, from a resubmission that completed at once
 * 900 ms after its start), and one poll wait due every 50 us, so every
 * run has a check to make and a timer to re-arm, and none of the
 * sleeping waits is due while it is measured (even under a sanitizer).
 */
static uint64_t cpu_per_run(uint32_t pending)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.max_waits = MANY + 16,
	};
	struct gpuar_word_wait *w = calloc(pending + 2, sizeof(*w));
	struct gpuar_port *p;
	struct gpuar_line *l;
	uint64_t t0, spent;
	uint32_t i;

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(gpuar_port_open(&p, &o, NULL), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[1] = 1;
	for (i = 0; i < pending + 2; i++) {
		w[i].line = gpuar_line_id(l);
		w[i].user_data = i;
		w[i].point = 1;
		w[i].target = 2;
		ck_assert_int_eq(gpuar_plan_from_text(i ? "flag:park_us=10000,backstop_us=1000000"
						      "+predict:margin_us=0,min_sleep_us=1,"
						      "max_sleep_us=1000000,window=1" : "poll",
						      &w[i].plan, NULL), 0);
	}
	/* The seed: done at submission, 900 ms after its start. */
	w[1].slot = 1;
	w[1].target = 1;
	w[1].start_ns = gpuar_now_ns() - 900 * MS;
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w[1], 1, NULL), 1);
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w[2], pending, NULL),
			 (int)pending);
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w[0], 1, NULL), 1);
	t0 = thread_cpu_ns();
	for (i = 0; i < RUNS; i++)
		ck_assert_int_ge(gpuar_port_process(p), 0);
	spent = thread_cpu_ns() - t0;
	gpuar_port_close(p);
	free(w);
	return spent / RUNS;
}

START_TEST(run_cost_does_not_grow_with_pending_waits)
{
	uint64_t few, many;

	cpu_per_run(10);	/* warm the caches and the allocator */
	few = cpu_per_run(10);
	many = cpu_per_run(MANY);
	/* Scanning 20000 waits a run costs 100x and more; a heap, ~1x. */
	ck_assert_msg(many < 4 * few + 2000,
		      "%llu ns a run with %d pending, %llu ns with 10",
		      (unsigned long long)many, MANY, (unsigned long long)few);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("user_scale");
	TCase *t = tcase_create("scale");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, run_cost_does_not_grow_with_pending_waits);
	suite_add_tcase(s, t);
	return unit_run(s);
}
