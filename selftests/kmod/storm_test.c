// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The timer storm stays closed: however many ports and staggered waits a
 * user has, each checked as often as a plan allows (park_us=0, so every
 * check interval is the module's floor) and none ever done, the port
 * timers fire no more often than the module parameters promise:
 *   - one port: at most once per check_floor_us (plus the first firing),
 *     whatever the phases of its waits;
 *   - one user: at most check_budget firings a second, plus the burst it
 *     may have saved (GPUAR_CHECK_BURST_MS of the budget) and one
 *     reserved firing per port; past the budget firings are delayed (the
 *     port counts budget_stretched), the waits still end at their backstop;
 *   - one user with all its ports (max_ports) at the floor, at the default
 *     budget, with 1 and with 64 waits a port: firings and checks both
 *     within that bound, and what it costs a CPU-bound co-runner against
 *     a control run (reported).
 * Counts, not durations: the firings (timer_fires of every port) over a
 * measured interval against the bound for that interval. The parameters
 * are set so that the bound is far below what the waits would ask for.
 */

#include <sys/wait.h>

#include "kselftest_harness.h"

#include "port_harness.h"
#include "../../core/defaults.h"

#define STORM_PORTS 32
#define STORM_WAITS 8		/* per port */
#define SPACING_WAITS 64	/* on the one port of the spacing test */
#define MEASURE_MS 200
#define MAX_PORTS 128		/* the default max_ports: one user's all */
#define LINES_PER_PAGE 64

struct storm {
	int ports[MAX_PORTS];
	unsigned int nports;
	__u64 *lines;
	size_t pages;
};

/*
 * @nports ports, each with @waits never-done park_us=0 waits on its own
 * lines (8 waits a line), submitted one at a time @gap_us apart so no two
 * share a phase.
 * The ports and lines are made first, so the backstops are spent on the
 * storm, not on the setup. 0, or -1.
 */
static int storm_start(struct storm *s, unsigned int nports,
		       unsigned int waits, unsigned int gap_us)
{
	unsigned int lpp = (waits + GPUAR_LINE_SLOTS - 1) / GPUAR_LINE_SLOTS;
	__u32 lines[MAX_PORTS * 8];
	unsigned int p, i;

	memset(s, 0, sizeof(*s));
	if (nports > MAX_PORTS || lpp > 8)
		return -1;
	s->pages = (nports * lpp + LINES_PER_PAGE - 1) / LINES_PER_PAGE;
	s->lines = lines_map(s->pages);
	if (!s->lines)
		return -1;
	for (p = 0; p < nports; p++) {
		s->ports[p] = t_port_open(GPUAR_PORT_CLOEXEC);
		if (s->ports[p] < 0)
			return -1;
		s->nports++;
		for (i = 0; i < lpp; i++)
			if (line_register(s->ports[p],
					  line_at(s->lines, p * lpp + i),
					  &lines[p * lpp + i]))
				return -1;
	}
	for (p = 0; p < nports; p++) {
		for (i = 0; i < waits; i++) {
			__u64 t = mono_ns() + gap_us * 1000ULL;

			/* Target 1: the word stays 0. */
			if (submit_word(s->ports[p],
					word_wait(lines[p * lpp + i / 8], i % 8,
						  1, 0, i,
						  plan_flag(0,
							    PLAN_BACKSTOP_NS))) != 1)
				return -1;
			while (mono_ns() < t)
				;
		}
	}
	return 0;
}

/*
 * @nports ports with @waits never-done park_us=0 waits each, the waits of
 * a port submitted in one batch (they share a phase; the ports do not), so
 * a many-port storm is set up in one call a port, well within the waits'
 * 1 s backstop. 0, or -1.
 */
static int storm_start_batched(struct storm *s, unsigned int nports,
			       unsigned int waits)
{
	unsigned int lpp = (waits + GPUAR_LINE_SLOTS - 1) / GPUAR_LINE_SLOTS;
	struct gpuar_word_wait w[64];
	__u32 lines[8];
	unsigned int p, i;

	memset(s, 0, sizeof(*s));
	if (nports > MAX_PORTS || waits > 64)
		return -1;
	s->pages = (nports * lpp + LINES_PER_PAGE - 1) / LINES_PER_PAGE;
	s->lines = lines_map(s->pages);
	if (!s->lines)
		return -1;
	for (p = 0; p < nports; p++) {
		s->ports[p] = t_port_open(GPUAR_PORT_CLOEXEC);
		if (s->ports[p] < 0)
			return -1;
		s->nports++;
	}
	for (p = 0; p < nports; p++) {
		for (i = 0; i < lpp; i++)
			if (line_register(s->ports[p],
					  line_at(s->lines, p * lpp + i),
					  &lines[i]))
				return -1;
		for (i = 0; i < waits; i++)
			w[i] = word_wait(lines[i / 8], i % 8, 1, 0, i,
					 plan_flag(0, PLAN_BACKSTOP_NS));
		if (submit_words(s->ports[p], w, waits, NULL) != (int)waits)
			return -1;
	}
	return 0;
}

static void storm_stop(struct storm *s)
{
	unsigned int p;

	for (p = 0; p < s->nports; p++)
		close(s->ports[p]);
	if (s->lines)
		lines_unmap(s->lines, s->pages);
}

/* The sum of a counter over the storm's ports. */
struct storm_counts {
	__u64 fires;
	__u64 checks;
	__u64 stretched;
	__u64 pending;
};

static int storm_counts(const struct storm *s, struct storm_counts *c)
{
	struct gpuar_port_stats st;
	unsigned int p;

	memset(c, 0, sizeof(*c));
	for (p = 0; p < s->nports; p++) {
		if (port_stats(s->ports[p], &st))
			return -1;
		c->fires += st.timer_fires;
		c->checks += st.checks;
		c->stretched += st.budget_stretched;
		c->pending += st.pending;
	}
	return 0;
}

/*
 * Let the storm run MEASURE_MS (after 10 ms to settle) and count it: the
 * counters before and after, and the measured interval between them.
 */
static int storm_measure(const struct storm *s, struct storm_counts *a,
			 struct storm_counts *b, __u64 *interval_ns)
{
	__u64 t0;

	sleep_ms(10);
	if (storm_counts(s, a))
		return -1;
	t0 = mono_ns();
	sleep_ms(MEASURE_MS);
	if (storm_counts(s, b))
		return -1;
	*interval_ns = mono_ns() - t0;
	return 0;
}

/*
 * One port, 64 waits 16 us apart checked every floor: without a spacing
 * per port it would fire at every wait's phase, 64 times per floor. With it,
 * at most once per floor. The floor is raised to 1 ms and the budget to
 * its maximum, so the bound is the spacing's and far below the waits'.
 */
TEST(one_port_fires_at_most_once_per_floor)
{
	long long floor_us = t_param("check_floor_us");
	long long budget = t_param("check_budget");
	struct storm_counts a, b;
	struct storm s;
	__u64 dt = 0, bound;
	int ret;

	ASSERT_LT(0, floor_us);
	ASSERT_LT(0, budget);
	ASSERT_EQ(0, t_param_set("check_floor_us", 1000));
	ASSERT_EQ(0, t_param_set("check_budget", GPUAR_CHECK_BUDGET_MAX));
	ret = storm_start(&s, 1, SPACING_WAITS, 16);
	if (!ret)
		ret = storm_measure(&s, &a, &b, &dt);
	storm_stop(&s);
	t_param_set("check_floor_us", floor_us);
	t_param_set("check_budget", budget);
	ASSERT_EQ(0, ret);

	/* Waits still pending: the storm lasted the whole interval. */
	EXPECT_LT(0ULL, b.pending);
	/* One firing per 1 ms floor over the interval, and the one it began with. */
	bound = dt / 1000000ULL + 2;
	EXPECT_GE(bound, b.fires - a.fires) {
		TH_LOG("%llu firings in %llu us, bound %llu",
		       (unsigned long long)(b.fires - a.fires),
		       (unsigned long long)dt / 1000,
		       (unsigned long long)bound);
	}
	/* The waits were checked meanwhile: firings did happen. */
	EXPECT_LT(a.fires, b.fires);
	TH_LOG("one port, %d waits: %llu firings in %llu us (bound %llu)",
	       SPACING_WAITS, (unsigned long long)(b.fires - a.fires),
	       (unsigned long long)dt / 1000,
	       (unsigned long long)bound);
}

/*
 * 32 ports of 8 staggered waits at the default 10 us floor ask for up to
 * 3.2 million firings a second (32 ports at one per floor). The budget,
 * set to 1000 checks a second, bounds the user's firings to 1000 a
 * second plus the burst and one reserved firing per port.
 */
TEST(many_ports_fire_within_the_user_budget)
{
	long long budget = t_param("check_budget");
	const long long rate = 1000;
	struct storm_counts a, b;
	struct storm s;
	__u64 dt = 0, bound;
	int ret;

	ASSERT_LT(0, budget);
	ASSERT_EQ(0, t_param_set("check_budget", rate));
	ret = storm_start(&s, STORM_PORTS, STORM_WAITS, 3);
	if (!ret)
		ret = storm_measure(&s, &a, &b, &dt);
	storm_stop(&s);
	t_param_set("check_budget", budget);
	ASSERT_EQ(0, ret);

	EXPECT_LT(0ULL, b.pending);
	bound = (__u64)rate * (dt / 1000 +
			       GPUAR_CHECK_BURST_MS * 1000) / 1000000 +
		STORM_PORTS + 1;
	EXPECT_GE(bound, b.fires - a.fires) {
		TH_LOG("%llu firings in %llu us, bound %llu",
		       (unsigned long long)(b.fires - a.fires),
		       (unsigned long long)dt / 1000,
		       (unsigned long long)bound);
	}
	/* The budget was what held them: firings were delayed by it. */
	EXPECT_LT(a.stretched, b.stretched);
	EXPECT_LT(a.fires, b.fires);
	TH_LOG("%d ports x %d waits at budget %lld/s: %llu firings in %llu us (bound %llu), %llu delayed",
	       STORM_PORTS, STORM_WAITS, rate,
	       (unsigned long long)(b.fires - a.fires),
	       (unsigned long long)dt / 1000,
	       (unsigned long long)bound,
	       (unsigned long long)(b.stretched - a.stretched));
}

/*
 * The default parameters bound a user's firings too, and the waits end
 * at their backstop all the same: the budget delays, it never refuses.
 */
TEST(stretched_waits_still_end_at_their_backstop)
{
	long long budget = t_param("check_budget");
	struct gpuar_record r[STORM_WAITS];
	struct storm s;
	unsigned int p;
	int ret, i;

	ASSERT_LT(0, budget);
	ASSERT_EQ(0, t_param_set("check_budget", GPUAR_CHECK_BUDGET_MIN));
	ret = storm_start(&s, 4, STORM_WAITS, 3);
	/* Backstops 1 s from submission; allow TCG its stalls. */
	for (p = 0; !ret && p < s.nports; p++) {
		if (collect_records(s.ports[p], r, STORM_WAITS,
				    RECORD_TIMEOUT_MS) != STORM_WAITS) {
			ret = -1;
			break;
		}
		for (i = 0; i < STORM_WAITS; i++)
			if (r[i].outcome != GPUAR_OUTCOME_TIMEOUT ||
			    r[i].status != -ETIME)
				ret = -1;
	}
	storm_stop(&s);
	t_param_set("check_budget", budget);
	EXPECT_EQ(0, ret);
}

/*
 * A CPU-bound co-runner: one process per online CPU counting loop turns
 * for @ms; the total, or 0 on failure. What the storm costs it is its
 * count against a control run's (reported, not asserted: the co-runner's
 * pace is the emulator's and the host's as much as the storm's).
 */
static __u64 corunner_turns(unsigned int ms)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	__u64 total = 0, turns;
	int fds[2];
	pid_t pid;
	long c;

	if (ncpu < 1 || pipe(fds))
		return 0;
	for (c = 0; c < ncpu; c++) {
		pid = fork();
		if (pid < 0)
			return 0;
		if (!pid) {
			__u64 end = mono_ns() + ms * 1000000ULL;
			volatile __u64 n = 0;

			while (mono_ns() < end) {
				unsigned int k;

				for (k = 0; k < 1000; k++)
					n++;
			}
			turns = n;
			_exit(write(fds[1], &turns, sizeof(turns)) ==
			      sizeof(turns) ? 0 : 1);
		}
	}
	close(fds[1]);
	while (read(fds[0], &turns, sizeof(turns)) == sizeof(turns))
		total += turns;
	close(fds[0]);
	while (wait(NULL) > 0)
		;
	return total;
}

/*
 * One user's every port (max_ports, 128) at the smallest check interval
 * (park_us=0: the floor, 10 us), with the default budgets: the user's
 * firings per second, not only its checks, stay within check_budget plus
 * the burst plus one firing per port (a reservation that paid a firing
 * reserves the port's next one while the budget stays spent; before,
 * each check cost two firings, one of them for nothing). With 1 wait a
 * port and with 64 (a firing then checks several). A co-runner's loss
 * against a control run with no waits is measured and reported.
 */
FIXTURE(budget)
{
	long long budget, max_ports;
};

FIXTURE_VARIANT(budget)
{
	unsigned int waits;
};

FIXTURE_VARIANT_ADD(budget, one_wait_a_port)
{
	.waits = 1,
};

FIXTURE_VARIANT_ADD(budget, sixty_four_waits_a_port)
{
	.waits = 64,
};

FIXTURE_SETUP(budget)
{
	self->budget = t_param("check_budget");
	self->max_ports = t_param("max_ports");
	ASSERT_LT(0, self->budget);
	ASSERT_LE(MAX_PORTS, self->max_ports);
}

FIXTURE_TEARDOWN(budget)
{
}

TEST_F_TIMEOUT(budget, all_ports_at_the_floor_fire_within_the_budget, 120)
{
	const unsigned int ms = 300;
	__u64 control, loaded, dt = 0, bound;
	struct storm_counts a, b;
	struct storm s;
	int ret;

	control = corunner_turns(ms);
	ASSERT_LT(0ULL, control);
	ret = storm_start_batched(&s, MAX_PORTS, variant->waits);
	if (!ret) {
		sleep_ms(10);
		ret = storm_counts(&s, &a);
	}
	if (!ret) {
		__u64 t0 = mono_ns();

		loaded = corunner_turns(ms);
		ret = storm_counts(&s, &b);
		dt = mono_ns() - t0;
	}
	storm_stop(&s);
	ASSERT_EQ(0, ret);
	ASSERT_LT(0ULL, loaded);

	/*
	 * The waits' 1 s backstop counts from their submission: a kernel
	 * slow enough (the debug kernel under TCG) spends it on the setup.
	 */
	if (!a.pending)
		SKIP(return, "the setup outlasted the waits' backstop");
	bound = (__u64)self->budget * (dt / 1000 +
				       GPUAR_CHECK_BURST_MS * 1000) / 1000000 +
		MAX_PORTS + 1;
	EXPECT_GE(bound, b.fires - a.fires) {
		TH_LOG("%llu firings in %llu us, bound %llu",
		       (unsigned long long)(b.fires - a.fires),
		       (unsigned long long)dt / 1000,
		       (unsigned long long)bound);
	}
	/* Every check paid from the same budget. */
	EXPECT_GE(bound, b.checks - a.checks);
	EXPECT_LT(a.fires, b.fires);
	TH_LOG("%d ports x %u waits at budget %lld/s: %llu firings/s, %llu checks/s (bound %llu/s); co-runner %llu turns against %llu with no waits: %.1f%% lost",
	       MAX_PORTS, variant->waits, self->budget,
	       (unsigned long long)((b.fires - a.fires) * 1000000000ULL / dt),
	       (unsigned long long)((b.checks - a.checks) * 1000000000ULL / dt),
	       (unsigned long long)(bound * 1000000000ULL / dt),
	       (unsigned long long)loaded, (unsigned long long)control,
	       loaded >= control ? 0.0 :
	       100.0 * (double)(control - loaded) / (double)control);
}

TEST_HARNESS_MAIN
