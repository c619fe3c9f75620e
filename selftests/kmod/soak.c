// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * soak: many completions through several ports, with an exact account.
 * Word waits a device thread completes, fence waits on test fences, and
 * cancels racing both, on PORTS ports at once; every wait carries a fresh
 * user_data, and every record read is checked off. At the end every
 * fence is signalled and every port drained, and
 *
 *   soak: <n> completions, lost <l>, duplicated <d>
 *
 * is printed: lost counts committed waits without a record, duplicated
 * records of a wait already read (or of none). The exit status is 0 only
 * for lost 0, duplicated 0. Not part of the suites: make soak runs it in
 * a VM (COMPLETIONS=<n>, default 10^7).
 *
 *   soak [--completions N] [--seed N]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "port_fixture.h"
#include "testfence_fixture.h"

#define PORTS 4
#define BATCH 8

static __u64 *mem;		/* one line per port */
static volatile int stop;

/* The device: every word of every line counts up, all the time. */
static void *device_run(void *arg)
{
	(void)arg;
	while (!stop) {
		int i;

		for (i = 0; i < PORTS * 8; i++)
			__atomic_fetch_add(&mem[i], 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static unsigned char *seen;	/* per user_data: 1 committed, 2 read */
static uint64_t next_id = 1, max_ids, completions, lost, duplicated;

static void account(const struct gpuar_record *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u64 id = r[i].user_data;

		if (id >= max_ids || seen[id] != 1) {
			duplicated++;
			continue;
		}
		seen[id] = 2;
		completions++;
	}
}

static void drain_port(int port, int timeout_ms)
{
	struct gpuar_record r[64];
	ssize_t got;

	while (fd_readable(port, timeout_ms) == 1) {
		got = read(port, r, sizeof(r));
		if (got <= 0)
			break;
		account(r, (int)(got / sizeof(r[0])));
		timeout_ms = 0;
	}
}

int main(int argc, char **argv)
{
	uint64_t want = 10000000, round = 0, id;
	const char *env = getenv("GPUAR_SOAK_COMPLETIONS");
	int ports[PORTS], tl, i;
	__u64 seqno = 0;
	__u32 line[PORTS];
	pthread_t dev;

	if (env && *env)
		want = strtoull(env, NULL, 0);
	for (i = 1; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--completions"))
			want = strtoull(argv[i + 1], NULL, 0);
	printf("1..1\n");
	max_ids = want + want / 4 + 1024;
	seen = calloc(max_ids, 1);
	mem = lines_map(1);
	tl = testfence_timeline();
	if (!seen || !mem || tl < 0) {
		printf("not ok 1 soak # setup\n");
		return 1;
	}
	for (i = 0; i < PORTS; i++) {
		ports[i] = t_port_open(GPUAR_PORT_CLOEXEC | GPUAR_PORT_NONBLOCK);
		if (ports[i] < 0 ||
		    line_register(ports[i], line_at(mem, i), &line[i])) {
			printf("not ok 1 soak # port %d\n", i);
			return 1;
		}
	}
	pthread_create(&dev, NULL, device_run, NULL);

	while (completions < want && next_id + PORTS * (BATCH + 1) < max_ids) {
		int p = (int)(round++ % PORTS);
		struct gpuar_word_wait w[BATCH];

		for (i = 0; i < BATCH; i++) {
			__u64 *word = &line_at(mem, p)[i];

			w[i] = word_wait(line[p], i,
					 __atomic_load_n(word, __ATOMIC_ACQUIRE) +
					 1 + i * 8, 1 + i, next_id + i,
					 plan_flag(10000, 1000000));
		}
		if (submit_words(ports[p], w, BATCH, NULL) == BATCH) {
			for (i = 0; i < BATCH; i++)
				seen[next_id + i] = 1;
			next_id += BATCH;
		}
		if (round % 4 == 0) {
			int f = testfence_fence(tl, ++seqno);

			if (f >= 0 && submit_fence(ports[p], f, next_id) == 1)
				seen[next_id++] = 1;
			if (f >= 0)
				close(f);
			testfence_signal(tl, seqno, 0);
		}
		if (round % 16 == 0)	/* races the device: either record */
			port_cancel(ports[p], next_id - 1 - round % BATCH);
		drain_port(ports[p], 0);
	}
	stop = 1;
	pthread_join(dev, NULL);
	testfence_signal(tl, seqno, 0);
	sleep_ms(1500);	/* past every word wait's 1 s backstop */
	for (i = 0; i < PORTS; i++)
		drain_port(ports[i], 500);
	for (id = 1; id < next_id; id++)
		if (seen[id] == 1)
			lost++;
	printf("soak: %llu completions, lost %llu, duplicated %llu\n",
	       (unsigned long long)completions, (unsigned long long)lost,
	       (unsigned long long)duplicated);
	printf("%s 1 soak\n", lost || duplicated ? "not ok" : "ok");
	return lost || duplicated ? 1 : 0;
}
