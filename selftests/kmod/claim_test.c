// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * GPUAR_IOC_CLAIM's bounds and checks, with many waits raised at once:
 * one claim looks at GPUAR_CLAIM_BATCH raised waits at most (each is
 * checked and leased with interrupts off: K3-3), the rest stay raised for
 * the next claim; a destination it cannot write costs EFAULT and claims
 * nothing; a raised wait whose word is already done ends at the claim
 * (its record queued) instead of being handed out (K3-8); and a
 * read checks every claimed wait, not only the first chunk of them, so a
 * wait the claimer saw done is read back whatever the waits claimed
 * before it do (K3-5).
 *
 * The words are stored by the test, after the raise, so the order is the
 * test's: counts and outcomes are asserted, never durations.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"

#include "port_harness.h"
#include "train_point.h"

#define WAIT_MS 30
#define POINT 0x2c
#define NWAITS 70		/* more than one claim's batch */
#define NLINES ((NWAITS + GPUAR_LINE_SLOTS - 1) / GPUAR_LINE_SLOTS)
#define LONG_LEASE_NS 100000000ULL	/* the module's cap: 100 ms */
#define PARK_NS 10000000ULL	/* a flag plan's longest park */

static int claim(int port, void *entries, __u32 count, __u64 lease_ns)
{
	struct gpuar_claim c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.entries = (__u64)(uintptr_t)entries;
	c.count = count;
	c.entry_size = sizeof(struct gpuar_claim_entry);
	c.lease_ns = lease_ns;
	return ioctl(port, GPUAR_IOC_CLAIM, &c);
}

FIXTURE(many)
{
	int port;
	__u64 *lines;
	__u32 line[NLINES + 1];
	__u64 seq;
	__u64 raised0;
};

/* Word of wait @i: lines 1.. (line 0, slot 0 trains the point). */
static __u64 *word_of(__u64 *lines, unsigned int i)
{
	return line_at(lines, 1 + i / GPUAR_LINE_SLOTS) +
	       i % GPUAR_LINE_SLOTS;
}

FIXTURE_SETUP(many)
{
	struct gpuar_port_stats st;
	unsigned int i;

	self->port = t_port_open(GPUAR_PORT_CLOEXEC | GPUAR_PORT_IMMINENT);
	ASSERT_LE(0, self->port);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	for (i = 0; i <= NLINES; i++)
		ASSERT_EQ(0, line_register(self->port, line_at(self->lines, i),
					   &self->line[i]));
	self->seq = 0;
	ASSERT_EQ(0, train_point(self->port, self->lines, self->line[0],
				 POINT, &self->seq, 3, WAIT_MS));
	ASSERT_EQ(0, port_stats(self->port, &st));
	self->raised0 = st.imminent;
}

FIXTURE_TEARDOWN(many)
{
	close(self->port);
	lines_unmap(self->lines, 1);
}

/*
 * Submit NWAITS predicted waits at the trained point (user data 1000 + i,
 * target 1) and wait until every one is raised. 0, or -1.
 */
static int raise_all(int port, const __u32 *line, __u64 raised0)
{
	struct gpuar_word_wait w[NWAITS];
	struct gpuar_port_stats st;
	unsigned int i, ms;

	/*
	 * Parked for 10 ms after their predicted sleep: once raised and
	 * checked at the sleep's end, the timer leaves them alone for that
	 * long, so what the test stores meanwhile only the claim and the
	 * reads see.
	 */
	struct gpuar_plan plan = plan_predict(8);

	plan.park_ns = PARK_NS;
	for (i = 0; i < NWAITS; i++)
		w[i] = word_wait(line[1 + i / GPUAR_LINE_SLOTS],
				 i % GPUAR_LINE_SLOTS, 1, POINT, 1000 + i,
				 plan);
	if (submit_words(port, w, NWAITS, NULL) != NWAITS)
		return -1;
	for (ms = 0; ms < RECORD_TIMEOUT_MS; ms++) {
		if (port_stats(port, &st))
			return -1;
		if (st.imminent - raised0 >= NWAITS) {
			/* Past the sleep's end (raise + wake latency). */
			sleep_ms(1);
			return 0;
		}
		sleep_ms(1);
	}
	return -1;
}

/* At most a batch per claim; the rest stay raised for the next one. */
TEST_F_TIMEOUT(many, a_claim_takes_at_most_a_batch, 60)
{
	struct gpuar_claim_entry e[NWAITS];
	struct gpuar_port_stats st;
	int n1, n2;

	ASSERT_EQ(0, raise_all(self->port, self->line, self->raised0));
	n1 = claim(self->port, e, NWAITS, LONG_LEASE_NS);
	EXPECT_EQ(GPUAR_CLAIM_BATCH, n1);
	ASSERT_LT(0, n1);
	n2 = claim(self->port, e + n1, NWAITS - n1, LONG_LEASE_NS);
	EXPECT_EQ(NWAITS - GPUAR_CLAIM_BATCH, n2);
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ((__u64)NWAITS, st.claims);
	/* Earliest raised first: the first claim had the first submitted. */
	EXPECT_EQ(1000ULL, e[0].user_data);
}

/*
 * A destination the claim cannot write (a read-only page): EFAULT, and
 * nothing claimed: every wait still raised, all of them claimable.
 */
TEST_F_TIMEOUT(many, a_faulting_destination_claims_nothing, 60)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct gpuar_claim_entry e[NWAITS];
	struct gpuar_port_stats st;
	void *ro;
	int n;

	ASSERT_EQ(0, raise_all(self->port, self->line, self->raised0));
	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-1, claim(self->port, ro, NWAITS, LONG_LEASE_NS));
	EXPECT_EQ(EFAULT, errno);
	/* Writable for the first entries, not for the batch: EFAULT too. */
	EXPECT_EQ(-1, claim(self->port, (char *)ro - 2 * sizeof(e[0]) + page,
			    NWAITS, LONG_LEASE_NS));
	munmap(ro, page);
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(0ULL, st.claims);
	n = claim(self->port, e, NWAITS, LONG_LEASE_NS);
	n += claim(self->port, e + n, NWAITS - n, LONG_LEASE_NS);
	EXPECT_EQ(NWAITS, n);
}

/*
 * A raised wait whose word is already done when claimed ends then, its
 * record queued: it is not handed out for the claimer to watch.
 *
 * The exact counts hold only when the port's timer stayed out of it
 * between the raise and the read that collects the records (its park,
 * PARK_NS, did not run out): a slow guest (the debug kernel under
 * single-threaded TCG) can take longer than that to store 35 words,
 * claim and read, and the timer then ends some done waits itself. What
 * must hold however late the claim is: no done wait handed out, every
 * record a done wait's, and every done wait among the batch's 64 ended
 * by one or the other.
 */
TEST_F_TIMEOUT(many, a_wait_done_by_the_claim_is_not_handed_out, 60)
{
	struct gpuar_claim_entry e[NWAITS];
	struct gpuar_record r[NWAITS];
	struct gpuar_port_stats before, after;
	unsigned int i;
	int n, got = 0;

	ASSERT_EQ(0, raise_all(self->port, self->line, self->raised0));
	ASSERT_EQ(0, port_stats(self->port, &before));
	/* Every other word done after the raise, before the claim. */
	for (i = 0; i < NWAITS; i += 2)
		word_store(word_of(self->lines, i), 1);
	n = claim(self->port, e, GPUAR_CLAIM_BATCH, LONG_LEASE_NS);
	ASSERT_LE(0, n);
	for (i = 0; i < (unsigned int)n; i++)
		EXPECT_EQ(1ULL, (e[i].user_data - 1000) % 2) {
			TH_LOG("handed out %llu, whose word was done",
			       (unsigned long long)e[i].user_data);
		}
	got = read_records(self->port, r, NWAITS, 0);
	/* After the read: a firing before it ends done waits too. */
	ASSERT_EQ(0, port_stats(self->port, &after));
	for (i = 0; i < (unsigned int)got; i++) {
		EXPECT_EQ(0ULL, (r[i].user_data - 1000) % 2);
		EXPECT_EQ(0, r[i].status);
		EXPECT_EQ(1ULL, r[i].value);
	}
	if (after.timer_fires != before.timer_fires) {
		TH_LOG("the timer fired %llu times before the read: exact counts not judged",
		       (unsigned long long)(after.timer_fires -
					    before.timer_fires));
		EXPECT_LE(GPUAR_CLAIM_BATCH / 2, got);
		return;
	}
	/* The batch looked at 64: 32 done ended, 32 handed out. */
	EXPECT_EQ(GPUAR_CLAIM_BATCH / 2, n);
	EXPECT_EQ(GPUAR_CLAIM_BATCH / 2, got);
}

/*
 * Every claimed wait is checked on read, however many were claimed
 * before it: with 70 claimed, the last one's word done and no other, one
 * non-blocking read returns its record (EXACT: the claim saw it pending).
 */
TEST_F_TIMEOUT(many, a_read_checks_every_claimed_wait, 60)
{
	struct gpuar_claim_entry e[NWAITS];
	struct gpuar_record r;
	int n, fl;

	ASSERT_EQ(0, raise_all(self->port, self->line, self->raised0));
	n = claim(self->port, e, NWAITS, LONG_LEASE_NS);
	ASSERT_LT(0, n);
	n += claim(self->port, e + n, NWAITS - n, LONG_LEASE_NS);
	ASSERT_EQ(NWAITS, n);
	fl = fcntl(self->port, F_GETFL);
	ASSERT_EQ(0, fcntl(self->port, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->port, &r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
	word_store((__u64 *)(uintptr_t)e[NWAITS - 1].addr +
			   e[NWAITS - 1].slot, 1);
	ASSERT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	EXPECT_EQ(e[NWAITS - 1].user_data, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	/* The others stay claimed, not done: nothing more. */
	EXPECT_EQ(-1, read(self->port, &r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
}

TEST_HARNESS_MAIN
