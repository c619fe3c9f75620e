// SPDX-License-Identifier: MIT
/* gpuar-bench --pending N: see bench_scale.h. */
#include "bench_scale.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gpuar/gpuar.h>

#include "bench_procstat.h"

#define NS 1000000000ULL
#define REAP_BATCH 512
/* The producer stores at most this often (its sleeps, not a spin). */
#define PRODUCER_TICK_NS 1000000ULL
/* A wait's lifetime N / rate stays under the 1 s backstop by this much. */
#define LIFETIME_MAX_NS (NS / 2)

struct producer {
	uint64_t *word;
	uint64_t rate, t0;
	volatile bool stop;
	uint64_t cpu_ns;	/* its own CPU, at the end */
	pthread_t thread;
};

static uint64_t cpu_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Advance the word to rate * elapsed every tick: a steady stream. */
static void *producer_main(void *arg)
{
	struct producer *pr = arg;
	uint64_t next = pr->t0;

	while (!pr->stop) {
		struct timespec ts;

		next += PRODUCER_TICK_NS;
		ts.tv_sec = (time_t)(next / NS);
		ts.tv_nsec = (long)(next % NS);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		__atomic_store_n(pr->word, (gpuar_now_ns() - pr->t0) / 1000 *
				 pr->rate / 1000000, __ATOMIC_RELEASE);
	}
	pr->cpu_ns = cpu_clock(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* Machine busy time from /proc/stat, in ns (0 where unreadable). */
static uint64_t machine_busy_ns(unsigned int *cpus)
{
	struct bench_procstat s;
	long hz = sysconf(_SC_CLK_TCK);

	if (bench_procstat_read(&s) || hz <= 0)
		return 0;
	*cpus = s.cpus;
	return (s.user + s.nice + s.system + s.irq + s.softirq + s.steal) *
	       (NS / (uint64_t)hz);
}

struct scale_result {
	uint64_t records, timeouts, wall_ns, cpu_ns, machine_ns, checks;
	unsigned int cpus;
};

static struct gpuar_word_wait scale_wait(const struct gpuar_line *l,
					 const struct gpuar_plan *plan,
					 uint64_t target, uint64_t start_ns)
{
	struct gpuar_word_wait w = {
		.user_data = target,
		.target = target,
		.point = 1,
		.line = gpuar_line_id(l),
		.plan = *plan,
		.start_ns = start_ns,
	};
	return w;
}

/* The kernel port's max_waits is the module's parameter: raise it for N. */
static void kernel_max_waits(uint32_t want, uint64_t *saved)
{
	FILE *f = fopen("/sys/module/gpuar/parameters/max_waits", "r+");
	uint64_t cur = 0;

	*saved = 0;
	if (!f)
		return;
	if (fscanf(f, "%" SCNu64, &cur) == 1 && cur < want) {
		rewind(f);
		if (fprintf(f, "%u", want) > 0)
			*saved = cur;
	}
	fclose(f);
}

static void kernel_max_waits_restore(uint64_t saved)
{
	FILE *f;

	if (!saved)
		return;
	f = fopen("/sys/module/gpuar/parameters/max_waits", "w");
	if (f) {
		fprintf(f, "%" PRIu64, saved);
		fclose(f);
	}
}

static int scale_run(const struct bench_scale_config *cfg, enum gpuar_engine engine,
		     const struct gpuar_plan *plan, uint64_t rate,
		     struct scale_result *res, char *why, size_t whylen)
{
	uint32_t n = cfg->pending, cap = n + 2 * REAP_BATCH;
	struct gpuar_port_options o = {
		.engine = engine,
		.flags = GPUAR_PORT_STRICT,
		.max_waits = cap,
		.device_path = cfg->device_path,
		/*
		 * The engine's cost, not a reaper's chosen spin: busy-read
		 * trades CPU for latency on purpose (the module's parameter
		 * busy_read_us=0 does the same for the kernel engine).
		 */
		.busy_read_us = GPUAR_BUSY_READ_OFF,
	};
	struct gpuar_word_wait *batch = calloc(n > REAP_BATCH ? n : REAP_BATCH,
					       sizeof(*batch));
	struct gpuar_record recs[REAP_BATCH];
	uint64_t lifetime = n * NS / rate, t_measure, t_end, cpu0 = 0, m0 = 0;
	uint64_t saved_param = 0;
	struct producer pr = { 0 };
	struct gpuar_port *p = NULL;
	struct gpuar_line *l;
	struct gpuar_error err;
	bool measuring = false;
	sigset_t all, old;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (!batch)
		return -ENOMEM;
	if (engine == GPUAR_ENGINE_KERNEL)
		kernel_max_waits(cap, &saved_param);
	ret = gpuar_port_open(&p, &o, &err);
	if (ret) {
		snprintf(why, whylen, "%s", err.message);
		goto out;
	}
	ret = gpuar_line_alloc(p, &l);
	if (ret) {
		snprintf(why, whylen, "line: %s", strerror(-ret));
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		batch[i] = scale_wait(l, plan, i + 1, 0);
	ret = gpuar_submit_word_waits(p, batch, n, NULL);
	if (ret < 0) {
		snprintf(why, whylen, "submit %u: %s", n, strerror(-ret));
		goto out;
	}
	pr.word = &gpuar_line_words(l)[0];
	pr.rate = rate;
	pr.t0 = gpuar_now_ns();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&pr.thread, NULL, producer_main, &pr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(why, whylen, "producer thread: %s", strerror(-ret));
		goto out;
	}
	/* Warm up for two lifetimes: the estimator learns, the stream settles. */
	t_measure = pr.t0 + 2 * lifetime + NS / 10;
	t_end = t_measure + (uint64_t)cfg->seconds * NS;
	for (;;) {
		uint64_t now = gpuar_now_ns();
		int got, k = 0;

		if (!measuring && now >= t_measure) {
			struct gpuar_port_stats st = { .size = sizeof(st) };

			measuring = true;
			if (gpuar_port_stats(p, &st) == 0)
				res->checks = st.checks;
			cpu0 = cpu_clock(CLOCK_PROCESS_CPUTIME_ID);
			m0 = machine_busy_ns(&res->cpus);
			res->records = res->timeouts = 0;
			res->wall_ns = now;
		}
		if (now >= t_end)
			break;
		got = gpuar_port_reap(p, recs, REAP_BATCH, 100000000);
		if (got == -ETIME || got == -EINTR)
			continue;
		if (got < 0) {
			ret = got;
			snprintf(why, whylen, "reap: %s", strerror(-got));
			break;
		}
		for (int i = 0; i < got; i++) {
			if (recs[i].outcome == GPUAR_OUTCOME_TIMEOUT) {
				/* Late (the machine is loaded): resubmit as it was. */
				res->timeouts++;
				batch[k++] = scale_wait(l, plan, recs[i].user_data,
							recs[i].start_ns);
				continue;
			}
			res->records++;
			/*
			 * The next job starts as this one completes (a
			 * pipeline), not when the reaper got round to it: its
			 * predicted time then does not carry the reaper's lag.
			 */
			batch[k++] = scale_wait(l, plan, recs[i].user_data + n,
						recs[i].complete_ns);
		}
		ret = gpuar_submit_word_waits(p, batch, (uint32_t)k, NULL);
		if (ret < 0) {
			snprintf(why, whylen, "resubmit: %s", strerror(-ret));
			break;
		}
		ret = 0;
	}
	if (measuring) {
		struct gpuar_port_stats st = { .size = sizeof(st) };
		uint32_t cpus = 0;

		if (gpuar_port_stats(p, &st) == 0)
			res->checks = st.checks - res->checks;
		res->wall_ns = gpuar_now_ns() - res->wall_ns;
		res->cpu_ns = cpu_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
		res->machine_ns = machine_busy_ns(&cpus) - m0;
	}
	pr.stop = true;
	pthread_join(pr.thread, NULL);
	/* The producer's own time is not the engine's. */
	if (measuring) {
		uint64_t share = pr.cpu_ns * (uint64_t)cfg->seconds * NS /
				 (gpuar_now_ns() - pr.t0);

		res->cpu_ns = res->cpu_ns > share ? res->cpu_ns - share : 0;
		res->machine_ns = res->machine_ns > share ? res->machine_ns - share : 0;
	}
out:
	gpuar_port_close(p);
	kernel_max_waits_restore(saved_param);
	free(batch);
	return ret;
}

int bench_scale_main(const struct bench_scale_config *cfg, FILE *out)
{
	const enum gpuar_engine engines[] = { GPUAR_ENGINE_USER, GPUAR_ENGINE_KERNEL };
	uint64_t rate = cfg->rate;
	struct gpuar_plan plan;
	struct gpuar_error err;
	int status = 0;

	if (gpuar_plan_from_text(cfg->plan, &plan, &err)) {
		fprintf(stderr, "gpuar-bench: --plan: %s\n", err.message);
		return 2;
	}
	if (!rate)
		rate = 2ULL * cfg->pending;
	if ((uint64_t)cfg->pending * NS / rate > LIFETIME_MAX_NS) {
		fprintf(stderr, "gpuar-bench: --pending %u at --rate %" PRIu64
			": each wait would live past %llu ms, near the 1 s backstop;"
			" raise --rate to at least %llu\n", cfg->pending, rate,
			LIFETIME_MAX_NS / 1000000, 2ULL * cfg->pending);
		return 2;
	}
	fprintf(out, "%-6s %8s %9s %10s %8s %10s %12s %14s %13s  %s\n", "engine",
		"pending", "rate/s", "records/s", "timeouts", "checks/rec",
		"cpu/rec(us)", "machine/rec(us)", "cpu/check(us)", "plan");
	for (size_t i = 0; i < 2; i++) {
		const char *name = gpuar_engine_name(engines[i]);
		struct scale_result r;
		char why[GPUAR_MESSAGE_MAX] = "";
		double recs;
		int ret;

		if (cfg->engines && strcmp(cfg->engines, name))
			continue;
		ret = scale_run(cfg, engines[i], &plan, rate, &r, why, sizeof(why));
		if (ret && engines[i] == GPUAR_ENGINE_KERNEL && !cfg->engines &&
		    ret == -ENOENT) {
			fprintf(out, "%-6s skipped: %s\n", name, why);
			continue;
		}
		if (ret) {
			fprintf(out, "%-6s failed: %s\n", name, why);
			status = 1;
			continue;
		}
		recs = r.records ? (double)r.records : 1.0;
		fprintf(out, "%-6s %8u %9" PRIu64 " %10.0f %8" PRIu64 " %10.2f %12.2f %14.2f %13.3f  %s\n",
			name, cfg->pending, rate,
			(double)r.records * NS / (double)r.wall_ns, r.timeouts,
			(double)r.checks / recs,
			(double)r.cpu_ns / recs / 1000.0,
			(double)r.machine_ns / recs / 1000.0,
			(double)r.cpu_ns / (r.checks ? (double)r.checks : 1.0) / 1000.0,
			cfg->plan);
	}
	return status;
}
