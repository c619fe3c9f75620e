// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the user engine's entry points: the input is a
 * script of calls (submit word and fence waits, cancel, reap, line alloc
 * and free, process, stats) on a user-engine port with a small wait limit,
 * with the soft backend's producer thread storing into the lines' words
 * as the device would, and the caller storing too. On any script: no
 * call crashes, leaks or returns an error outside its documented set;
 * every record is a version 1 record of a known outcome whose user_data
 * was submitted; each accepted wait ends in exactly one record (none
 * more, none lost: closing the port after a final drain leaves none
 * unaccounted); the port's pending plus queued count is the harness's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include <gpuar/gpuar.h>

#include "plan_text.h"	/* fuzz_check.h's grammar helpers need it */
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LINES 3
#define MAX_WAITS 12
#define USER_DATAS 8	/* user_data 0..7: cancels hit several waits */
#define OPS_MAX 48
#define REAP_TIMEOUT_MAX_NS 200000

/* The plans a script picks from, some invalid (the engine refuses them). */
static const char *const plan_texts[] = {
	"poll",
	"flag:park_us=10,backstop_us=2000",
	"flag:park_us=0,backstop_us=0",
	"flag:park_us=50,backstop_us=300+predict:margin_us=10,min_sleep_us=1,max_sleep_us=500,window=4",
	"flag:park_us=20,backstop_us=1000+predict:margin_us=0,min_sleep_us=0,max_sleep_us=100,window=1",
	"block",
};
#define PLANS (sizeof(plan_texts) / sizeof(plan_texts[0]))

struct script {
	const uint8_t *p, *end;
};

static uint8_t next8(struct script *s)
{
	return s->p < s->end ? *s->p++ : 0;
}

struct harness {
	struct gpuar_port *port;
	struct gpuar_soft_producer *prod;
	struct gpuar_line *line[LINES];
	bool device_owned[LINES];	/* the producer may still store into it */
	struct gpuar_plan plan[PLANS];
	bool plan_ok[PLANS];
	int64_t outstanding[USER_DATAS];	/* accepted - records, per user_data */
	int64_t total;
};

static void take(struct harness *h, const struct gpuar_record *r, int n)
{
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(r[i].version == GPUAR_RECORD_VERSION_1);
		FUZZ_CHECK(r[i].outcome >= GPUAR_OUTCOME_IMMEDIATE &&
			   r[i].outcome <= GPUAR_OUTCOME_CANCELLED);
		FUZZ_CHECK(r[i].user_data < USER_DATAS);
		FUZZ_CHECK(h->outstanding[r[i].user_data] > 0);
		h->outstanding[r[i].user_data]--;
		h->total--;
	}
}

static uint64_t *word_of(struct harness *h, uint8_t line, uint8_t slot)
{
	return &gpuar_line_words(h->line[line % LINES])[slot % GPUAR_LINE_SLOTS];
}

static void op_submit(struct harness *h, struct script *s)
{
	struct gpuar_word_wait w[4];
	uint32_t n = 1 + next8(s) % 4, idx = 99;
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t line = next8(s), bits = next8(s), pl = next8(s) % PLANS;

		w[i] = (struct gpuar_word_wait){
			.user_data = next8(s) % USER_DATAS,
			.target = next8(s) % 6,
			.point = next8(s) % 3,
			.slot = bits & 0x40 ? 8 + (bits & 3) : bits & 7,
			.line = h->line[line % LINES] && !(line & 0x80) ?
				gpuar_line_id(h->line[line % LINES]) : line,
			.flags = bits & 0x20 ? 1 : 0,
		};
		if (h->plan_ok[pl])
			w[i].plan = h->plan[pl];
		else
			w[i].plan.park = 0xff;	/* an unknown park kind */
		if (bits & 0x10)
			w[i].start_ns = gpuar_now_ns() - (bits & 0x08 ? 1000000 : 0);
		if ((bits & 0x18) == 0x18)
			w[i].start_ns = gpuar_now_ns() + 1000000000ULL;
	}
	ret = gpuar_submit_word_waits(h->port, w, n, &idx);
	if (ret >= 0) {
		FUZZ_CHECK((uint32_t)ret == n && idx == 0);
		for (uint32_t i = 0; i < n; i++) {
			h->outstanding[w[i].user_data]++;
			h->total++;
		}
		return;
	}
	FUZZ_CHECK(ret == -EINVAL || ret == -ENOENT || ret == -ENOSPC ||
		   ret == -E2BIG);
	FUZZ_CHECK(idx <= n);
}

/* Fence entries that are never sync_files: refused whole, as documented. */
static void op_fence(struct harness *h, struct script *s)
{
	struct gpuar_fence_wait f = { .user_data = next8(s) % USER_DATAS };
	int fds[2] = { -1, -1 }, ret;
	uint8_t kind = next8(s) % 3;
	uint32_t idx;

	if (kind == 1 && pipe2(fds, O_CLOEXEC) == 0)
		f.fd = fds[0];
	else
		f.fd = kind == 2 ? 1000 : -1;
	f.flags = next8(s) & 1;
	ret = gpuar_submit_fence_waits(h->port, &f, 1, &idx);
	FUZZ_CHECK(ret == -EBADF || ret == -EINVAL);
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
}

static void op_reap(struct harness *h, struct script *s)
{
	struct gpuar_record r[4];
	uint32_t max = 1 + next8(s) % 4;
	int64_t timeout = (int64_t)(next8(s) % 4) * (REAP_TIMEOUT_MAX_NS / 3);
	int n = gpuar_port_reap(h->port, r, max, timeout);

	if (n > 0) {
		FUZZ_CHECK((uint32_t)n <= max);
		take(h, r, n);
		return;
	}
	FUZZ_CHECK(n == -EAGAIN || n == -ETIME || n == -EINTR);
}

static void op_cancel(struct harness *h, struct script *s)
{
	uint8_t ud = next8(s) % USER_DATAS;
	int n = gpuar_cancel(h->port, ud);

	FUZZ_CHECK(n > 0 || n == -ENOENT || n == -EALREADY);
	FUZZ_CHECK(n <= h->outstanding[ud]);
}

static void op_store(struct harness *h, struct script *s)
{
	uint8_t line = next8(s), slot = next8(s), value = next8(s) % 6;
	uint8_t delay = next8(s);

	if (!h->line[line % LINES])
		return;
	if (delay & 0x80) {
		__atomic_store_n(word_of(h, line, slot), value, __ATOMIC_RELEASE);
		return;
	}
	FUZZ_CHECK(gpuar_soft_store_after(h->prod, word_of(h, line, slot), value,
					  (uint64_t)delay * 1000) == 0);
	h->device_owned[line % LINES] = true;
}

static void op_line(struct harness *h, struct script *s)
{
	uint8_t i = next8(s) % LINES;
	int ret;

	if (!h->line[i]) {
		ret = gpuar_line_alloc(h->port, &h->line[i]);
		FUZZ_CHECK(ret == 0 || ret == -ENOSPC);
		return;
	}
	/* A line the producer may still store into stays: it is the device's. */
	if (h->device_owned[i])
		return;
	ret = gpuar_line_free(h->port, h->line[i]);
	FUZZ_CHECK(ret == 0 || ret == -EBUSY);
	if (ret == 0)
		h->line[i] = NULL;
}

static void op_look(struct harness *h, struct script *s)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_point_stats ps = { .size = sizeof(ps), .point = next8(s) % 4 };
	int n = gpuar_port_process(h->port);

	FUZZ_CHECK(n >= 0);
	gpuar_port_next_check_ns(h->port);
	FUZZ_CHECK(gpuar_port_stats(h->port, &st) == 0);
	FUZZ_CHECK((int64_t)(st.pending + st.queued) == h->total);
	n = gpuar_point_stats(h->port, &ps);
	FUZZ_CHECK(n == 0 || n == -ENOENT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.max_waits = MAX_WAITS,
		.max_lines = LINES - 1,
		.max_points = 2,
		.poll_backstop_ns = 500000,
	};
	struct script s = { data, data + size };
	static struct harness h;
	struct gpuar_record r[MAX_WAITS];
	int n;

	memset(&h, 0, sizeof(h));
	if (size)
		o.flags = data[0] & 1 ? GPUAR_PORT_WATCHER : 0;
	if (size > 1)
		o.busy_read_us = data[1] & 1 ? GPUAR_BUSY_READ_OFF : 200;
	s.p += size > 2 ? 2 : size;
	for (size_t i = 0; i < PLANS; i++)
		h.plan_ok[i] = gpuar_plan_from_text(plan_texts[i], &h.plan[i],
						    NULL) == 0;
	FUZZ_CHECK(gpuar_port_open(&h.port, &o, NULL) == 0);
	FUZZ_CHECK(gpuar_soft_producer_new(&h.prod) == 0);
	FUZZ_CHECK(gpuar_line_alloc(h.port, &h.line[0]) == 0);
	for (int op = 0; op < OPS_MAX && s.p < s.end; op++) {
		switch (next8(&s) % 8) {
		case 0:
		case 1:
			op_submit(&h, &s);
			break;
		case 2:
			op_reap(&h, &s);
			break;
		case 3:
			op_cancel(&h, &s);
			break;
		case 4:
			op_store(&h, &s);
			break;
		case 5:
			op_line(&h, &s);
			break;
		case 6:
			op_fence(&h, &s);
			break;
		default:
			op_look(&h, &s);
			break;
		}
	}
	/* Every accepted wait ends: cancel what is left, and drain. */
	for (uint8_t ud = 0; ud < USER_DATAS; ud++)
		gpuar_cancel(h.port, ud);
	while ((n = gpuar_port_reap(h.port, r, MAX_WAITS, 0)) > 0)
		take(&h, r, n);
	FUZZ_CHECK(n == -EAGAIN);
	FUZZ_CHECK(h.total == 0);
	/* The producer stops first: its stores must not outlive the lines. */
	gpuar_soft_producer_free(h.prod);
	gpuar_port_close(h.port);
	return 0;
}
