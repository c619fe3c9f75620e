// SPDX-License-Identifier: MIT
/*
 * hip_probe: await a HIP stream through a gpuar port under each plan, on
 * the machine's real HIP runtime (the GPU bundle's run runs it where an AMD
 * GPU is present; make check runs it against the HIP test double).
 *
 * No kernel compiler is needed: the stream's "work" is a
 * hipStreamWaitValue64 on a gate word that a host thread stores 20 ms
 * later (the backend's reverse direction), and the awaited store follows
 * it on the stream. Per plan it reports the outcomes and the time from the
 * gate store to the reaped record (device wait-value wake-up + store +
 * gpuar wake-up). Exit 0 when every await completed without error.
 *
 *   hip_probe [--engine user|kernel] [--rounds N]
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gpuar/hip.h>

#define GATE_SLOT 7
#define WORK_SLOT 0
#define GATE_DELAY_NS 20000000ull

struct gate {
	uint64_t *word;
	uint64_t value;
	uint64_t stored_ns;
};

static void *gate_release(void *arg)
{
	struct gate *g = arg;
	struct timespec ts = { 0, (long)GATE_DELAY_NS };

	nanosleep(&ts, NULL);
	g->stored_ns = gpuar_now_ns();
	__atomic_store_n(g->word, g->value, __ATOMIC_RELEASE);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const plans[] = {
		"block", "poll", "flag:park_us=50,backstop_us=100000",
		("flag:park_us=50,backstop_us=100000+predict:margin_us=150,"
		 "min_sleep_us=20,max_sleep_us=50000,window=8"),
	};
	struct gpuar_port_options po = { .engine = GPUAR_ENGINE_USER,
					 .flags = GPUAR_PORT_STRICT };
	typedef unsigned int (*create_fn)(void **, unsigned int);
	typedef unsigned int (*destroy_fn)(void *);
	struct gpuar_error d;
	struct gpuar_hip *hip;
	struct gpuar_port *port;
	struct gpuar_vendor_line *line;
	create_fn create;
	destroy_fn destroy;
	void *dl, *stream = NULL;
	int rounds = 5, failed = 0;
	uint64_t gate = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--engine") && i + 1 < argc) {
			i++;
			po.engine = !strcmp(argv[i], "kernel") ? GPUAR_ENGINE_KERNEL :
								 GPUAR_ENGINE_USER;
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--engine user|kernel] [--rounds N]\n",
				argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 1000)
		rounds = 5;
	if (gpuar_hip_open(&hip, 0, &d)) {
		fprintf(stderr, "hip_probe: %s\n", d.message);
		return 1;
	}
	printf("runtime: %s (version %d)\n", gpuar_hip_library(hip),
	       gpuar_hip_driver_version(hip));
	if (gpuar_port_open(&port, &po, &d)) {
		fprintf(stderr, "hip_probe: %s\n", d.message);
		return 1;
	}
	printf("engine: %s\n", gpuar_engine_name(gpuar_port_engine(port)));
	if (gpuar_hip_line_alloc(hip, port, &line, &d)) {
		fprintf(stderr, "hip_probe: %s\n", d.message);
		return 1;
	}
	/* The backend loaded the runtime; this names the same instance. */
	dl = dlopen(gpuar_hip_library(hip), RTLD_NOW | RTLD_NOLOAD);
	create = dl ? (create_fn)dlsym(dl, "hipStreamCreateWithFlags") : NULL;
	destroy = dl ? (destroy_fn)dlsym(dl, "hipStreamDestroy") : NULL;
	if (!create || !destroy || create(&stream, 1)) {
		fprintf(stderr, "hip_probe: cannot create a stream\n");
		return 1;
	}

	printf("strategy                                  rounds immediate exact late errors p50_us max_us\n");
	for (size_t p = 0; p < sizeof(plans) / sizeof(plans[0]); p++) {
		struct gpuar_plan plan;
		uint64_t lat[1000], outcomes[GPUAR_OUTCOME_COUNT] = { 0 };
		int errors = 0;

		if (gpuar_plan_from_text(plans[p], &plan, &d)) {
			fprintf(stderr, "hip_probe: %s\n", d.message);
			return 1;
		}
		for (int r = 0; r < rounds; r++) {
			struct gate g = { &gpuar_vendor_line_words(line)[GATE_SLOT],
					  ++gate, 0 };
			struct gpuar_vendor_completion c;
			pthread_t t;
			int n;

			if (gpuar_hip_stream_wait_word(line, GATE_SLOT, stream,
						       g.value, &d)) {
				fprintf(stderr, "hip_probe: %s\n", d.message);
				return 1;
			}
			pthread_create(&t, NULL, gate_release, &g);
			if (gpuar_hip_port_await(line, WORK_SLOT, stream, &plan, p,
					    (uint64_t)r, NULL, &d)) {
				fprintf(stderr, "hip_probe: %s: %s\n", plans[p],
					d.message);
				errors++;
				pthread_join(t, NULL);
				continue;
			}
			n = gpuar_hip_port_reap(hip, port, &c, 1, 10000000000LL, &d);
			pthread_join(t, NULL);
			if (n != 1 || c.record.status) {
				fprintf(stderr, "hip_probe: %s: reap %d status %d %s\n",
					plans[p], n, n == 1 ? c.record.status : 0,
					d.message);
				errors++;
				continue;
			}
			outcomes[c.record.outcome]++;
			lat[r - errors] = c.record.complete_ns > g.stored_ns ?
					  c.record.complete_ns - g.stored_ns : 0;
		}
		failed |= errors != 0;
		if (rounds - errors > 0)
			qsort(lat, (size_t)(rounds - errors), sizeof(lat[0]), cmp_u64);
		printf("%-41s %6d %9llu %5llu %4llu %6d %6.1f %6.1f\n", plans[p],
		       rounds, (unsigned long long)outcomes[GPUAR_OUTCOME_IMMEDIATE],
		       (unsigned long long)outcomes[GPUAR_OUTCOME_EXACT],
		       (unsigned long long)outcomes[GPUAR_OUTCOME_LATE], errors,
		       rounds > errors ? lat[(rounds - errors) / 2] / 1e3 : 0.0,
		       rounds > errors ? lat[rounds - errors - 1] / 1e3 : 0.0);
	}
	if (gpuar_hip_line_free(line, 5000000000ull, &d)) {
		fprintf(stderr, "hip_probe: %s\n", d.message);
		failed = 1;
	}
	destroy(stream);
	gpuar_port_close(port);
	gpuar_hip_close(hip);
	return failed;
}
