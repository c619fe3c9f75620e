// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The kill storm: 1,000 processes, each with its own port, SIGKILLed in
 * the middle of using it:
 *
 *   blocked in read() on a pending word wait
 *   busy-reading (a predicting wait whose early wake has come)
 *   with pending fence waits, asleep
 *   with lines registered while another thread munmaps and remaps the
 *   line page under the pending waits
 *   after exec (the port fd kept across it) with waits pending
 *   a forked child holding the parent's port, both killed
 *
 * Afterwards no port is left (debugfs gpuar/ports lists none, the module's
 * reference count is back where it was), so every pin, fence reference and
 * timer went with them; the VM runner then fails the run on any kernel
 * report (KASAN, lockdep, kmemleak on the debug kernel).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "port_fixture.h"
#include "testfence_fixture.h"

#define STORM 1000
#define WAVE 50		/* processes alive at once: the guest has 1 GiB */

enum storm_kind { BLOCKED_READ, BUSY_READ, FENCES, MUNMAP, EXEC, FORKED,
		  STORM_KINDS };

/* Ports debugfs lists ("port <id>" lines), or -1 without debugfs. */
static int ports_listed(void)
{
	FILE *f = fopen("/sys/kernel/debug/gpuar/ports", "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "port ", 5);
	fclose(f);
	return n;
}

static void *remap_loop(void *arg)
{
	char *page = arg;
	long size = sysconf(_SC_PAGESIZE);

	for (;;) {
		munmap(page, size);
		mmap(page, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	}
	return NULL;
}

/* The child: set up @kind, say so on @ready, then block until killed. */
static void storm_child(enum storm_kind kind, int ready, int timeline)
{
	int port = t_port_open(0);
	__u64 *lines = lines_map(1);
	struct gpuar_record r;
	struct gpuar_plan plan = plan_poll();
	pthread_t t;
	__u32 id;
	char c = 1;
	int i;

	if (port < 0 || !lines || line_register(port, lines, &id))
		_exit(1);
	if (kind == BUSY_READ) {
		/* Train the point (a 2 ms completion), then predict on it. */
		plan = plan_predict(1);
		word_store(lines, 1);
		if (submit_word(port, word_wait(id, 0, 2, 7, 0, plan)) != 1)
			_exit(2);
		sleep_ms(2);
		word_store(lines, 2);
		if (read(port, &r, sizeof(r)) != sizeof(r))
			_exit(3);
	}
	for (i = 0; i < 4; i++)
		if (submit_word(port, word_wait(id, i, 100, 7, i, plan)) != 1)
			_exit(4);
	if (kind == FENCES)
		for (i = 0; i < 4; i++) {
			int f = testfence_fence(timeline, 1000000 + i);

			if (f < 0 || submit_fence(port, f, 100 + i) != 1)
				_exit(5);
		}
	if (kind == MUNMAP &&
	    pthread_create(&t, NULL, remap_loop, lines))
		_exit(6);
	if (kind == FORKED) {
		pid_t pid = fork();

		if (pid < 0)
			_exit(7);
		if (!pid) {
			/* Holds the port too; dies with its parent. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
	}
	if (write(ready, &c, 1) != 1)
		_exit(8);
	if (kind == EXEC) {
		/* The port fd is not close-on-exec: it outlives the image. */
		execl("/bin/sleep", "sleep", "600", (char *)NULL);
		_exit(9);
	}
	if (kind == FENCES || kind == FORKED) {
		for (;;)
			pause();
	}
	for (;;)
		read(port, &r, sizeof(r));	/* blocks: target 100 never comes */
}

FIXTURE(storm)
{
	int unused;
};

FIXTURE_SETUP(storm)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(storm)
{
}

TEST_F_TIMEOUT(storm, thousand_processes_killed_mid_use, 600)
{
	pid_t pids[WAVE];
	long refs;
	int timeline, done, i, n, failed = 0;

	refs = module_refcnt("gpuar");
	ASSERT_LE(0, refs);
	timeline = testfence_timeline();
	ASSERT_LE(0, timeline);
	for (done = 0; done < STORM; done += n) {
		int ready[2];
		char buf[WAVE];
		ssize_t got = 0;

		n = STORM - done < WAVE ? STORM - done : WAVE;
		ASSERT_EQ(0, pipe(ready));
		for (i = 0; i < n; i++) {
			pids[i] = fork();
			ASSERT_LE(0, pids[i]);
			if (!pids[i]) {
				close(ready[0]);
				storm_child((enum storm_kind)((done + i) %
							      STORM_KINDS),
					    ready[1], timeline);
			}
		}
		close(ready[1]);
		while (got < n) {
			ssize_t k = read(ready[0], buf, sizeof(buf));

			if (k <= 0)
				break;
			got += k;
		}
		close(ready[0]);
		EXPECT_EQ(n, got);
		sleep_ms(5);	/* into read(), the spin, the remap loop */
		for (i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		for (i = 0; i < n; i++) {
			int status;

			ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
			if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
				failed++;
		}
	}
	EXPECT_EQ(0, failed);
	/*
	 * A FORKED child's own child dies by its parent-death signal, an
	 * orphan that init reaps: wait for the count to settle.
	 */
	close(timeline);
	for (i = 0; i < 200 && module_refcnt("gpuar") != refs; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sleep_ms(10);
	}
	EXPECT_EQ(refs, module_refcnt("gpuar"));
	n = ports_listed();
	if (n >= 0)
		EXPECT_EQ(0, n);
}

TEST_HARNESS_MAIN
