// SPDX-License-Identifier: MIT
/*
 * cuda-visibility: once the completion word reaches its number, are the
 * results of the work before it visible to the host? gpuar_cuda_record's
 * store is cuStreamWriteValue64 with the default memory barrier, and the
 * backend promises exactly that; an application reads its results the
 * moment its wait ends, so this checks it the same way.
 *
 * Each round, for two kinds of results buffer: the host poisons the
 * buffer (every element differs from what the round will write), a kernel
 * of many blocks writes every element, the store follows on the stream,
 * and as soon as the host sees the word it reads every element. Buffers:
 * "mapped", pinned host memory the kernel writes through its mapping (the
 * results cross the bus as the word does), and "copy", device memory
 * copied into pinned memory by cudaMemcpyAsync before the store. The host
 * sees the word by spinning on it (the earliest read there can be) on even
 * rounds, through the port (gpuar_cuda_port_await, gpuar_cuda_port_reap) on odd ones.
 *
 *   cuda-visibility [--engine user|kernel] [--rounds N]
 * Exit 0 every element right in every round, 1 a stale element (the first
 * is named) or a failed call, 2 usage, 77 no CUDA device.
 */
#include <cstdint>

#include "gpucheck.h"

#define ELEMENTS (1u << 18)
#define SPIN_LIMIT_NS 5000000000ull

__host__ __device__ static inline uint32_t expected(uint32_t round, uint32_t i)
{
	return round * 0x9e3779b1u ^ i;
}

__global__ void fill(uint32_t *out, uint32_t n, uint32_t round)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		out[i] = expected(round, i);
}

struct results {
	const char *name;
	uint32_t *host;		/* what the host reads */
	uint32_t *device;	/* what the kernel writes */
	bool copy;		/* device memory, copied to host before the store */
};

/* Wait for the store the way @round says; exits if it never comes. */
static void see_word(struct gpuar_cuda *cu, struct gpuar_port *port,
		     struct gpuar_vendor_line *line, cudaStream_t s,
		     const struct gpuar_plan *plan, uint32_t round)
{
	struct gpuar_vendor_completion comp;
	struct gpuar_error d;
	uint64_t target;

	if (round % 2 == 0) {
		const uint64_t *w = &gpuar_vendor_line_words(line)[0];
		uint64_t t0 = gpuar_now_ns();

		if (gpuar_cuda_record(line, 0, s, &target, &d))
			gpucheck_die("gpuar_cuda_record", &d);
		while ((int64_t)(__atomic_load_n(w, __ATOMIC_ACQUIRE) - target) < 0) {
			if (gpuar_now_ns() - t0 > SPIN_LIMIT_NS) {
				std::fprintf(stderr, "round %u: the word is still "
					     "short of %llu after 5 s\n", round,
					     (unsigned long long)target);
				std::exit(1);
			}
		}
		return;
	}
	if (gpuar_cuda_port_await(line, 0, s, plan, 1, round, &target, &d))
		gpucheck_die("gpuar_cuda_port_await", &d);
	if (gpuar_cuda_port_reap(cu, port, &comp, 1, -1, &d) != 1)
		gpucheck_die("gpuar_cuda_port_reap", &d);
	if (comp.record.status) {
		std::fprintf(stderr, "round %u: the await ended with status %d "
			     "(%s)\n", round, comp.record.status,
			     comp.vendor_name ? comp.vendor_name : "-");
		std::exit(1);
	}
}

int main(int argc, char **argv)
{
	uint32_t engine = GPUAR_ENGINE_USER;
	struct gpuar_plan plan = {};
	struct gpuar_cuda *cu;
	struct gpuar_port *port;
	struct gpuar_vendor_line *line;
	struct gpuar_error d;
	struct results bufs[2] = { { "mapped", nullptr, nullptr, false },
				   { "copy", nullptr, nullptr, true } };
	const size_t bytes = ELEMENTS * sizeof(uint32_t);
	unsigned long stale = 0;
	uint32_t rounds = 200;
	cudaStream_t s;

	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--engine") && i + 1 < argc &&
		    gpucheck_engine(argv[i + 1], &engine)) {
			i++;
		} else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = (uint32_t)std::strtoul(argv[++i], nullptr, 0);
		} else {
			std::fprintf(stderr, "usage: %s [--engine user|kernel] "
				     "[--rounds N]\n", argv[0]);
			return 2;
		}
	}
	gpucheck_device();
	CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK_CUDA(cudaHostAlloc(&bufs[0].host, bytes, cudaHostAllocMapped));
	CHECK_CUDA(cudaHostGetDevicePointer(&bufs[0].device, bufs[0].host, 0));
	CHECK_CUDA(cudaHostAlloc(&bufs[1].host, bytes, cudaHostAllocDefault));
	CHECK_CUDA(cudaMalloc(&bufs[1].device, bytes));
	if (gpuar_plan_from_text("flag:park_us=50,backstop_us=100000", &plan, &d))
		gpucheck_die("plan", &d);
	gpucheck_open(engine, &cu, &port, &line);

	for (uint32_t r = 1; r <= rounds; r++) {
		for (struct results &b : bufs) {
			unsigned long bad = 0, first = 0;
			uint32_t got = 0;

			for (uint32_t i = 0; i < ELEMENTS; i++)
				b.host[i] = ~expected(r, i);
			fill<<<256, 256, 0, s>>>(b.device, ELEMENTS, r);
			CHECK_CUDA(cudaGetLastError());
			if (b.copy)
				CHECK_CUDA(cudaMemcpyAsync(b.host, b.device, bytes,
							   cudaMemcpyDeviceToHost, s));
			see_word(cu, port, line, s, &plan, r);
			for (uint32_t i = 0; i < ELEMENTS; i++) {
				if (b.host[i] == expected(r, i))
					continue;
				if (!bad++) {
					first = i;
					got = b.host[i];
				}
			}
			if (bad)
				std::printf("round %u, %s buffer, word seen by %s: %lu "
					    "stale of %u, first [%lu] = %#x, expected %#x\n",
					    r, b.name, r % 2 ? "the port" : "spinning",
					    bad, ELEMENTS, first, got,
					    expected(r, (uint32_t)first));
			stale += bad;
		}
	}
	CHECK_CUDA(cudaStreamSynchronize(s));
	if (gpuar_cuda_line_free(line, 5000000000ull, &d))
		gpucheck_die("gpuar_cuda_line_free", &d);
	std::printf("cuda-visibility: %u rounds x 2 buffers (mapped, copy) x %u "
		    "elements, engine %s: %lu stale elements at the word's store\n",
		    rounds, ELEMENTS, gpuar_engine_name(gpuar_port_engine(port)),
		    stale);
	gpuar_port_close(port);
	gpuar_cuda_close(cu);
	return stale ? 1 : 0;
}
