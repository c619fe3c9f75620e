// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * SUBMIT_WORD and SUBMIT_FENCE validation. A batch is all or nothing:
 * on any refusal nothing was submitted (no record ever arrives, the
 * statistics count nothing) and error_index names the first bad entry,
 * or equals count when the batch as a whole was refused.
 *
 *   entry: slot >= 8, flags, pad, invalid plan, block plan,
 *          start_ns in the future ......................... EINVAL, index
 *   entry: unknown line id ................................ ENOENT, index
 *   entry larger than the kernel's, non-zero tail ......... E2BIG, index
 *   entry_size below the first ABI version ................ EINVAL, count
 *   batch header flags or pad ............................. EINVAL, count
 *   count above max_waits ................................. E2BIG, count
 *   entries pointer unreadable ............................ EFAULT, index 0
 *   fence fd negative or closed ........................... EBADF, index
 *   fence fd open but not a sync_file ..................... EINVAL, index
 *   fence flags or reserved ............................... EINVAL, index
 *   count 0 ............................................... 0, nothing
 */
#include <sys/mman.h>

#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "port_harness.h"
#include "testfence_fixture.h"

/* Nothing was committed: no record, nothing counted. */
static int nothing_submitted(int port)
{
	struct gpuar_port_stats st;

	if (!port_quiet(port, 30) || port_stats(port, &st))
		return 0;
	return st.submitted == 0 && st.pending == 0 && st.queued == 0;
}

/* ------------------------------------------------------- bad plans */

FIXTURE(plan)
{
	int port;
	__u64 *lines;
	__u32 line;
};

FIXTURE_VARIANT(plan)
{
	struct gpuar_plan plan;
};

FIXTURE_SETUP(plan)
{
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line));
}

FIXTURE_TEARDOWN(plan)
{
	close(self->port);
	lines_unmap(self->lines, 1);
}

#define PREDICT_FIELDS \
	.flags = GPUAR_PLAN_PREDICT, .margin_ns = 150000, \
	.min_sleep_ns = 20000, .max_sleep_ns = 50000000

FIXTURE_VARIANT_ADD(plan, park_zero)
{
	.plan = { .park = 0 },
};

FIXTURE_VARIANT_ADD(plan, park_unknown)
{
	.plan = { .park = GPUAR_PARK_FLAG + 1, .park_ns = 100000,
		  .backstop_ns = 1000000 },
};

/* block is the vendor's blocking wait: userspace does it. */
FIXTURE_VARIANT_ADD(plan, block)
{
	.plan = { .park = GPUAR_PARK_BLOCK },
};

FIXTURE_VARIANT_ADD(plan, block_predict)
{
	.plan = { .park = GPUAR_PARK_BLOCK, PREDICT_FIELDS, .window = 8 },
};

FIXTURE_VARIANT_ADD(plan, unknown_flag)
{
	.plan = { .park = GPUAR_PARK_POLL, .flags = GPUAR_PLAN_FLAGS_ALL << 1 },
};

FIXTURE_VARIANT_ADD(plan, park_ns_over_max)
{
	.plan = { .park = GPUAR_PARK_FLAG,
		  .park_ns = GPUAR_PLAN_PARK_NS_MAX + 1,
		  .backstop_ns = 1000000 },
};

FIXTURE_VARIANT_ADD(plan, backstop_over_max)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1 },
};

FIXTURE_VARIANT_ADD(plan, window_zero)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, PREDICT_FIELDS, .window = 0 },
};

FIXTURE_VARIANT_ADD(plan, window_over_max)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, PREDICT_FIELDS,
		  .window = GPUAR_PLAN_WINDOW_MAX + 1 },
};

/* The predict rule's times are bounded as the backstop is. */
FIXTURE_VARIANT_ADD(plan, margin_over_max)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, .flags = GPUAR_PLAN_PREDICT,
		  .margin_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1,
		  .min_sleep_ns = 20000, .max_sleep_ns = 50000000, .window = 8 },
};

FIXTURE_VARIANT_ADD(plan, min_sleep_over_max)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, .flags = GPUAR_PLAN_PREDICT,
		  .margin_ns = 150000,
		  .min_sleep_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1, .max_sleep_ns = 50000000, .window = 8 },
};

FIXTURE_VARIANT_ADD(plan, max_sleep_over_max)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, .flags = GPUAR_PLAN_PREDICT,
		  .margin_ns = 150000,
		  .min_sleep_ns = 20000, .max_sleep_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1, .window = 8 },
};

FIXTURE_VARIANT_ADD(plan, poll_with_park_ns)
{
	.plan = { .park = GPUAR_PARK_POLL, .park_ns = 100000 },
};

FIXTURE_VARIANT_ADD(plan, margin_without_predict)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, .margin_ns = 150000 },
};

FIXTURE_VARIANT_ADD(plan, window_without_predict)
{
	.plan = { .park = GPUAR_PARK_FLAG, .park_ns = 100000,
		  .backstop_ns = 1000000, .window = 8 },
};

FIXTURE_VARIANT_ADD(plan, pad_nonzero)
{
	.plan = { .park = GPUAR_PARK_POLL, .pad = 1 },
};

/* The bad plan sits second: the first, good, entry must not be committed. */
TEST_F(plan, refused_einval_nothing_submitted)
{
	struct gpuar_word_wait w[2];
	__u32 idx;

	word_store(self->lines, 1);	/* a committed entry would complete */
	w[0] = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 0, 1, 1, 2, variant->plan);
	EXPECT_EQ(-1, submit_words(self->port, w, 2, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/* ------------------------------------------------------ good plans */

TEST_F(port, each_brief_plan_accepted)
{
	struct gpuar_word_wait w[3];
	struct gpuar_record r[3];

	word_store(self->lines, 1);
	w[0] = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 0, 1, 1, 2, plan_flag(100000, 1000000));
	w[2] = word_wait(self->line, 0, 1, 1, 3, plan_predict(8));
	ASSERT_EQ(3, submit_words(self->port, w, 3, NULL));
	ASSERT_EQ(3, collect_records(self->port, r, 3, RECORD_TIMEOUT_MS));
	EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, r[0].outcome);
	EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, r[1].outcome);
	EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, r[2].outcome);
}

TEST_F(port, plan_bounds_inclusive_accepted)
{
	struct gpuar_plan p = plan_predict(GPUAR_PLAN_WINDOW_MAX);
	struct gpuar_word_wait w[2];

	p.park_ns = GPUAR_PLAN_PARK_NS_MAX;
	p.backstop_ns = GPUAR_PLAN_BACKSTOP_NS_MAX;
	word_store(self->lines, 1);
	w[0] = word_wait(self->line, 0, 1, 1, 1, p);
	w[1] = word_wait(self->line, 0, 1, 2, 2, plan_predict(GPUAR_PLAN_WINDOW_MIN));
	EXPECT_EQ(2, submit_words(self->port, w, 2, NULL));
}

/* ---------------------------------------------------- word entries */

TEST_F(port, empty_batch_submits_nothing)
{
	struct gpuar_word_wait w = word_wait(self->line, 0, 1, 1, 1,
					     plan_poll());

	EXPECT_EQ(0, submit_words(self->port, &w, 0, NULL));
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, slot_out_of_range_einval)
{
	struct gpuar_word_wait w = word_wait(self->line, GPUAR_LINE_SLOTS, 1,
					     1, 1, plan_poll());
	__u32 idx;

	EXPECT_EQ(-1, submit_words(self->port, &w, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0U, idx);
	w.slot = ~0U;
	EXPECT_EQ(-1, submit_words(self->port, &w, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, unknown_line_enoent_at_its_index)
{
	struct gpuar_word_wait w[3];
	__u32 idx;

	word_store(self->lines, 1);
	w[0] = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 1, 1, 1, 2, plan_poll());
	w[2] = word_wait(self->line + 77, 0, 1, 1, 3, plan_poll());
	EXPECT_EQ(-1, submit_words(self->port, w, 3, &idx));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(2U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/*
 * error_index is the first bad entry whatever is wrong with it: an unknown
 * line before a bad plan, and a bad plan before an unknown line.
 */
TEST_F(port, first_bad_entry_named_whatever_its_fault)
{
	struct gpuar_word_wait w[6];
	__u32 idx;
	int i;

	for (i = 0; i < 6; i++)
		w[i] = word_wait(self->line, 0, 1, 1, i, plan_poll());
	w[2].line = self->line + 77;
	w[5].plan.park = 99;
	EXPECT_EQ(-1, submit_words(self->port, w, 6, &idx));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(2U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));

	w[1].plan.park = 99;
	EXPECT_EQ(-1, submit_words(self->port, w, 6, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/* A word submit from another mm is refused as a whole: index == count. */
TEST_F(port, submit_from_another_mm_eperm_index_count)
{
	struct gpuar_word_wait w[2];
	int status = -1;
	pid_t pid;

	w[0] = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 1, 1, 1, 2, plan_poll());
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		__u32 idx = 0;

		if (submit_words(self->port, w, 2, &idx) != -1 ||
		    errno != EPERM)
			_exit(1);
		_exit(idx == 2 ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, entry_flags_and_pad_einval)
{
	struct gpuar_word_wait w = word_wait(self->line, 0, 1, 1, 1,
					     plan_poll());
	__u32 idx;

	w.flags = 1;
	EXPECT_EQ(-1, submit_words(self->port, &w, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0U, idx);
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(-1, submit_words(self->port, &w, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/* A resubmit keeps its original start; a start in the future is nonsense. */
TEST_F(port, start_in_future_einval)
{
	struct gpuar_word_wait w = word_wait(self->line, 0, 1, 1, 1,
					     plan_poll());
	__u32 idx;

	w.start_ns = mono_ns() + 10000000000ULL;
	EXPECT_EQ(-1, submit_words(self->port, &w, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, batch_header_flags_and_pad_einval)
{
	struct gpuar_word_wait w = word_wait(self->line, 0, 1, 1, 1,
					     plan_poll());
	struct gpuar_submit s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.count = 1;
	s.entry_size = sizeof(w);
	s.entries = (__u64)(uintptr_t)&w;
	s.flags = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_SUBMIT_WORD, &s));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1U, s.error_index);
	s.flags = 0;
	s.pad = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_SUBMIT_WORD, &s));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1U, s.error_index);
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, entry_size_below_first_abi_einval)
{
	struct gpuar_word_wait w = word_wait(self->line, 0, 1, 1, 1,
					     plan_poll());
	__u32 idx;

	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, &w, 1,
				 sizeof(w) - 8, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1U, idx);
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, &w, 1, 0,
				 &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/* Entries of a newer ABI: accepted when the unknown tail is zero. */
TEST_F(port, newer_entries_zero_tail_accepted_nonzero_e2big)
{
	struct newer {
		struct gpuar_word_wait w;
		__u64 future;
	} e[2];
	struct gpuar_record r[2];
	__u32 idx;

	memset(e, 0, sizeof(e));
	word_store(self->lines, 1);
	e[0].w = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	e[1].w = word_wait(self->line, 0, 1, 1, 2, plan_poll());
	e[1].future = 1;
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, e, 2,
				 sizeof(e[0]), &idx));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(1U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));

	e[1].future = 0;
	ASSERT_EQ(2, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, e, 2,
				sizeof(e[0]), NULL));
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(1ULL, r[0].user_data);
	EXPECT_EQ(2ULL, r[1].user_data);
}

TEST_F(port, batch_above_wait_limit_e2big)
{
	long long max = t_param("max_waits");
	struct gpuar_word_wait w = word_wait(self->line, 0, 1, 1, 1,
					     plan_poll());
	__u32 idx;

	ASSERT_LT(0, max) {
		TH_LOG("/sys/module/gpuar/parameters/max_waits unreadable");
	}
	/* The count alone refuses it: the entries are never read. */
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, &w,
				 (__u32)max + 1, sizeof(w), &idx));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ((__u32)max + 1, idx);
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, &w,
				 ~0U, sizeof(w), &idx));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, unreadable_entries_efault)
{
	void *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	__u32 idx;

	ASSERT_NE(MAP_FAILED, bad);
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_WORD, bad, 1,
				 sizeof(struct gpuar_word_wait), &idx));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0U, idx);
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_FENCE, bad, 1,
				 sizeof(struct gpuar_fence_wait), &idx));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0U, idx);
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_SUBMIT_WORD, bad));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/* A batch spanning a page boundary into unreadable memory: index 1. */
TEST_F(port, entries_running_into_unmapped_page_efault_at_index)
{
	char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct gpuar_word_wait *w;
	__u32 idx;

	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, munmap(two + 4096, 4096));
	w = (struct gpuar_word_wait *)(two + 4096) - 1;
	*w = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	EXPECT_EQ(-1, submit_words(self->port, w, 2, &idx));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(1U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, good_batch_returns_count)
{
	struct gpuar_word_wait w[16];
	struct gpuar_record r[16];
	int i;

	for (i = 0; i < 16; i++) {
		word_store(line_at(self->lines, 0) + (i % 8), 1);
		w[i] = word_wait(self->line, i % 8, 1, 1, 100 + i, plan_poll());
	}
	ASSERT_EQ(16, submit_words(self->port, w, 16, NULL));
	ASSERT_EQ(16, collect_records(self->port, r, 16, RECORD_TIMEOUT_MS));
	/* Immediate completions queue in submission order. */
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(100ULL + i, r[i].user_data);
	}
}

/* --------------------------------------------------- fence entries */

TEST_F(port, fence_fd_negative_or_closed_ebadf)
{
	int fd = dup(0);
	__u32 idx;
	struct gpuar_fence_wait f = fence_wait(-1, 1);

	EXPECT_EQ(-1, submit_fences(self->port, &f, 1, &idx));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(0U, idx);
	ASSERT_LE(0, fd);
	close(fd);
	f.fd = fd;
	EXPECT_EQ(-1, submit_fences(self->port, &f, 1, &idx));
	EXPECT_EQ(EBADF, errno);
	f.fd = 1 << 20;
	EXPECT_EQ(-1, submit_fences(self->port, &f, 1, &idx));
	EXPECT_EQ(EBADF, errno);
	EXPECT_TRUE(nothing_submitted(self->port));
}

/* An open fd that is not a sync_file: EINVAL, unlike a closed one. */
TEST_F(port, fence_fd_not_sync_file_einval)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct gpuar_fence_wait f[2];
	__u32 idx;

	ASSERT_LE(0, null);
	f[0] = fence_wait(null, 1);
	EXPECT_EQ(-1, submit_fences(self->port, f, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0U, idx);
	/* The port itself is not a sync_file either. */
	f[0] = fence_wait(self->port, 1);
	EXPECT_EQ(-1, submit_fences(self->port, f, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	close(null);
	EXPECT_TRUE(nothing_submitted(self->port));
}

TEST_F(port, fence_flags_and_reserved_einval)
{
	struct gpuar_fence_wait f = fence_wait(0, 1);
	int tl = testfence_timeline();
	__u32 idx;

	ASSERT_LE(0, tl) {
		TH_LOG("%s: %s", GPUAR_TESTFENCE_PATH, strerror(errno));
	}
	f.fd = testfence_fence(tl, 1);
	ASSERT_LE(0, f.fd);
	f.flags = 1;
	EXPECT_EQ(-1, submit_fences(self->port, &f, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	f.flags = 0;
	f.reserved[1] = 1;
	EXPECT_EQ(-1, submit_fences(self->port, &f, 1, &idx));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
	close(f.fd);
	close(tl);
}

/* All or nothing for fences: the good fences before a bad fd hang nothing. */
TEST_F(port, fence_batch_all_or_nothing)
{
	struct gpuar_fence_wait f[3];
	int tl = testfence_timeline();
	int a, b;
	__u32 idx;

	ASSERT_LE(0, tl);
	a = testfence_fence(tl, 1);
	b = testfence_fence(tl, 2);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	f[0] = fence_wait(a, 1);
	f[1] = fence_wait(b, 2);
	f[2] = fence_wait(-1, 3);
	EXPECT_EQ(-1, submit_fences(self->port, f, 3, &idx));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(2U, idx);
	ASSERT_EQ(0, testfence_signal(tl, 2, 0));
	EXPECT_TRUE(nothing_submitted(self->port));
	close(a);
	close(b);
	close(tl);
}

TEST_F(port, fence_entry_size_rules)
{
	struct {
		struct gpuar_fence_wait f;
		__u64 future;
	} e;
	int tl = testfence_timeline();
	__u32 idx;

	ASSERT_LE(0, tl);
	memset(&e, 0, sizeof(e));
	e.f = fence_wait(testfence_fence(tl, 0), 5);	/* signalled */
	ASSERT_LE(0, e.f.fd);
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_FENCE, &e, 1,
				 sizeof(e.f) - 8, &idx));
	EXPECT_EQ(EINVAL, errno);
	e.future = 1;
	EXPECT_EQ(-1, submit_raw(self->port, GPUAR_IOC_SUBMIT_FENCE, &e, 1,
				 sizeof(e), &idx));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(0U, idx);
	EXPECT_TRUE(nothing_submitted(self->port));
	e.future = 0;
	EXPECT_EQ(1, submit_raw(self->port, GPUAR_IOC_SUBMIT_FENCE, &e, 1,
				sizeof(e), &idx));
	close(e.f.fd);
	close(tl);
}

TEST_HARNESS_MAIN
