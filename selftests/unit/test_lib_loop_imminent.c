// SPDX-License-Identifier: MIT
/*
 * Imminent readiness as the Python binding's asyncio side drives it
 * (python/gpuar/_reactor.py), on the engine under test
 * (GPUAR_TEST_ENGINE: the user engine on the host, the module's port in
 * the VMs, tools/vm/lib-tests.sh). An event loop's add_reader watches
 * POLLIN only, and the kernel engine says "imminent" with EPOLLPRI, so the
 * binding puts the port fd in a private epoll for EPOLLIN | EPOLLPRI and
 * gives the loop that epoll's fd. Here the loop is an epoll of its own
 * watching the private one for EPOLLIN, as add_reader does; on each
 * readiness the callback does what the binding's does: empty the private
 * epoll (epoll_wait, timeout 0), gpuar_port_process(), and reap (timeout
 * 0) only the records process counted.
 *
 * Machines are noisy: the work is 20 ms with a 3 ms margin, a loop kept
 * off its CPU past the store gets another try, and outcomes and counters
 * are asserted, never durations.
 */
#include <gpuar/gpuar.h>

#include "engine_fixture.h"
#include "trained_port.h"
#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

/*
 * A wide margin (20 ms before a 100 ms job): the debug kernel under
 * emulation is slow enough that a 3 ms margin before 20 ms of work saw the
 * store before the early wake (the first readiness was the record's).
 */
#define PLAN "flag:park_us=1000,backstop_us=1000000" \
	"+predict:margin_us=20000,min_sleep_us=20,max_sleep_us=500000,window=4"
#define WORK_NS (100 * MS)
/* Tries a machine too slow for the early wake may take. */
#define TRIES 5
#define TRAINING 3

struct loop {
	int outer;		/* the event loop's own poller */
	int inner;		/* the binding's private epoll */
};

static struct loop loop_open(struct gpuar_port *port)
{
	struct epoll_event in = { .events = EPOLLIN | EPOLLPRI };
	struct epoll_event reader = { .events = EPOLLIN };
	struct loop l;

	l.inner = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(l.inner, 0);
	ck_assert_int_eq(epoll_ctl(l.inner, EPOLL_CTL_ADD, gpuar_port_fd(port),
				   &in), 0);
	l.outer = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(l.outer, 0);
	ck_assert_int_eq(epoll_ctl(l.outer, EPOLL_CTL_ADD, l.inner, &reader),
			 0);
	return l;
}

static void loop_close(struct loop *l)
{
	close(l->outer);
	close(l->inner);
}

/*
 * One turn of the loop: wait for the private epoll's fd to turn readable
 * (2 s at most), then the callback. Returns the records process counted
 * (reaped into @rec), and in *@seen what the port fd showed.
 */
static int loop_turn(const struct loop *l, struct gpuar_port *port,
		     struct gpuar_record *rec, uint32_t *seen)
{
	struct epoll_event ev;
	int n;

	ck_assert_int_eq(epoll_wait(l->outer, &ev, 1, 2000), 1);
	*seen = 0;
	if (epoll_wait(l->inner, &ev, 1, 0) == 1)
		*seen = ev.events;
	n = gpuar_port_process(port);
	ck_assert_int_ge(n, 0);
	if (n > 0)
		ck_assert_int_eq(gpuar_port_reap(port, rec, 1, 0), 1);
	return n;
}

START_TEST(the_loop_hears_imminence_through_the_private_epoll)
{
	struct gpuar_port_options o = {
		.engine = test_engine(),
		.flags = GPUAR_PORT_IMMINENT | GPUAR_PORT_STRICT,
		.busy_read_us = 40000,	/* a lease past the margin */
	};
	struct gpuar_port_stats before = { .size = sizeof(before) };
	struct gpuar_port_stats after = { .size = sizeof(after) };
	struct gpuar_record rec = { 0 };
	struct trained_port f;
	struct loop l;
	uint32_t first = 0, seen;
	bool kernel;

	trained_port_open(&f, &o, PLAN, 5);
	ck_assert(gpuar_port_imminent(f.port));
	kernel = gpuar_port_engine(f.port) == GPUAR_ENGINE_KERNEL;
	trained_port_train(&f, TRAINING, WORK_NS);
	l = loop_open(f.port);
	for (int attempt = 0; attempt < TRIES; attempt++) {
		int turns = 0;

		ck_assert_int_eq(gpuar_port_stats(f.port, &before), 0);
		trained_port_submit(&f, WORK_NS);
		first = 0;
		while (loop_turn(&l, f.port, &rec, &seen) == 0) {
			if (!turns++)
				first = seen;
			/*
			 * Each turn watches one claim slice (20 us): the
			 * margin's 20 ms takes many, the wait's 2 s at most.
			 */
			ck_assert_int_lt(turns, 200000);
		}
		if (!turns)
			first = seen;
		ck_assert_uint_eq(rec.user_data, f.seq);
		ck_assert_int_eq(rec.status, 0);
		/*
		 * Conclusive when the store was seen pending first (EXACT)
		 * and the first readiness was the early wake's, not the
		 * record's, and the claim's lease did not run out first: a
		 * machine that held the timer past the store, or the
		 * producer's thread past the lease (the timer's check then
		 * sees the store), says nothing of the path.
		 */
		ck_assert_int_eq(gpuar_port_stats(f.port, &after), 0);
		if (rec.outcome == GPUAR_OUTCOME_EXACT &&
		    (first & (kernel ? EPOLLPRI : EPOLLIN)) &&
		    after.lease_expiries == before.lease_expiries)
			break;
	}
	ck_assert_int_eq(gpuar_port_stats(f.port, &after), 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_ge(rec.complete_ns,
			  gpuar_soft_stored_at(f.prod, f.word, f.seq));
	/*
	 * The first readiness was the early wake, before the record: the
	 * module's EPOLLPRI (which add_reader alone would not have heard),
	 * the user engine's readable fd. The callback's process claimed the
	 * wait and watched its word until the store.
	 */
	if (kernel) {
		ck_assert_msg(first & EPOLLPRI, "first readiness 0x%x", first);
		ck_assert_uint_ge(after.claims, before.claims + 1);
	} else {
		ck_assert_msg(first & EPOLLIN, "first readiness 0x%x", first);
		ck_assert_uint_ge(after.busy_read_checks,
				  before.busy_read_checks + 1);
	}
	/*
	 * Nothing left: the private epoll is quiet once the record is read
	 * and, where a claim slice ended before the store, one more turn
	 * of the callback let the claim go (user engine).
	 */
	if (epoll_wait(l.outer, &(struct epoll_event){ 0 }, 1, 0) == 1) {
		ck_assert(!kernel);
		ck_assert_int_eq(loop_turn(&l, f.port, &rec, &seen), 0);
	}
	ck_assert_int_eq(epoll_wait(l.outer, &(struct epoll_event){ 0 }, 1, 0),
			 0);
	loop_close(&l);
	trained_port_close(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_loop_imminent");
	TCase *t = tcase_create("loop");
	struct unit_skips skips = { 0 };

	tcase_set_timeout(t, 30);
	tcase_add_test(t, the_loop_hears_imminence_through_the_private_epoll);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
