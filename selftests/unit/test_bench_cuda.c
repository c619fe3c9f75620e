// SPDX-License-Identifier: MIT
/*
 * gpuar-bench --device cuda against the CUDA test double
 * ($(BUILD)/doubles/cuda/libcuda.so.1, selftests/doubles/README.md): the
 * clock sync's arithmetic, the sync recovering the double's %globaltimer
 * offset within its own uncertainty, a short run (strategies measured,
 * latencies non-negative and bounded, the oracle and fence-vgem skipped
 * with their reasons, futex-wake as the blocking-sync event, every page
 * unregistered after), the JSON's device fields, and the refusals: an
 * unknown or unbuilt device, simulated-device options, no driver; the
 * CUDA-only strategies (cuda-hostfunc, cuda-scanner) driven wait by wait:
 * every wait completes, each host function runs once per job and after
 * its store, and a stream whose context dies ends the wait with the
 * driver's error instead of a hang; and the double's host functions
 * themselves (cuLaunchHostFunc as documented: in stream order, on a
 * thread of the driver's, one at a time, refused any CUDA call). The
 * double runs on the host's CPUs, so no figure is compared with a
 * duration beyond "far less than a second".
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_clock_sync.h"
#include "bench_cuda.h"
#include "bench_options.h"
#include "bench_report.h"
#include "bench_run.h"
#include "bench_select.h"
#include "bench_strategy.h"
#include "bench_word.h"
#include "cuda_decls.h"
#include "unit.h"

static struct bench_run run;

/* The double next to this binary, or under $GPUAR_TEST_DOUBLES. */
static void use_double(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *env = getenv("GPUAR_TEST_DOUBLES");
	ssize_t n;

	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
	} else {
		n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		ck_assert_int_gt(n, 0);
		dir[n] = '\0';
		*strrchr(dir, '/') = '\0';
		strncat(dir, "/../../doubles", sizeof(dir) - strlen(dir) - 1);
	}
	snprintf(path, sizeof(path), "%s/cuda/libcuda.so.1", dir);
	setenv("GPUAR_CUDA_LIBRARY", path, 1);
}

/*
 * A control of the double. The handle stays open for the test's life, so
 * the double the producer loads (and unloads) is this same instance and
 * its counters outlive the producer.
 */
static void *fake_sym(const char *name)
{
	static void *dl;
	void *fn;

	if (!dl)
		dl = dlopen(getenv("GPUAR_CUDA_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(dl, "cannot open %s", getenv("GPUAR_CUDA_LIBRARY"));
	fn = dlsym(dl, name);
	ck_assert_msg(fn, "the double lacks %s", name);
	return fn;
}

static int parse(char **argv)
{
	struct bench_options o;
	int argc = 0;

	while (argv[argc])
		argc++;
	optind = 0;	/* glibc: re-initialise getopt for a new argv */
	return bench_options_parse(argc, argv, &o);
}

static void configure(const char *strategies, const char *streams)
{
	char *argv[] = {
		"gpuar-bench", "--device", "cuda", "--work-us", "2000", "--waits",
		"12", "--reps", "2", "--streams", (char *)streams,
		"--background-ms", "0", "--strategies", (char *)strategies,
		"--device-path", "/nonexistent/gpuar", NULL,
	};
	struct bench_options o;

	optind = 0;
	ck_assert_int_eq(bench_options_parse(sizeof(argv) / sizeof(argv[0]) - 1,
					     argv, &o), 0);
	memset(&run, 0, sizeof(run));
	run.cfg = o.cfg;
	bench_select_strategies(&run, o.strategies);
}

static const struct bench_result *result(const char *name)
{
	for (unsigned int i = 0; i < run.results; i++)
		if (!strcmp(run.result[i].st.name, name))
			return &run.result[i];
	ck_abort_msg("no result %s", name);
	return NULL;
}

static void assert_measured(const struct bench_result *r)
{
	ck_assert_msg(!r->skipped, "%s skipped: %s", r->st.name, r->reason);
	ck_assert_msg(r->reps == 2, "%s: %u repetitions (%s)", r->st.name,
		      r->reps, r->reason);
	ck_assert_uint_eq(r->sum.errors, 0);
	for (unsigned int i = 0; i < r->reps; i++) {
		const struct bench_rep *p = &r->rep[i];

		ck_assert_uint_eq(p->waits, 12);
		ck_assert(p->p50 >= 0 && p->p50 <= p->p90);
		ck_assert(p->p90 <= p->p99 && p->p99 <= p->max);
		/* The double's store-to-seen path is a few host wake-ups. */
		ck_assert_msg(p->max < 1e6, "%s: max latency %.1f us", r->st.name,
			      p->max);
	}
}

/* ---------------------------------------------------------- clock sync */

START_TEST(clock_sync_keeps_the_shortest_round_trip)
{
	struct bench_clock_sync cs;

	bench_clock_sync_init(&cs);
	ck_assert(!cs.valid);
	/* Device 1000 ahead; true reads at the midpoint unless noted. */
	bench_clock_sync_add(&cs, 100, 1000 + 150, 200);	/* rtt 100 */
	ck_assert(cs.valid);
	ck_assert_int_eq(cs.offset_ns, 1000);
	ck_assert_uint_eq(cs.half_rtt_ns, 50);
	bench_clock_sync_add(&cs, 300, 1000 + 390, 500);	/* rtt 200: worse */
	ck_assert_int_eq(cs.offset_ns, 1000);
	bench_clock_sync_add(&cs, 600, 1000 + 604, 611);	/* rtt 11, read early */
	ck_assert_uint_eq(cs.half_rtt_ns, 6);
	ck_assert_int_le(cs.offset_ns - 1000, 6);
	ck_assert_int_ge(cs.offset_ns - 1000, -6);
	bench_clock_sync_add(&cs, 700, 5, 600);			/* t1 < t0: ignored */
	ck_assert_uint_eq(cs.samples, 4);
	ck_assert_uint_eq(cs.half_rtt_ns, 6);
	ck_assert_uint_eq(bench_clock_sync_host_ns(&cs, 5000), 5000 - (uint64_t)cs.offset_ns);
}
END_TEST

START_TEST(clock_sync_takes_a_device_timer_behind_the_host)
{
	struct bench_clock_sync cs;

	bench_clock_sync_init(&cs);
	bench_clock_sync_add(&cs, 5000000, 1000, 5000010);
	ck_assert_int_eq(cs.offset_ns, 1000 - 5000005);
	ck_assert_uint_eq(bench_clock_sync_host_ns(&cs, 1000), 5000005);
}
END_TEST

START_TEST(sync_recovers_the_doubles_offset)
{
	uint64_t (*offset)(void);
	struct bench_device dev;
	char why[320] = "";
	int64_t off;
	uint64_t unc;

	use_double();
	ck_assert_msg(bench_device_start_cuda(&dev, 1, why, sizeof(why)) == 0, "%s", why);
	offset = (uint64_t (*)(void))fake_sym("gpuar_fake_cuda_globaltimer_offset");
	for (int i = 0; i < 3; i++) {
		int64_t err;

		if (i)
			ck_assert_msg(bench_cuda_sync_clock(dev.cuda, why, sizeof(why)) == 0,
				      "%s", why);
		bench_cuda_clock(dev.cuda, &off, &unc);
		err = off - (int64_t)offset();
		ck_assert_msg(err <= (int64_t)unc && -err <= (int64_t)unc,
			      "offset off by %lld ns, uncertainty %llu ns",
			      (long long)err, (unsigned long long)unc);
		/* Far tighter on an idle machine; a loaded one stays under 1 s. */
		ck_assert_uint_lt(unc, 1000000000ULL);
	}
	bench_device_stop(&dev);
}
END_TEST

/* ------------------------------------------------------------- a run */

START_TEST(short_run_measures_and_skips)
{
	int (*pages)(void), (*flags)(int);
	uint64_t (*unsafe)(void);
	const struct bench_device_info *d = &run.env.device;

	use_double();
	pages = (int (*)(void))fake_sym("gpuar_fake_cuda_registered_pages");
	unsafe = (uint64_t (*)(void))fake_sym("gpuar_fake_cuda_unsafe_unregisters");
	flags = (int (*)(int))fake_sym("gpuar_fake_cuda_primary_flags");
	configure("spin,sleep-poll,futex-wake,user-predict,oracle,fence-vgem", "1");
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	assert_measured(result("spin"));
	assert_measured(result("sleep-poll"));
	assert_measured(result("futex-wake"));
	assert_measured(result("user-predict"));
	ck_assert_str_eq(result("futex-wake")->plan, "cuda-event:blocking_sync");
	ck_assert(result("oracle@10")->skipped);
	ck_assert_ptr_nonnull(strstr(result("oracle@10")->reason, "true completion time"));
	ck_assert(result("fence-vgem")->skipped);
	ck_assert_ptr_nonnull(strstr(result("fence-vgem")->reason, "vgem fence"));
	ck_assert_str_eq(bench_result_status(&run, result("oracle@200")), "skipped");

	ck_assert_int_eq(d->kind, BENCH_DEVICE_CUDA);
	ck_assert_ptr_nonnull(strstr(d->gpu, "test double"));
	ck_assert_str_eq(d->sched, "blocking_sync");
	/* One at start, then one per repetition of each measured strategy. */
	ck_assert_uint_eq(d->clock_syncs, 1 + 2 * 4);
	ck_assert(d->clock_sync_uncertainty_us >= 0);
	/* Seen "before" the store only within the clock's uncertainty. */
	ck_assert_msg(d->most_early_us <= d->clock_sync_uncertainty_us + 1.0,
		      "seen %.3f us early, uncertainty %.3f us", d->most_early_us,
		      d->clock_sync_uncertainty_us);

	ck_assert_int_eq(pages(), 0);	/* user-predict's port lines too */
	ck_assert_uint_eq(unsafe(), 0);
	ck_assert_int_eq(flags(0) & 0x7, 0x4);	/* CU_CTX_SCHED_BLOCKING_SYNC */
}
END_TEST

START_TEST(streams_complete_on_the_gpu)
{
	use_double();
	configure("spin,futex-wake,user-predict", "3");
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.results; i++) {
		const struct bench_result *r = &run.result[i];

		ck_assert_msg(!r->skipped && r->reps == 2, "%s: %s", r->st.name, r->reason);
		ck_assert_uint_eq(r->sum.errors, 0);
		ck_assert_uint_eq(r->rep[0].waits, 12);
	}
}
END_TEST

START_TEST(json_names_the_device)
{
	char path[] = "/tmp/gpuar-bench-cuda-XXXXXX", text[8192];
	int fd = mkstemp(path);
	FILE *f;
	size_t n;

	ck_assert_int_ge(fd, 0);
	close(fd);
	use_double();
	configure("spin,oracle", "1");
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	ck_assert_int_eq(bench_write_json(path, &run), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(path);
	ck_assert_ptr_nonnull(strstr(text, "\"device\": \"cuda\""));
	ck_assert_ptr_nonnull(strstr(text, "\"gpu\": \"gpuar fake CUDA device 0"));
	ck_assert_ptr_nonnull(strstr(text, "\"clock_sync_uncertainty_us\": "));
	ck_assert_ptr_nonnull(strstr(text, "\"clock_syncs\": 3"));
	ck_assert_ptr_nonnull(strstr(text, "\"device_cpu\": -1"));
	ck_assert_ptr_nonnull(strstr(text, "\"strategy\": \"oracle@10\", \"status\": \"skipped\""));
}
END_TEST

START_TEST(sim_json_is_unchanged)
{
	char *argv[] = { "gpuar-bench", "--waits", "2", "--reps", "1",
			 "--work-us", "1000", "--background-ms", "0",
			 "--strategies", "spin", NULL };
	char path[] = "/tmp/gpuar-bench-sim-XXXXXX", text[8192];
	struct bench_options o;
	int fd = mkstemp(path);
	FILE *f;
	size_t n;

	ck_assert_int_ge(fd, 0);
	close(fd);
	optind = 0;
	ck_assert_int_eq(bench_options_parse(sizeof(argv) / sizeof(argv[0]) - 1, argv, &o), 0);
	memset(&run, 0, sizeof(run));
	run.cfg = o.cfg;
	bench_select_strategies(&run, o.strategies);
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	ck_assert_int_eq(bench_write_json(path, &run), 0);
	f = fopen(path, "r");
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(path);
	ck_assert_ptr_null(strstr(text, "\"device\""));
	ck_assert_ptr_null(strstr(text, "clock_sync"));
}
END_TEST

/* ------------------------------------------------------------ refusals */

START_TEST(unknown_devices_are_refused)
{
	char *foo[] = { "gpuar-bench", "--device", "foo", NULL };
	char *hip[] = { "gpuar-bench", "--device", "hip", NULL };
	char *cpu[] = { "gpuar-bench", "--device", "cuda", "--device-cpu", "1", NULL };
	char *lead[] = { "gpuar-bench", "--device-lead-us", "10", "--device", "cuda", NULL };
	char *ok[] = { "gpuar-bench", "--device", "cuda", NULL };
	char *sim[] = { "gpuar-bench", "--device", "sim", NULL };

	ck_assert_int_eq(parse(foo), -1);
	ck_assert_int_eq(parse(hip), -1);
	ck_assert_int_eq(parse(cpu), -1);
	ck_assert_int_eq(parse(lead), -1);
	ck_assert_int_eq(parse(ok), 0);
	ck_assert_int_eq(parse(sim), 0);
}
END_TEST

START_TEST(no_cuda_device_is_a_clear_error)
{
	use_double();
	setenv("GPUAR_FAKE_CUDA_NO_DEVICE", "1", 1);
	configure("spin", "1");
	ck_assert_int_lt(bench_run_all(&run, false), 0);
	ck_assert_msg(strstr(run.env.device.error, "no CUDA device"), "%s",
		      run.env.device.error);
}
END_TEST

START_TEST(no_cuda_driver_is_a_clear_error)
{
	setenv("GPUAR_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
	configure("spin", "1");
	ck_assert_int_lt(bench_run_all(&run, false), 0);
	ck_assert_msg(strstr(run.env.device.error, "cannot load the CUDA driver"),
		      "%s", run.env.device.error);
}
END_TEST

/* The double, as a driver without @entry. */
static void use_double_without(const char *entry)
{
	void (*hide)(const char *);

	use_double();
	hide = (void (*)(const char *))fake_sym("gpuar_fake_cuda_hide");
	hide(entry);
}

START_TEST(a_driver_without_launch_is_named)
{
	use_double_without("cuLaunchKernel");
	configure("spin", "1");
	ck_assert_int_lt(bench_run_all(&run, false), 0);
	ck_assert_msg(strstr(run.env.device.error, "lacks cuLaunchKernel"), "%s",
		      run.env.device.error);
}
END_TEST


/* ------------------------------------------- CUDA-only, wait by wait */

/* One repetition driven by hand: the device, the strategy, the waits. */
struct direct {
	struct bench_device dev;
	struct bench_ctx ctx;
	const struct bench_strategy *st;
	void *state;
};

static void direct_open(struct direct *d, const struct bench_strategy *st,
			const char *streams)
{
	char why[320] = "";

	use_double();
	configure(st->name, streams);
	memset(d, 0, sizeof(*d));
	ck_assert_msg(bench_device_start_cuda(&d->dev, (unsigned int)atoi(streams),
					      why, sizeof(why)) == 0, "%s", why);
	d->ctx.cfg = &run.cfg;
	d->ctx.dev = &d->dev;
	d->st = st;
	atomic_store(&d->dev.notify, st->notify);
	ck_assert_msg(st->open(st, &d->ctx, &d->state, why, sizeof(why)) == 0,
		      "%s", why);
	ck_assert_msg(bench_device_arm(&d->dev, why, sizeof(why)) == 0, "%s", why);
}

static void direct_launch(struct direct *d, unsigned int s, uint64_t seq,
			  uint64_t ns)
{
	char why[320] = "";

	d->ctx.target[s] = seq;
	d->ctx.pending++;
	if (d->st->submit)
		ck_assert_int_eq(d->st->submit(d->state, &d->ctx, s, seq), 0);
	bench_device_launch(&d->dev, s, seq, ns);
	ck_assert_msg(!bench_device_failure(&d->dev, why, sizeof(why)), "%s", why);
}

/* The device drained, the strategy closed, the device stopped. */
static void direct_close(struct direct *d)
{
	bench_device_disarm(&d->dev);
	d->st->close(d->state, &d->ctx);
	bench_device_stop(&d->dev);
}

#define DIRECT_ROUNDS 10

/* Every round launches a job on each stream and waits until all are seen. */
static unsigned int direct_rounds(struct direct *d, unsigned int streams)
{
	struct bench_done done[BENCH_MAX_STREAMS];
	unsigned int seen = 0;

	for (uint64_t seq = 1; seq <= DIRECT_ROUNDS; seq++) {
		for (unsigned int s = 0; s < streams; s++)
			direct_launch(d, s, seq, 1000000);
		while (d->ctx.pending) {
			int n = d->st->wait(d->state, &d->ctx, done, BENCH_MAX_STREAMS);

			ck_assert_msg(n > 0, "wait: %d (%s)", n, d->ctx.first_error);
			for (int i = 0; i < n; i++) {
				ck_assert_msg(!done[i].error, "%u: %s",
					      done[i].stream, d->ctx.first_error);
				ck_assert(bench_word_reached(d->dev.stream[done[i].stream].line,
						     seq));
				d->ctx.pending--;
				seen++;
			}
		}
	}
	return seen;
}

START_TEST(hostfunc_runs_once_per_wait_after_the_store)
{
	uint64_t (*calls)(void), (*refused)(void), calls0, refused0;
	struct bench_cuda_hostfn_stats st;
	struct direct d;

	use_double();
	calls = (uint64_t (*)(void))fake_sym("gpuar_fake_cuda_host_calls");
	refused = (uint64_t (*)(void))fake_sym("gpuar_fake_cuda_host_refused");
	calls0 = calls();
	refused0 = refused();
	direct_open(&d, &bench_strat_cuda_hostfunc, "2");
	ck_assert_uint_eq(direct_rounds(&d, 2), 2 * DIRECT_ROUNDS);
	bench_device_disarm(&d.dev);	/* drained: every host function ran */
	bench_cuda_hostfn_stats(d.dev.cuda, &st);
	/* One call per job, each after its job's word was visible. */
	ck_assert_uint_eq(st.calls, 2 * DIRECT_ROUNDS);
	ck_assert_uint_eq(st.early, 0);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(calls() - calls0, 2 * DIRECT_ROUNDS);
	/* The bench's host function made no CUDA call. */
	ck_assert_uint_eq(refused() - refused0, 0);
	direct_close(&d);
}
END_TEST

START_TEST(scanner_completes_every_wait)
{
	struct direct d;

	direct_open(&d, &bench_strat_cuda_scanner, "2");
	ck_assert_uint_eq(direct_rounds(&d, 2), 2 * DIRECT_ROUNDS);
	direct_close(&d);
}
END_TEST

/*
 * A job's context dies under the wait (a device-side assert, 710): its
 * write and its host function are never run, and its event never fires.
 * The wait must end with the driver's error, not wait on.
 */
static void dead_stream(const struct bench_strategy *st)
{
	gcu_result (*fault)(gcu_stream, gcu_result);
	struct bench_done done[BENCH_MAX_STREAMS];
	struct direct d;
	int n;

	direct_open(&d, st, "1");
	fault = (gcu_result (*)(gcu_stream, gcu_result))fake_sym("gpuar_fake_cuda_fault");
	direct_launch(&d, 0, 1, 300000000);
	/* The legacy stream of the producer's context: the fault is sticky
	 * for every stream of the context, the producer's too. */
	ck_assert_uint_eq(fault(GCU_STREAM_LEGACY, GCU_ERROR_ASSERT), 0);
	n = st->wait(d.state, &d.ctx, done, BENCH_MAX_STREAMS);
	ck_assert_msg(n < 0 || (n == 1 && done[0].error), "%s: wait %d, error %d",
		      st->name, n, n > 0 && done[0].error);
	ck_assert_msg(strstr(d.ctx.first_error, "CUDA_ERROR_ASSERT"), "%s: '%s'",
		      st->name, d.ctx.first_error);
	direct_close(&d);
}

START_TEST(hostfunc_dead_stream_is_an_error)
{
	dead_stream(&bench_strat_cuda_hostfunc);
}
END_TEST

START_TEST(scanner_dead_stream_is_an_error)
{
	dead_stream(&bench_strat_cuda_scanner);
}
END_TEST

START_TEST(cuda_strategies_run_and_v2_says_why_not)
{
	use_double();
	configure("cuda-hostfunc,cuda-scanner,cuda-hostfunc-v2", "2");
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	assert_measured(result("cuda-hostfunc"));
	assert_measured(result("cuda-scanner"));
	ck_assert_str_eq(result("cuda-hostfunc")->plan, "cuLaunchHostFunc:eventfd");
	ck_assert(result("cuda-hostfunc-v2")->skipped);
	ck_assert_str_eq(result("cuda-hostfunc-v2")->reason,
			 "cuLaunchHostFunc_v2's signature is not documented in "
			 "what this build had");
}
END_TEST

START_TEST(cuda_strategies_need_a_gpu)
{
	char *argv[] = { "gpuar-bench", "--strategies",
			 "cuda-hostfunc,cuda-scanner", NULL };
	struct bench_options o;

	optind = 0;
	ck_assert_int_eq(bench_options_parse(3, argv, &o), 0);
	memset(&run, 0, sizeof(run));
	run.cfg = o.cfg;
	bench_select_strategies(&run, o.strategies);
	ck_assert_uint_eq(run.results, 2);
	for (unsigned int i = 0; i < run.results; i++) {
		ck_assert(run.result[i].skipped);
		ck_assert_ptr_nonnull(strstr(run.result[i].reason, "--device cuda"));
	}
}
END_TEST

START_TEST(a_driver_without_host_functions_is_named)
{
	use_double_without("cuLaunchHostFunc");
	configure("cuda-hostfunc", "1");
	ck_assert(result("cuda-hostfunc")->skipped);
	ck_assert_msg(strstr(result("cuda-hostfunc")->reason, "lacks cuLaunchHostFunc"),
		      "%s", result("cuda-hostfunc")->reason);
}
END_TEST

/* ------------------------------------- the double's host functions */

static gcu_result (*q_stream_query)(gcu_stream);

/* What a host function saw, written on the double's host thread. */
struct host_probe {
	gcu_stream stream;	/* asked with cuStreamQuery from inside */
	uint64_t sleep_ns;
	pthread_t thread;
	uint64_t start_ns, end_ns;
	gcu_result query_rc;
	atomic_bool done;
};

static atomic_int host_running, host_most;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void host_probe_fn(void *data)
{
	struct host_probe *p = data;
	struct timespec ts = { 0, (long)p->sleep_ns };
	int now = atomic_fetch_add(&host_running, 1) + 1;
	int most = atomic_load(&host_most);

	while (now > most && !atomic_compare_exchange_weak(&host_most, &most, now))
		;
	p->start_ns = mono_ns();
	p->thread = pthread_self();
	p->query_rc = q_stream_query(p->stream);
	nanosleep(&ts, NULL);
	p->end_ns = mono_ns();
	atomic_fetch_sub(&host_running, 1);
	atomic_store(&p->done, true);
}

START_TEST(double_runs_host_functions_as_documented)
{
	gcu_result (*init)(unsigned int), (*retain)(gcu_context *, gcu_device);
	gcu_result (*push)(gcu_context), (*create)(gcu_stream *, unsigned int);
	gcu_result (*launch)(gcu_stream, gcu_host_fn, void *);
	gcu_result (*work)(gcu_stream, uint64_t), (*sync)(gcu_stream);
	gcu_result (*ev_create)(gcu_event *, unsigned int);
	gcu_result (*record)(gcu_event, gcu_stream), (*ev_query)(gcu_event);
	gcu_result (*ev_destroy)(gcu_event), (*destroy)(gcu_stream);
	gcu_result (*pop)(gcu_context *), (*release)(gcu_device);
	uint64_t (*refused)(void), refused0, t0;
	struct host_probe a = { .sleep_ns = 10000000 }, b = { .sleep_ns = 40000000 };
	gcu_stream s1, s2;
	gcu_context ctx;
	gcu_event ev;
	gcu_result rc;

	use_double();
	init = (gcu_result (*)(unsigned int))fake_sym("cuInit");
	retain = (gcu_result (*)(gcu_context *, gcu_device))fake_sym("cuDevicePrimaryCtxRetain");
	push = (gcu_result (*)(gcu_context))fake_sym("cuCtxPushCurrent_v2");
	create = (gcu_result (*)(gcu_stream *, unsigned int))fake_sym("cuStreamCreate");
	launch = (gcu_result (*)(gcu_stream, gcu_host_fn, void *))fake_sym("cuLaunchHostFunc");
	work = (gcu_result (*)(gcu_stream, uint64_t))fake_sym("gpuar_fake_cuda_work");
	sync = (gcu_result (*)(gcu_stream))fake_sym("cuStreamSynchronize");
	ev_create = (gcu_result (*)(gcu_event *, unsigned int))fake_sym("cuEventCreate");
	record = (gcu_result (*)(gcu_event, gcu_stream))fake_sym("cuEventRecord");
	ev_query = (gcu_result (*)(gcu_event))fake_sym("cuEventQuery");
	q_stream_query = (gcu_result (*)(gcu_stream))fake_sym("cuStreamQuery");
	ev_destroy = (gcu_result (*)(gcu_event))fake_sym("cuEventDestroy_v2");
	destroy = (gcu_result (*)(gcu_stream))fake_sym("cuStreamDestroy_v2");
	pop = (gcu_result (*)(gcu_context *))fake_sym("cuCtxPopCurrent_v2");
	release = (gcu_result (*)(gcu_device))fake_sym("cuDevicePrimaryCtxRelease_v2");
	refused = (uint64_t (*)(void))fake_sym("gpuar_fake_cuda_host_refused");
	ck_assert_uint_eq(init(0), 0);
	ck_assert_uint_eq(retain(&ctx, 0), 0);
	ck_assert_uint_eq(push(ctx), 0);
	ck_assert_uint_eq(create(&s1, GCU_STREAM_NON_BLOCKING), 0);
	ck_assert_uint_eq(create(&s2, GCU_STREAM_NON_BLOCKING), 0);
	ck_assert_uint_eq(ev_create(&ev, GCU_EVENT_DISABLE_TIMING), 0);
	a.stream = s1;
	b.stream = s2;
	refused0 = refused();
	ck_assert_uint_eq(launch(s1, NULL, NULL), GCU_ERROR_INVALID_VALUE);

	t0 = mono_ns();
	/* a after 20 ms of s1's work, then an event; b at once on s2. */
	ck_assert_uint_eq(work(s1, 20000000), 0);
	ck_assert_uint_eq(launch(s1, host_probe_fn, &a), 0);
	ck_assert_uint_eq(record(ev, s1), 0);
	ck_assert_uint_eq(launch(s2, host_probe_fn, &b), 0);
	/* Work added after a host function waits until it returned. */
	while ((rc = ev_query(ev)) == GCU_ERROR_NOT_READY)
		usleep(100);
	ck_assert_uint_eq(rc, 0);
	ck_assert(atomic_load(&a.done));
	ck_assert_uint_eq(sync(s1), 0);
	ck_assert_uint_eq(sync(s2), 0);
	ck_assert(atomic_load(&b.done));

	/* After the work enqueued before it. */
	ck_assert_uint_ge(a.start_ns, t0 + 20000000);
	/* On the driver's thread, not the caller's. */
	ck_assert(!pthread_equal(a.thread, pthread_self()));
	ck_assert(!pthread_equal(b.thread, pthread_self()));
	/* One at a time, even from independent streams ("may be serialized"). */
	ck_assert_int_eq(atomic_load(&host_most), 1);
	ck_assert(a.start_ns >= b.end_ns || b.start_ns >= a.end_ns);
	/* A CUDA call from a host function is refused. */
	ck_assert_uint_eq(a.query_rc, GCU_ERROR_NOT_PERMITTED);
	ck_assert_uint_eq(b.query_rc, GCU_ERROR_NOT_PERMITTED);
	ck_assert_uint_eq(refused() - refused0, 2);
	/* The caller's own calls are not. */
	ck_assert_uint_eq(q_stream_query(s1), 0);
	ck_assert_uint_eq(ev_destroy(ev), 0);
	ck_assert_uint_eq(destroy(s1), 0);
	ck_assert_uint_eq(destroy(s2), 0);
	ck_assert_uint_eq(pop(&ctx), 0);
	ck_assert_uint_eq(release(0), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_cuda");
	TCase *sync = tcase_create("clock_sync");
	TCase *runs = tcase_create("run");
	TCase *bad = tcase_create("refusals");
	TCase *gpu = tcase_create("cuda_only");
	TCase *dbl = tcase_create("double_host_functions");

	tcase_add_test(sync, clock_sync_keeps_the_shortest_round_trip);
	tcase_add_test(sync, clock_sync_takes_a_device_timer_behind_the_host);
	tcase_add_test(sync, sync_recovers_the_doubles_offset);
	tcase_set_timeout(sync, 60);
	tcase_add_test(runs, short_run_measures_and_skips);
	tcase_add_test(runs, streams_complete_on_the_gpu);
	tcase_add_test(runs, json_names_the_device);
	tcase_add_test(runs, sim_json_is_unchanged);
	tcase_set_timeout(runs, 120);
	tcase_add_test(bad, unknown_devices_are_refused);
	tcase_add_test(bad, no_cuda_device_is_a_clear_error);
	tcase_add_test(bad, no_cuda_driver_is_a_clear_error);
	tcase_add_test(bad, a_driver_without_launch_is_named);
	tcase_set_timeout(bad, 60);
	suite_add_tcase(s, sync);
	suite_add_tcase(s, runs);
	tcase_add_test(gpu, hostfunc_runs_once_per_wait_after_the_store);
	tcase_add_test(gpu, scanner_completes_every_wait);
	tcase_add_test(gpu, hostfunc_dead_stream_is_an_error);
	tcase_add_test(gpu, scanner_dead_stream_is_an_error);
	tcase_add_test(gpu, cuda_strategies_run_and_v2_says_why_not);
	tcase_add_test(gpu, cuda_strategies_need_a_gpu);
	tcase_add_test(gpu, a_driver_without_host_functions_is_named);
	tcase_set_timeout(gpu, 120);
	tcase_add_test(dbl, double_runs_host_functions_as_documented);
	tcase_set_timeout(dbl, 60);
	suite_add_tcase(s, bad);
	suite_add_tcase(s, gpu);
	suite_add_tcase(s, dbl);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
