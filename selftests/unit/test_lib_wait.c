// SPDX-License-Identifier: MIT
/*
 * libgpuar: the wait driver, on the virtual clock (exact to the ns) and
 * with the soft backend in real time (order and outcome only).
 */
#include <gpuar/gpuar.h>

#include "unit_interrupt.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ULL
#define MS 1000000ULL
#define FLAG "flag:park_us=100,backstop_us=1000"
#define FLAG_PREDICT FLAG "+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000,window=8"

static struct gpuar_plan plan_of(const char *text)
{
	struct gpuar_plan plan;

	ck_assert_int_eq(gpuar_plan_from_text(text, &plan, NULL), 0);
	return plan;
}

struct vfix {
	struct gpuar_vclock *vc;
	struct gpuar_waiter *w;
	uint64_t word;
	struct gpuar_word_source ws;
};

static void vfix_init(struct vfix *f, uint64_t poll_ns)
{
	struct gpuar_waiter_options o = { .poll_interval_ns = poll_ns };

	memset(f, 0, sizeof(*f));
	f->vc = gpuar_vclock_new(0);
	ck_assert_ptr_nonnull(f->vc);
	o.clock = gpuar_vclock_clock(f->vc);
	ck_assert_int_eq(gpuar_waiter_new(&f->w, &o, NULL), 0);
}

static void vfix_fini(struct vfix *f)
{
	gpuar_waiter_free(f->w);
	gpuar_vclock_free(f->vc);
}

/* One wait from now for a store of @target at now + @after. */
static struct gpuar_record vwait(struct vfix *f, const char *plan,
				 uint64_t target, uint64_t after)
{
	struct gpuar_plan p = plan_of(plan);
	struct gpuar_record rec;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_vclock_store_at(f->vc, gpuar_vclock_now(f->vc) + after,
					       &f->word, target), 0);
	ck_assert_int_eq(gpuar_wait_blocking(f->w, gpuar_word_source_init(&f->ws, &f->word, target),
				    &p, 1, target, &rec, &err), 0);
	ck_assert_uint_eq(err.code, GPUAR_OK);
	return rec;
}

START_TEST(done_at_first_check_is_immediate)
{
	struct vfix f;
	struct gpuar_record rec;

	vfix_init(&f, 0);
	rec = vwait(&f, FLAG, 1, 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_IMMEDIATE);
	ck_assert_uint_eq(rec.checks, 1);
	ck_assert_uint_eq(rec.value, 1);
	ck_assert_uint_eq(rec.complete_ns, 0);
	vfix_fini(&f);
}
END_TEST

START_TEST(flag_parks_on_the_word_and_is_exact)
{
	struct vfix f;
	struct gpuar_record rec;

	vfix_init(&f, 0);
	rec = vwait(&f, FLAG, 1, 30 * US);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	/* The park wakes at the store: the check sees it at 30 us exactly. */
	ck_assert_uint_eq(rec.complete_ns, 30 * US);
	ck_assert_uint_eq(rec.checks, 2);
	ck_assert_uint_eq(rec.slept_ns, 0);
	vfix_fini(&f);
}
END_TEST

START_TEST(poll_checks_at_its_interval)
{
	struct vfix f;
	struct gpuar_record rec;

	vfix_init(&f, 10 * US);
	rec = vwait(&f, "poll", 1, 35 * US);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.complete_ns, 40 * US);	/* checks at 0,10,..,40 */
	ck_assert_uint_eq(rec.checks, 5);
	vfix_fini(&f);
}
END_TEST

/*
 * Residuals 1.0/0.9/1.1 ms predict their smallest, 0.9 ms; less the
 * 150 us margin, the next wait sleeps 750 us.
 */
START_TEST(predicted_sleep_then_exact_or_late)
{
	struct gpuar_waiter_stats st;
	struct vfix f;
	struct gpuar_record rec;
	uint64_t pred, t0;

	vfix_init(&f, 0);
	ck_assert_uint_eq(vwait(&f, FLAG_PREDICT, 1, 1000 * US).complete_ns, 1000 * US);
	vwait(&f, FLAG_PREDICT, 2, 900 * US);
	vwait(&f, FLAG_PREDICT, 3, 1100 * US);
	ck_assert_int_eq(gpuar_waiter_prediction(f.w, 1, &pred), 0);
	ck_assert_uint_eq(pred, 900 * US);
	/* Sleeps 750 us, finds it pending, parks to the store: exact. */
	t0 = gpuar_vclock_now(f.vc);
	rec = vwait(&f, FLAG_PREDICT, 4, 1000 * US);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.slept_ns, 750 * US);
	ck_assert_uint_eq(rec.complete_ns - t0, 1000 * US);
	/* 0, 750, then parks of at most park_us: 850, 950, 1000 (store). */
	ck_assert_uint_eq(rec.checks, 5);
	/* Done at 500 us: the check after the 750 us sleep finds it: late. */
	t0 = gpuar_vclock_now(f.vc);
	rec = vwait(&f, FLAG_PREDICT, 5, 500 * US);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_LATE);
	ck_assert_uint_eq(rec.complete_ns - t0, 750 * US);
	ck_assert_uint_eq(rec.checks, 2);
	/* Late records min(woke, prediction) / 2 = 375 us. */
	ck_assert_int_eq(gpuar_waiter_prediction(f.w, 1, &pred), 0);
	ck_assert_uint_eq(pred, 375 * US);
	gpuar_waiter_stats(f.w, &st);
	ck_assert_uint_eq(st.waits, 5);
	ck_assert_uint_eq(st.outcomes[GPUAR_OUTCOME_EXACT], 4);
	ck_assert_uint_eq(st.outcomes[GPUAR_OUTCOME_LATE], 1);
	ck_assert_uint_eq(st.sleeps, 4);	/* waits 2-5 had a prediction */
	vfix_fini(&f);
}
END_TEST

/* A source with counters and an injectable error, over a vclock word. */
struct probe_src {
	struct gpuar_src src;
	struct gpuar_word_source ws;
	int arms, statuses, check_error, status_error;
};

static int p_check(void *ctx, uint64_t *v)
{
	struct probe_src *p = ctx;

	if (p->check_error)
		return p->check_error;
	return p->ws.source.ops->check(p->ws.source.ctx, v);
}

static int p_arm(void *ctx)
{
	((struct probe_src *)ctx)->arms++;
	return 0;
}

static int p_park(void *ctx, const struct gpuar_clock *c, uint64_t until)
{
	struct probe_src *p = ctx;

	return p->ws.source.ops->park(p->ws.source.ctx, c, until);
}

static int p_status(void *ctx)
{
	struct probe_src *p = ctx;

	p->statuses++;
	return p->status_error;
}

static const struct gpuar_src_ops probe_ops = {
	.check = p_check, .arm = p_arm, .park = p_park, .status = p_status,
};

static void probe_init(struct probe_src *p, uint64_t *word, uint64_t target)
{
	memset(p, 0, sizeof(*p));
	gpuar_word_source_init(&p->ws, word, target);
	p->src.ops = &probe_ops;
	p->src.ctx = p;
}

START_TEST(flag_arms_once_and_queries_status_every_backstop)
{
	struct gpuar_plan plan = plan_of(FLAG);
	struct probe_src p;
	struct gpuar_record rec;
	struct vfix f;

	vfix_init(&f, 0);
	probe_init(&p, &f.word, 1);
	gpuar_vclock_store_at(f.vc, 3500 * US, &f.word, 1);
	ck_assert_int_eq(gpuar_wait_blocking(f.w, &p.src, &plan, 2, 0, &rec, NULL), 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.complete_ns, 3500 * US);
	ck_assert_int_eq(p.arms, 1);
	ck_assert_int_eq(p.statuses, 3);	/* at 1, 2 and 3 ms */
	vfix_fini(&f);
}
END_TEST

/* backstop_us=0 is the default backstop (1 s), as on a port: not every park. */
START_TEST(flag_backstop_zero_queries_status_at_the_default)
{
	struct gpuar_plan plan = plan_of("flag:park_us=100,backstop_us=0");
	struct probe_src p;
	struct gpuar_record rec;
	struct vfix f;

	vfix_init(&f, 0);
	probe_init(&p, &f.word, 1);
	gpuar_vclock_store_at(f.vc, 2500 * MS, &f.word, 1);
	ck_assert_int_eq(gpuar_wait_blocking(f.w, &p.src, &plan, 2, 0, &rec, NULL), 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.complete_ns, 2500 * MS);
	ck_assert_int_eq(p.statuses, 2);	/* at 1 and 2 s */
	vfix_fini(&f);
}
END_TEST

START_TEST(status_error_ends_the_wait)
{
	struct gpuar_plan plan = plan_of(FLAG);
	struct gpuar_waiter_stats st;
	struct gpuar_error err;
	struct probe_src p;
	struct gpuar_record rec;
	struct vfix f;

	vfix_init(&f, 0);
	probe_init(&p, &f.word, 1);
	p.status_error = -EIO;	/* the device faulted: never stores */
	ck_assert_int_eq(gpuar_wait_blocking(f.w, &p.src, &plan, 2, 0, &rec, &err), -EIO);
	ck_assert_uint_eq(err.code, GPUAR_E_BACKEND);
	ck_assert_int_eq(rec.status, -EIO);
	ck_assert_uint_eq(rec.outcome, 0);
	ck_assert_uint_eq(gpuar_vclock_now(f.vc), 1000 * US);
	gpuar_waiter_stats(f.w, &st);
	ck_assert_uint_eq(st.errors, 1);
	vfix_fini(&f);
}
END_TEST

START_TEST(check_error_ends_the_wait)
{
	struct gpuar_plan plan = plan_of("poll");
	struct gpuar_error err;
	struct probe_src p;
	struct gpuar_record rec;
	struct vfix f;

	vfix_init(&f, 0);
	probe_init(&p, &f.word, 1);
	p.check_error = -ENODEV;
	ck_assert_int_eq(gpuar_wait_blocking(f.w, &p.src, &plan, 2, 0, &rec, &err), -ENODEV);
	ck_assert_uint_eq(err.code, GPUAR_E_BACKEND);
	ck_assert_int_eq(rec.status, -ENODEV);
	vfix_fini(&f);
}
END_TEST

START_TEST(bad_plans_and_arguments_are_refused)
{
	struct gpuar_plan plan = plan_of("block");
	struct gpuar_error err;
	struct gpuar_record rec;
	struct vfix f;

	vfix_init(&f, 0);
	/* block needs the source's blocking wait, which a bare word lacks */
	ck_assert_int_eq(gpuar_wait_blocking(f.w, gpuar_word_source_init(&f.ws, &f.word, 1),
				    &plan, 1, 0, &rec, &err), -EOPNOTSUPP);
	plan = plan_of("poll");
	plan.window = 4;
	ck_assert_int_eq(gpuar_wait_blocking(f.w, &f.ws.source, &plan, 1, 0, &rec, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_PLAN);
	ck_assert_int_eq(gpuar_wait_blocking(f.w, NULL, &plan, 1, 0, &rec, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	vfix_fini(&f);
}
END_TEST

/*
 * A wait whose work never completes (the driver has no timeout: its
 * backstop is a status query) ends with -EINTR once the waiter's
 * interrupt is set from another thread, for a flag and a poll plan.
 */
START_TEST(interrupt_ends_a_wait)
{
	static const char *const plans[] = {
		"flag:park_us=1000,backstop_us=0", "poll",
	};
	struct gpuar_plan plan = plan_of(plans[_i]);
	struct gpuar_interrupt *intr;
	struct gpuar_word_source src;
	struct gpuar_waiter *w;
	struct gpuar_record rec;
	struct gpuar_error err;
	uint64_t word = 0, t0;
	pthread_t th;

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	ck_assert_int_eq(gpuar_interrupt_new(&intr), 0);
	gpuar_waiter_set_interrupt(w, intr);
	t0 = gpuar_now_ns();
	pthread_create(&th, NULL, unit_interrupt_in_30ms, intr);
	ck_assert_int_eq(gpuar_wait_blocking(w, gpuar_word_source_init(&src, &word, 1),
				    &plan, 1, 1, &rec, &err), -EINTR);
	ck_assert_uint_lt(gpuar_now_ns() - t0, 1000000000ULL);
	ck_assert_int_eq(err.sys_errno, EINTR);
	pthread_join(th, NULL);
	gpuar_waiter_free(w);
	gpuar_interrupt_free(intr);
}
END_TEST

/* A wait at point 2 on a word that another thread stores later. */
struct held_wait {
	struct gpuar_waiter *w;
	uint64_t word;
	int ret;
};

static void *held_wait_run(void *arg)
{
	struct held_wait *h = arg;
	struct gpuar_plan plan = plan_of("poll");
	struct gpuar_word_source src;
	struct gpuar_record rec;

	h->ret = gpuar_wait_blocking(h->w, gpuar_word_source_init(&src, &h->word, 1),
			    &plan, 2, 0, &rec, NULL);
	return NULL;
}

/*
 * A full point table gives its least recently taken idle point to a new
 * one, which forgets it (no prediction is left); a point that a wait in
 * progress holds is never given up, so a new point then is -ENOSPC.
 */
START_TEST(idle_point_gives_way_held_one_is_enospc)
{
	struct gpuar_waiter_options o = { .max_points = 1 };
	struct gpuar_plan plan = plan_of("poll");
	struct held_wait h = { .word = 0 };
	struct gpuar_waiter_stats st;
	struct gpuar_word_source ws;
	struct gpuar_record rec;
	uint64_t word = 1;
	pthread_t th;

	ck_assert_int_eq(gpuar_waiter_new(&h.w, &o, NULL), 0);
	gpuar_word_source_init(&ws, &word, 1);
	ck_assert_int_eq(gpuar_wait_blocking(h.w, &ws.source, &plan, 1, 0, &rec, NULL), 0);
	ck_assert_int_eq(gpuar_wait_blocking(h.w, &ws.source, &plan, 2, 0, &rec, NULL), 0);
	ck_assert_int_eq(gpuar_waiter_prediction(h.w, 1, NULL), -ENOENT);
	ck_assert_int_eq(gpuar_waiter_prediction(h.w, 2, NULL), 0);

	/* Point 2 held by a wait in another thread: point 3 finds no room. */
	ck_assert_int_eq(pthread_create(&th, NULL, held_wait_run, &h), 0);
	do {
		usleep(1000);
		gpuar_waiter_stats(h.w, &st);
	} while (st.waits < 3);
	ck_assert_int_eq(gpuar_wait_blocking(h.w, &ws.source, &plan, 3, 0, &rec, NULL), -ENOSPC);
	ck_assert_int_eq(gpuar_waiter_prediction(h.w, 2, NULL), 0);
	__atomic_store_n(&h.word, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ck_assert_int_eq(h.ret, 0);
	/* Its wait over, point 2 is idle and gives way. */
	ck_assert_int_eq(gpuar_wait_blocking(h.w, &ws.source, &plan, 3, 0, &rec, NULL), 0);
	ck_assert_int_eq(gpuar_waiter_prediction(h.w, 2, NULL), -ENOENT);
	gpuar_waiter_free(h.w);
}
END_TEST

/* Real time, soft backend: block waits for the producer's store. */
START_TEST(soft_block_waits_for_the_store)
{
	struct gpuar_plan plan = plan_of("block");
	struct gpuar_soft_producer *prod;
	struct gpuar_soft_source ss;
	struct gpuar_waiter *w;
	struct gpuar_record rec;
	uint64_t word = 0;

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	gpuar_soft_store_after(prod, &word, 3, 20 * MS);
	ck_assert_int_eq(gpuar_wait_blocking(w, gpuar_soft_source_init(&ss, prod, &word, 3),
				    &plan, 1, 5, &rec, NULL), 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.checks, 0);
	ck_assert_uint_eq(rec.value, 3);
	ck_assert_uint_eq(rec.user_data, 5);
	ck_assert_uint_ge(rec.complete_ns, gpuar_soft_stored_at(prod, &word, 3));
	ck_assert_uint_eq(gpuar_soft_stores(prod), 1);
	gpuar_soft_producer_free(prod);
	gpuar_waiter_free(w);
}
END_TEST

START_TEST(soft_flag_wait_is_exact_in_real_time)
{
	struct gpuar_plan plan = plan_of(FLAG);
	struct gpuar_soft_producer *prod;
	struct gpuar_soft_source ss;
	struct gpuar_waiter *w;
	struct gpuar_record rec;
	uint64_t word = 0;

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	gpuar_soft_store_after(prod, &word, 1, 20 * MS);
	ck_assert_int_eq(gpuar_wait_blocking(w, gpuar_soft_source_init(&ss, prod, &word, 1),
				    &plan, 1, 0, &rec, NULL), 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_ge(rec.complete_ns, gpuar_soft_stored_at(prod, &word, 1));
	gpuar_soft_producer_free(prod);
	gpuar_waiter_free(w);
}
END_TEST

START_TEST(soft_fault_ends_a_real_wait)
{
	struct gpuar_plan plan = plan_of(FLAG);
	struct gpuar_soft_producer *prod;
	struct gpuar_soft_source ss;
	struct gpuar_waiter *w;
	struct gpuar_record rec;
	struct gpuar_error err;
	uint64_t word = 0;

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	gpuar_soft_fail_at(prod, -EIO, gpuar_now_ns() + 10 * MS);
	ck_assert_int_eq(gpuar_wait_blocking(w, gpuar_soft_source_init(&ss, prod, &word, 1),
				    &plan, 1, 0, &rec, &err), -EIO);
	ck_assert_uint_eq(err.code, GPUAR_E_BACKEND);
	plan = plan_of("block");
	ck_assert_int_eq(gpuar_wait_blocking(w, &ss.source, &plan, 1, 0, &rec, &err), -EIO);
	gpuar_soft_producer_free(prod);
	gpuar_waiter_free(w);
}
END_TEST

START_TEST(vclock_applies_stores_in_time_order)
{
	struct gpuar_vclock *vc = gpuar_vclock_new(100);
	uint64_t a = 0, b = 0;

	ck_assert_int_eq(gpuar_vclock_store_at(vc, 300, &a, 2), 0);
	ck_assert_int_eq(gpuar_vclock_store_at(vc, 200, &a, 1), 0);
	ck_assert_int_eq(gpuar_vclock_store_at(vc, 200, &b, 5), 0);
	gpuar_vclock_advance(vc, 99);
	ck_assert_uint_eq(a, 0);
	gpuar_vclock_advance(vc, 1);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(b, 5);
	ck_assert_uint_eq(gpuar_vclock_now(vc), 200);
	gpuar_vclock_clock(vc)->ops->sleep_until(gpuar_vclock_clock(vc)->ctx, 1000);
	ck_assert_uint_eq(a, 2);
	ck_assert_uint_eq(gpuar_vclock_now(vc), 1000);
	ck_assert_uint_eq(gpuar_vclock_sleeps(vc), 1);
	/* A store scripted in the past lands at once. */
	ck_assert_int_eq(gpuar_vclock_store_at(vc, 10, &b, 9), 0);
	ck_assert_uint_eq(b, 9);
	gpuar_vclock_free(vc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_wait");
	TCase *v = tcase_create("virtual"), *r = tcase_create("real");
	SRunner *sr;
	int failed;

	tcase_add_test(v, done_at_first_check_is_immediate);
	tcase_add_test(v, flag_parks_on_the_word_and_is_exact);
	tcase_add_test(v, poll_checks_at_its_interval);
	tcase_add_test(v, predicted_sleep_then_exact_or_late);
	tcase_add_test(v, flag_arms_once_and_queries_status_every_backstop);
	tcase_add_test(v, flag_backstop_zero_queries_status_at_the_default);
	tcase_add_test(v, status_error_ends_the_wait);
	tcase_add_test(v, check_error_ends_the_wait);
	tcase_add_test(v, bad_plans_and_arguments_are_refused);
	tcase_add_test(v, idle_point_gives_way_held_one_is_enospc);
	tcase_add_test(v, vclock_applies_stores_in_time_order);
	suite_add_tcase(s, v);
	tcase_set_timeout(r, 30);
	tcase_add_test(r, soft_block_waits_for_the_store);
	tcase_add_loop_test(r, interrupt_ends_a_wait, 0, 2);
	tcase_add_test(r, soft_flag_wait_is_exact_in_real_time);
	tcase_add_test(r, soft_fault_ends_a_real_wait);
	suite_add_tcase(s, r);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
