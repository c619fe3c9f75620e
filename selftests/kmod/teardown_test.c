// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Teardown: whatever a port holds when it goes away (pending word and
 * fence waits, unread records, pinned lines) is released, whether the fd
 * is closed, the process exits or is killed mid-wait. A line the process
 * unmaps under pending waits dies (its waits end at once) and its page
 * stays pinned, valid, until it is unregistered. A forked child
 * inherits the port: it may read, poll, cancel, wait on fences and ask for
 * statistics, but not register lines or submit word waits (EPERM: the port
 * belongs to its creator's address space). Many threads may submit, read
 * and cancel at once; every wait still ends with exactly one record.
 *
 * The kernel log (KASAN, kmemleak, lockdep, refcount warnings) is checked
 * by the VM runner after the suite, and gpuar_testfence unloads only if no
 * port kept a fence reference.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"
#include "testfence_fixture.h"

/* Fill a port with one of everything it can hold. */
static int port_fill(int port, __u64 *lines, __u32 line, int tl, int *fence)
{
	struct gpuar_word_wait w[2];

	*fence = testfence_fence(tl, 1);
	if (*fence < 0)
		return -1;
	word_store(&lines[1], 1);
	w[0] = word_wait(line, 0, 1, 1, 1, plan_poll());	/* pending */
	w[1] = word_wait(line, 1, 1, 1, 2, plan_poll());	/* queued */
	if (submit_words(port, w, 2, NULL) != 2)
		return -1;
	if (submit_word(port, word_wait(line, 2, 1, 2, 3,
					plan_predict(8))) != 1)
		return -1;
	return submit_fence(port, *fence, 4) == 1 ? 0 : -1;
}

TEST_F(port, close_with_every_kind_pending)
{
	int tl = testfence_timeline();
	long pinned;
	int fence;

	ASSERT_LE(0, tl);
	pinned = vm_pin_kb();
	ASSERT_LT(0, pinned) {
		TH_LOG("VmPin %ld kB with a line registered", pinned);
	}
	ASSERT_EQ(0, port_fill(self->port, self->lines, self->line, tl,
			       &fence));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ(0, close(self->port));
	self->port = -1;
	/* The pin went with the port. */
	EXPECT_GT(pinned, vm_pin_kb());
	/* The fence no longer has a waiter; signalling it is harmless. */
	EXPECT_EQ(0, testfence_signal(tl, 1, 0));
	close(fence);
	close(tl);
}

/* The port outlives its fd while a dup or an in-flight call holds it. */
TEST_F(port, dup_keeps_port_alive)
{
	struct gpuar_record r;
	int dup_fd = dup(self->port);

	ASSERT_LE(0, dup_fd);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 6,
						       plan_poll())));
	close(self->port);
	self->port = dup_fd;
	word_store(self->lines, 1);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(6ULL, r.user_data);
}

/* A child that dies with everything pending: exit, then SIGKILL in read. */
static int child_with_pending(int tl, int block_in_read)
{
	__u64 *lines = lines_map(1);
	int port = t_port_open(GPUAR_PORT_CLOEXEC);
	struct gpuar_record r;
	int fence;
	__u32 id;

	if (!lines || port < 0 || line_register(port, lines, &id))
		return 1;
	if (port_fill(port, lines, id, tl, &fence))
		return 2;
	if (collect_records(port, &r, 1, RECORD_TIMEOUT_MS) != 1)
		return 3;
	if (block_in_read)
		read(port, &r, sizeof(r));	/* killed here */
	return 0;	/* exit with the port open */
}

TEST(process_exit_mid_wait)
{
	int tl = testfence_timeline();
	int status;
	pid_t pid;

	ASSERT_LE(0, tl);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_with_pending(tl, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, testfence_signal(tl, 1, 0));
	close(tl);
}

TEST(process_killed_in_read)
{
	int tl = testfence_timeline();
	int status;
	pid_t pid;

	ASSERT_LE(0, tl);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_with_pending(tl, 1));
	sleep_ms(50);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	EXPECT_EQ(0, testfence_signal(tl, 1, 0));
	close(tl);
}

/*
 * munmap under pending waits: the line dies, its waits end at once (each
 * with the dead line's record, in submission order), a cancel finds them
 * over, the page stays pinned until the line is unregistered, and nothing
 * reads freed memory.
 */
TEST_F(port, munmap_line_with_waits_pending)
{
	struct gpuar_record r[2];
	__u64 *other = lines_map(1);
	__u32 id;
	int i;

	ASSERT_NE(NULL, other);
	ASSERT_EQ(0, line_register(self->port, other, &id));
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(id, 0, 1, 1, 1,
					   plan_flag(PLAN_PARK_NS,
						     PLAN_BACKSTOP_NS))));
	ASSERT_EQ(1, submit_word(self->port, word_wait(id, 1, 1, 1, 2,
						       plan_poll())));
	lines_unmap(other, 1);
	/* New memory may land at the same address; it is not the line. */
	other = lines_map(1);
	ASSERT_NE(NULL, other);
	word_store(other, 1);
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ((__u64)i + 1, r[i].user_data);
		EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[i].outcome);
		EXPECT_EQ(-EFAULT, r[i].status);
	}
	EXPECT_EQ(-1, port_cancel(self->port, 2));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, line_unregister(self->port, id));
	lines_unmap(other, 1);
}

/* Cancel after the line died, its record unread: the wait is over. */
TEST_F(port, cancel_after_line_died_ealready)
{
	struct gpuar_record r;
	__u64 *other = lines_map(1);
	__u32 id;

	ASSERT_NE(NULL, other);
	ASSERT_EQ(0, line_register(self->port, other, &id));
	ASSERT_EQ(1, submit_word(self->port, word_wait(id, 0, 1, 1, 3,
						       plan_poll())));
	lines_unmap(other, 1);
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ(-1, port_cancel(self->port, 3));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(-EFAULT, r.status);
	EXPECT_EQ(0, line_unregister(self->port, id));
}

/* Close right after munmap, waits still pending. */
TEST_F(port, munmap_then_close)
{
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	lines_unmap(self->lines, 1);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	EXPECT_EQ(0, close(self->port));
	self->port = -1;
}

/* ------------------------------------------------------------ fork */

/* Child side; returns the number of the first check that failed. */
static int forked_child(int port, __u64 *lines, __u32 line, int tl)
{
	struct gpuar_port_stats st;
	struct gpuar_record r;
	__u32 id;
	int fence;

	/* Word waits and lines belong to the creator's address space. */
	if (line_register(port, line_at(lines, 1), &id) != -1 ||
	    errno != EPERM)
		return 1;
	if (submit_word(port, word_wait(line, 0, 1, 1, 9, plan_poll())) != -1 ||
	    errno != EPERM)
		return 2;
	/* Reading works from anywhere: the parent's immediate record. */
	if (collect_records(port, &r, 1, RECORD_TIMEOUT_MS) != 1 ||
	    r.user_data != 1)
		return 3;
	if (port_stats(port, &st) || st.submitted != 2)
		return 4;
	/* So do cancels and fence waits. */
	if (port_cancel(port, 2) != 1)
		return 5;
	if (collect_records(port, &r, 1, RECORD_TIMEOUT_MS) != 1 ||
	    r.outcome != GPUAR_OUTCOME_CANCELLED)
		return 6;
	fence = testfence_fence(tl, 1);
	if (fence < 0 || submit_fence(port, fence, 3) != 1)
		return 7;
	if (testfence_signal(tl, 1, 0) ||
	    collect_records(port, &r, 1, RECORD_TIMEOUT_MS) != 1 ||
	    r.user_data != 3 || r.source != GPUAR_SOURCE_FENCE)
		return 8;
	return 0;
}

TEST_F(port, fork_inherits_port)
{
	struct gpuar_word_wait w[2];
	struct gpuar_record r;
	int tl = testfence_timeline();
	int status;
	pid_t pid;

	ASSERT_LE(0, tl);
	word_store(self->lines, 1);
	w[0] = word_wait(self->line, 0, 1, 1, 1, plan_poll());	/* immediate */
	w[1] = word_wait(self->line, 1, 1, 1, 2, plan_poll());	/* pending */
	ASSERT_EQ(2, submit_words(self->port, w, 2, NULL));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(forked_child(self->port, self->lines, self->line, tl));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child check %d failed", WEXITSTATUS(status));
	}
	/* The parent, the creator, still submits; the child read the rest. */
	EXPECT_TRUE(port_quiet(self->port, 10));
	EXPECT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 10,
						       plan_poll())));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(10ULL, r.user_data);
	close(tl);
}

/* The parent closing its copy leaves the child's working. */
TEST_F(port, parent_closes_child_keeps_reading)
{
	int status, pipefd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct gpuar_record r;

		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) != 1)
			_exit(1);
		_exit(collect_records(self->port, &r, 1, RECORD_TIMEOUT_MS) == 1 &&
		      r.user_data == 1 ? 0 : 2);
	}
	close(pipefd[0]);
	/* The creator's mm still exists, so its word waits still run. */
	word_store(self->lines, 1);
	close(self->port);
	self->port = -1;
	ASSERT_EQ(1, write(pipefd[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pipefd[1]);
}

/* --------------------------------------------------- many threads */

#define SUBMITTERS 4
#define READERS 2
#define PER_SUBMITTER 400
#define ROUNDS 40

struct storm {
	int port;
	__u64 *lines;
	__u32 ids[8];
	int submitted[SUBMITTERS];
	int total_read;
	int cancelled;		/* sum of CANCEL's results */
	int cancelled_records;
	int errors;
	unsigned char seen[SUBMITTERS * PER_SUBMITTER];
	int done;		/* the final stores are made: drain and stop */
	pthread_mutex_t lock;
};

static __u64 storm_ud(int t, int i)
{
	return (__u64)t * PER_SUBMITTER + i;
}

struct storm_arg {
	struct storm *s;
	int t;
};

static void *storm_submitter(void *arg)
{
	struct storm_arg *a = arg;
	struct storm *s = a->s;
	struct gpuar_word_wait w[10];
	int i, k;

	for (i = 0; i < PER_SUBMITTER; i += 10) {
		for (k = 0; k < 10; k++) {
			int n = i + k;

			w[k] = word_wait(s->ids[n % 8], n % 8,
					 1 + (n * 7 + a->t) % ROUNDS, n % 3,
					 storm_ud(a->t, n),
					 n % 2 ? plan_poll() :
					 plan_flag(100000, 1000000000ULL));
		}
		if (submit_words(s->port, w, 10, NULL) != 10)
			__atomic_add_fetch(&s->errors, 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&s->submitted[a->t], 10,
					   __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *storm_device(void *arg)
{
	struct storm *s = arg;
	int r, l, k;

	for (r = 1; r <= ROUNDS; r++) {
		sleep_ms(2);
		for (l = 0; l < 8; l++)
			for (k = 0; k < 8; k++)
				word_store(line_at(s->lines, l) + k, r);
	}
	return NULL;
}

static void *storm_canceller(void *arg)
{
	struct storm *s = arg;
	int i, ret;

	for (i = 0; i < 300; i++) {
		ret = port_cancel(s->port, storm_ud(i % SUBMITTERS,
						    (i * 37) % PER_SUBMITTER));
		if (ret > 0)
			__atomic_add_fetch(&s->cancelled, ret,
					   __ATOMIC_RELAXED);
		else if (errno != ENOENT && errno != EALREADY)
			__atomic_add_fetch(&s->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *storm_reader(void *arg)
{
	struct storm *s = arg;
	struct gpuar_record r[32];
	int idle = 0;

	/*
	 * Read until every wait can have ended (the final stores are made)
	 * and then 2 s pass without a record: a quiet spell before that is
	 * only a slow kernel (KASAN under TCG), not the end of the storm.
	 */
	for (;;) {
		int n = read_records(s->port, r, 32, 50), i;

		if (n <= 0) {
			if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) &&
			    ++idle >= 40)
				break;
			continue;
		}
		idle = 0;
		pthread_mutex_lock(&s->lock);
		for (i = 0; i < n; i++) {
			__u64 ud = r[i].user_data;

			if (ud >= SUBMITTERS * PER_SUBMITTER) {
				s->errors++;
				continue;
			}
			s->seen[ud]++;
			s->total_read++;
			if (r[i].outcome == GPUAR_OUTCOME_CANCELLED)
				s->cancelled_records++;
		}
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

TEST_F_TIMEOUT(port, many_threads_submit_read_cancel, 120)
{
	pthread_t sub[SUBMITTERS], rd[READERS], dev, can;
	struct storm_arg args[SUBMITTERS];
	struct storm *s = calloc(1, sizeof(*s));
	int i, total = 0, dup = 0, missing = 0;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, fcntl(self->port, F_SETFL, O_NONBLOCK));
	s->port = self->port;
	s->lines = self->lines;
	pthread_mutex_init(&s->lock, NULL);
	s->ids[0] = self->line;
	for (i = 1; i < 8; i++) {
		ASSERT_EQ(0, line_register(self->port, line_at(self->lines, i),
					   &s->ids[i]));
	}
	for (i = 0; i < READERS; i++)
		ASSERT_EQ(0, pthread_create(&rd[i], NULL, storm_reader, s));
	ASSERT_EQ(0, pthread_create(&dev, NULL, storm_device, s));
	for (i = 0; i < SUBMITTERS; i++) {
		args[i].s = s;
		args[i].t = i;
		ASSERT_EQ(0, pthread_create(&sub[i], NULL, storm_submitter,
					    &args[i]));
	}
	ASSERT_EQ(0, pthread_create(&can, NULL, storm_canceller, s));
	for (i = 0; i < SUBMITTERS; i++)
		pthread_join(sub[i], NULL);
	pthread_join(can, NULL);
	pthread_join(dev, NULL);
	/* Whatever is still pending ends now. */
	for (i = 0; i < 8; i++) {
		int k;

		for (k = 0; k < 8; k++)
			word_store(line_at(self->lines, i) + k, ROUNDS);
	}
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);

	for (i = 0; i < SUBMITTERS; i++)
		total += s->submitted[i];
	for (i = 0; i < SUBMITTERS * PER_SUBMITTER; i++) {
		dup += s->seen[i] > 1;
		missing += s->seen[i] == 0;
	}
	EXPECT_EQ(0, s->errors);
	EXPECT_EQ(SUBMITTERS * PER_SUBMITTER, total);
	EXPECT_EQ(total, s->total_read);
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, missing);
	EXPECT_EQ(s->cancelled, s->cancelled_records);
	free(s);
}

TEST_HARNESS_MAIN
