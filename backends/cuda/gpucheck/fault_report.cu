// SPDX-License-Identifier: MIT
/*
 * cuda-fault-report: what gpuar reports when the work it awaits faults.
 * A kernel runs 20 ms, then stores through an address nothing maps (an
 * illegal-address fault, what a kernel with a bad pointer does), so the
 * word behind it is never stored. The 20 ms let the await be submitted
 * before the fault, as it is when real work fails late; the await ends at
 * the plan's backstop, where
 * gpuar_cuda_port_reap asks the stream and turns its error into an error
 * record. Printed: the record (status, CUresult, its name), how long after
 * the launch it came against the backstop, what a later record on another
 * stream of the context says (CUDA errors are sticky), and what freeing
 * the line says.
 *
 *   cuda-fault-report [--engine user|kernel] [--backstop-us N]
 * Exit 0 when the fault came back as an error record (status -EIO, the
 * CUresult the runtime reports for the stream), the later record was
 * refused naming it and the line was not freed under the device; 1
 * otherwise; 2 usage; 77 no CUDA device.
 */
#include <cerrno>
#include <cstdint>

#include "gpucheck.h"

#define UNMAPPED_ADDRESS 0x10
#define RUN_BEFORE_FAULT_NS 20000000ull

__device__ static inline uint64_t globaltimer(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void run_then_store_through(uint64_t *p, uint64_t ns)
{
	uint64_t end = globaltimer() + ns;

	while (globaltimer() < end)
		;
	*(volatile uint64_t *)p = 1;
}

/* Print what was seen against what was expected; true when they agree. */
static bool expect(bool ok, const char *what)
{
	std::printf("%-4s %s\n", ok ? "ok" : "BAD", what);
	return ok;
}

int main(int argc, char **argv)
{
	uint32_t engine = GPUAR_ENGINE_USER;
	struct gpuar_plan plan = {};
	struct gpuar_vendor_completion comp = {};
	struct gpuar_cuda *cu;
	struct gpuar_port *port;
	struct gpuar_vendor_line *line;
	struct gpuar_error d;
	unsigned long backstop_us = 100000;
	char text[96];
	cudaStream_t s, other;
	cudaError_t seen;
	uint64_t t0, t1;
	bool ok = true;
	int n, rc;

	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--engine") && i + 1 < argc &&
		    gpucheck_engine(argv[i + 1], &engine)) {
			i++;
		} else if (!std::strcmp(argv[i], "--backstop-us") && i + 1 < argc) {
			backstop_us = std::strtoul(argv[++i], nullptr, 0);
		} else {
			std::fprintf(stderr, "usage: %s [--engine user|kernel] "
				     "[--backstop-us N]\n", argv[0]);
			return 2;
		}
	}
	gpucheck_device();
	/* Both streams before the fault: none can be created after it. */
	CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
	std::snprintf(text, sizeof(text), "flag:park_us=50,backstop_us=%lu",
		      backstop_us);
	if (gpuar_plan_from_text(text, &plan, &d))
		gpucheck_die("plan", &d);
	gpucheck_open(engine, &cu, &port, &line);

	t0 = gpuar_now_ns();
	run_then_store_through<<<1, 1, 0, s>>>((uint64_t *)UNMAPPED_ADDRESS,
					       RUN_BEFORE_FAULT_NS);
	CHECK_CUDA(cudaGetLastError());	/* the launch itself is fine */
	if (gpuar_cuda_port_await(line, 0, s, &plan, 1, 1, nullptr, &d))
		gpucheck_die("gpuar_cuda_port_await", &d);
	n = gpuar_cuda_port_reap(cu, port, &comp, 1, -1, &d);
	t1 = gpuar_now_ns();
	seen = cudaStreamQuery(s);
	std::printf("engine %s, plan %s\n",
		    gpuar_engine_name(gpuar_port_engine(port)), text);
	std::printf("reap: %d record(s) after %.1f ms: status %d, vendor_status "
		    "%d (%s), outcome %u\n", n, (t1 - t0) / 1e6,
		    comp.record.status, comp.vendor_status,
		    comp.vendor_name ? comp.vendor_name : "-",
		    (unsigned int)comp.record.outcome);
	std::printf("reap's diagnostic: %s\n", n == 1 ? d.message : "-");
	std::printf("the runtime says of the stream: %d (%s)\n", (int)seen,
		    cudaGetErrorName(seen));
	ok &= expect(n == 1 && comp.record.status == -EIO,
		     "one error record with status -EIO");
	ok &= expect(comp.vendor_status != 0 && comp.vendor_status == (int)seen,
		     "its CUresult is the stream's error");

	rc = gpuar_cuda_record(line, 1, other, nullptr, &d);
	std::printf("record on another stream: %d: %s\n", rc, rc ? d.message : "-");
	ok &= expect(rc == -EIO && std::strstr(d.message, "poisoned by"),
		     "a later record is refused, naming the first error");

	rc = gpuar_cuda_line_free(line, 100000000ull, &d);
	std::printf("line free: %d: %s\n", rc, rc ? d.message : "-");
	ok &= expect(rc == -EIO, "the line is leaked, not freed under the device");
	gpuar_port_close(port);
	gpuar_cuda_close(cu);
	std::printf("cuda-fault-report: %s\n", ok ? "as expected" : "NOT as expected");
	return ok ? 0 : 1;
}
