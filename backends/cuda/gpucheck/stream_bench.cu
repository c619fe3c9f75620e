// SPDX-License-Identifier: MIT
/*
 * CUDA stream benchmark for the GPU bundle (make gpu-bundle): a spin
 * kernel of known duration (clock64 with __nanosleep), then one wait for
 * it, per strategy, side by side in one run. Built with nvcc where the
 * bundle is built; it links libgpuar.so (CUDA backend included).
 *
 * Reported per strategy (medians over --reps repetitions of --iters
 * waits): the wait's overhead past the kernel (wall time from launch to
 * "seen done" minus the kernel's measured duration; p50 and p99 over all
 * waits) and the waiting thread's CPU time per wait. Figures compare
 * strategies within one run; nothing here is asserted.
 *
 *   cuda-stream-bench [--engine user|kernel] [--kernel-us N] [--iters N]
 *                     [--reps N]
 * Exit 0, 1 a CUDA or gpuar call failed, 2 usage, 77 no CUDA device.
 */
#include <algorithm>
#include <ctime>
#include <vector>

#include "gpucheck.h"

__global__ void spin_kernel(long long cycles)
{
	long long start = clock64();

	while (clock64() - start < cycles) {
#if __CUDA_ARCH__ >= 700
		__nanosleep(256);
#endif
	}
}

static uint64_t thread_cpu_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct ctx {
	struct gpuar_cuda *cu;
	struct gpuar_port *port;
	struct gpuar_vendor_line *line;
	struct gpuar_waiter *waiter;
	cudaStream_t stream;
	long long cycles;
	uint64_t seq;
};

enum kind { SYNC, QUERY_SPIN, WORD_SPIN, AWAIT, WAIT_DRIVER };

struct strategy {
	const char *name;
	enum kind kind;
	const char *plan;
};

/* One wait of one strategy; returns the time it saw the work done. */
static uint64_t one_wait(struct ctx *c, const struct strategy *s,
			 const struct gpuar_plan *plan, uint64_t point)
{
	struct gpuar_error d;
	uint64_t target;

	spin_kernel<<<1, 1, 0, c->stream>>>(c->cycles);
	switch (s->kind) {
	case SYNC:
		CHECK_CUDA(cudaStreamSynchronize(c->stream));
		break;
	case QUERY_SPIN:
		while (cudaStreamQuery(c->stream) == cudaErrorNotReady)
			;
		break;
	case WORD_SPIN: {
		const uint64_t *w = &gpuar_vendor_line_words(c->line)[0];

		if (gpuar_cuda_record(c->line, 0, c->stream, &target, &d))
			gpucheck_die("record", &d);
		while ((int64_t)(__atomic_load_n(w, __ATOMIC_ACQUIRE) - target) < 0)
			;
		break;
	}
	case AWAIT: {
		struct gpuar_vendor_completion comp;

		if (gpuar_cuda_port_await(c->line, 0, c->stream, plan, point, ++c->seq,
				     &target, &d))
			gpucheck_die("await", &d);
		if (gpuar_cuda_port_reap(c->cu, c->port, &comp, 1, -1, &d) != 1 ||
		    comp.record.status)
			gpucheck_die("reap", &d);
		break;
	}
	case WAIT_DRIVER: {
		struct gpuar_vendor_source src;
		struct gpuar_record rec;

		if (gpuar_cuda_source_init(&src, c->line, 1, c->stream, &d))
			gpucheck_die("source", &d);
		if (gpuar_cuda_wait_blocking(c->waiter, &src, plan, point, ++c->seq, &rec, &d))
			gpucheck_die("wait", &d);
		break;
	}
	}
	return gpuar_now_ns();
}

int main(int argc, char **argv)
{
	static const struct strategy strategies[] = {
		{ "cudaStreamSynchronize", SYNC, nullptr },
		{ "cudaStreamQuery spin", QUERY_SPIN, nullptr },
		{ "word spin", WORD_SPIN, nullptr },
		{ "port block", AWAIT, "block" },
		{ "port poll", AWAIT, "poll" },
		{ "port flag", AWAIT, "flag:park_us=50,backstop_us=100000" },
		{ "port flag+predict", AWAIT,
		  "flag:park_us=50,backstop_us=100000+predict:margin_us=150,"
		  "min_sleep_us=20,max_sleep_us=50000,window=8" },
		{ "wait driver flag+predict", WAIT_DRIVER,
		  "flag:park_us=50,backstop_us=100000+predict:margin_us=150,"
		  "min_sleep_us=20,max_sleep_us=50000,window=8" },
	};
	struct gpuar_error d;
	struct ctx c = {};
	uint32_t engine = GPUAR_ENGINE_USER;
	int kernel_us = 1000, iters = 200, reps = 5, clock_khz = 0;
	cudaEvent_t e0, e1;
	float ms = 0;
	std::vector<float> kernel_ms;

	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--engine") && i + 1 < argc &&
		    gpucheck_engine(argv[i + 1], &engine))
			i++;
		else if (!std::strcmp(argv[i], "--kernel-us") && i + 1 < argc)
			kernel_us = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = std::atoi(argv[++i]);
		else {
			std::fprintf(stderr, "usage: %s [--engine user|kernel] "
				     "[--kernel-us N] [--iters N] [--reps N]\n", argv[0]);
			return 2;
		}
	}
	gpucheck_device();
	CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
	CHECK_CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
	c.cycles = (long long)kernel_us * clock_khz / 1000;
	gpucheck_open(engine, &c.cu, &c.port, &c.line);
	if (gpuar_waiter_new(&c.waiter, nullptr, nullptr))
		gpucheck_die("waiter", nullptr);

	/* The kernel's real duration (clock64 runs at the SM clock). */
	CHECK_CUDA(cudaEventCreate(&e0));
	CHECK_CUDA(cudaEventCreate(&e1));
	for (int i = 0; i < 21; i++) {
		CHECK_CUDA(cudaEventRecord(e0, c.stream));
		spin_kernel<<<1, 1, 0, c.stream>>>(c.cycles);
		CHECK_CUDA(cudaEventRecord(e1, c.stream));
		CHECK_CUDA(cudaEventSynchronize(e1));
		CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
		kernel_ms.push_back(ms);
	}
	std::sort(kernel_ms.begin(), kernel_ms.end());
	const double kernel_ns = kernel_ms[kernel_ms.size() / 2] * 1e6;

	std::printf("driver %d, engine %s, spin kernel %d us requested, "
		    "%.1f us measured (SM clock %d kHz), %d waits x %d reps\n",
		    gpuar_cuda_driver_version(c.cu),
		    gpuar_engine_name(gpuar_port_engine(c.port)), kernel_us,
		    kernel_ns / 1e3, clock_khz, iters, reps);
	std::printf("strategy                   overhead_p50_us overhead_p99_us cpu_us_per_wait\n");
	for (size_t si = 0; si < sizeof(strategies) / sizeof(strategies[0]); si++) {
		const struct strategy *s = &strategies[si];
		struct gpuar_plan plan = {};
		std::vector<double> over, cpu;

		if (s->plan && gpuar_plan_from_text(s->plan, &plan, &d))
			gpucheck_die("plan", &d);
		for (int r = 0; r < reps; r++) {
			uint64_t c0 = thread_cpu_ns();

			for (int i = 0; i < iters; i++) {
				uint64_t t0 = gpuar_now_ns();
				uint64_t t1 = one_wait(&c, s, &plan, si);

				over.push_back(((double)(t1 - t0) - kernel_ns) / 1e3);
			}
			cpu.push_back((double)(thread_cpu_ns() - c0) / iters / 1e3);
		}
		std::sort(over.begin(), over.end());
		std::sort(cpu.begin(), cpu.end());
		std::printf("%-26s %15.1f %15.1f %15.1f\n", s->name,
			    over[over.size() / 2], over[over.size() * 99 / 100],
			    cpu[cpu.size() / 2]);
	}
	CHECK_CUDA(cudaStreamSynchronize(c.stream));
	if (gpuar_cuda_line_free(c.line, 5000000000ull, &d))
		gpucheck_die("line free", &d);
	gpuar_waiter_free(c.waiter);
	gpuar_port_close(c.port);
	gpuar_cuda_close(c.cu);
	CHECK_CUDA(cudaStreamDestroy(c.stream));
	return 0;
}
