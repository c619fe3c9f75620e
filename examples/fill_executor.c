// SPDX-License-Identifier: MIT
/*
 * The FILL executor: one task waits for the GPU while another keeps the
 * CPU busy with ready work; the executor idles only when nothing is ready.
 * At the end it prints what that saved: the run against waiting for the
 * GPU first and doing the CPU work after.
 * The kind is resolved through the fallback chain (io-uring -> gpu-reactor
 * -> naive), so on a host without io_uring it says what runs instead.
 *
 *   ./fill_executor [io-uring|gpu-reactor|naive]
 */
#include <gpuar/gpuar.h>

#include <stdio.h>

struct gpu_wait {
	uint64_t *word;
	uint64_t done_at;
};

static int gpu_step(struct gpuar_task *t, void *arg)
{
	struct gpu_wait *g = arg;

	if (__atomic_load_n(g->word, __ATOMIC_ACQUIRE) >= 1) {
		g->done_at = gpuar_now_ns();
		return GPUAR_TASK_DONE;
	}
	gpuar_task_await_word(t, g->word, 1);
	return GPUAR_TASK_PENDING;
}

struct cpu_work {
	int slices;
	int done;
	uint64_t busy_ns;	/* the CPU work's own time */
};

static int cpu_step(struct gpuar_task *t, void *arg)
{
	struct cpu_work *c = arg;
	uint64_t from = gpuar_now_ns(), until = from + 1000000;	/* 1 ms of "work" */

	while (gpuar_now_ns() < until)
		;
	c->busy_ns += gpuar_now_ns() - from;
	if (++c->done == c->slices)
		return GPUAR_TASK_DONE;
	gpuar_task_yield(t);
	return GPUAR_TASK_PENDING;
}

int main(int argc, char **argv)
{
	enum gpuar_exec_kind kind = GPUAR_EXEC_IO_URING;
	struct gpuar_exec_options opts = { 0 };
	struct gpuar_soft_producer *device;
	struct gpuar_exec_stats st;
	struct gpuar_exec *ex;
	struct gpuar_error err;
	uint64_t word = 0, start, total_ns, serial_ns;
	struct gpu_wait g = { .word = &word };
	struct cpu_work c = { .slices = 10 };

	if (argc > 1 && gpuar_exec_kind_parse(argv[1], &kind, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 2;
	}
	if (gpuar_exec_resolve(kind, false, NULL, &kind, &err) < 0)
		return 1;
	if (err.code != GPUAR_OK)
		printf("note: %s\n", err.message);
	opts.kind = kind;
	if (gpuar_exec_new(&ex, &opts, NULL) < 0 || gpuar_soft_producer_new(&device) < 0)
		return 1;
	start = gpuar_now_ns();
	gpuar_soft_store_after(device, &word, 1, 30000000);	/* GPU: 30 ms */
	gpuar_exec_spawn(ex, gpu_step, &g, NULL);
	gpuar_exec_spawn(ex, cpu_step, &c, NULL);
	if (gpuar_exec_run(ex, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	total_ns = gpuar_now_ns() - start;
	gpuar_exec_stats(ex, &st);
	printf("executor %s: GPU wait done after %llu us, %d CPU slices ran\n",
	       gpuar_exec_kind_name(kind),
	       (unsigned long long)(g.done_at - start) / 1000, c.done);
	/* Without FILL: block on the GPU, then do the CPU work. */
	serial_ns = (g.done_at - start) + c.busy_ns;
	printf("FILL saved %llu us: the run took %llu us, waiting first and "
	       "working after would take %llu us (GPU %llu + CPU %llu)\n",
	       (unsigned long long)(serial_ns > total_ns ? serial_ns - total_ns : 0) / 1000,
	       (unsigned long long)total_ns / 1000, (unsigned long long)serial_ns / 1000,
	       (unsigned long long)(g.done_at - start) / 1000,
	       (unsigned long long)c.busy_ns / 1000);
	printf("polls %llu, wakes %llu, sleeps %llu, parks %llu, idle %llu us\n",
	       (unsigned long long)st.polls, (unsigned long long)st.wakes,
	       (unsigned long long)st.sleeps, (unsigned long long)st.parks,
	       (unsigned long long)st.idle_ns / 1000);
	gpuar_exec_free(ex);
	gpuar_soft_producer_free(device);
	return 0;
}
