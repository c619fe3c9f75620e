// SPDX-License-Identifier: MIT
/*
 * Await a GPU stream through a completion port: CUDA by default, HIP when
 * built with -DGPUAR_EXAMPLE_HIP (the same program, the other backend).
 *
 * The driver is loaded at run time, so this builds with nothing but
 * libgpuar (no CUDA toolkit, no ROCm) and, on a machine without a GPU,
 * says so and exits 0: "skipped: ...".
 *
 * Each await enqueues the write-value of the slot's next sequence number
 * behind the stream's work and submits the word wait in one call; the
 * record arrives on the port's fd, so it can sit in the same epoll set as
 * sockets. Here the stream is the per-thread default stream and no kernel
 * is launched (this program has no toolkit to compile one): in your
 * program, pass the stream your kernels run on (a cudaStream_t or
 * hipStream_t converts to the struct pointer the backend takes).
 *
 *   cc gpu_await.c $(pkg-config --cflags --libs gpuar) -o cuda_await
 *   cc -DGPUAR_EXAMPLE_HIP gpu_await.c $(pkg-config --cflags --libs gpuar) -o hip_await
 */
#ifdef GPUAR_EXAMPLE_HIP
#include <gpuar/hip.h>
#define VENDOR "hip"
typedef struct gpuar_hip vendor_t;
typedef struct ihipStream_t stream_t;
#define STREAM_PER_THREAD ((stream_t *)0x2)	/* hipStreamPerThread */
#define vendor_open gpuar_hip_open
#define vendor_close gpuar_hip_close
#define vendor_line_alloc gpuar_hip_line_alloc
#define vendor_line_free gpuar_hip_line_free
#define vendor_await gpuar_hip_port_await
#define vendor_reap gpuar_hip_port_reap
#else
#include <gpuar/cuda.h>
#define VENDOR "cuda"
typedef struct gpuar_cuda vendor_t;
typedef struct CUstream_st stream_t;
#define STREAM_PER_THREAD ((stream_t *)0x2)	/* CU_STREAM_PER_THREAD */
#define vendor_open gpuar_cuda_open
#define vendor_close gpuar_cuda_close
#define vendor_line_alloc gpuar_cuda_line_alloc
#define vendor_line_free gpuar_cuda_line_free
#define vendor_await gpuar_cuda_port_await
#define vendor_reap gpuar_cuda_port_reap
#endif

#include <stdbool.h>
#include <stdio.h>

#define AWAITS 3

int main(void)
{
	struct gpuar_port_options opts = { .engine = GPUAR_ENGINE_AUTO };
	struct gpuar_vendor_completion done;
	struct gpuar_vendor_line *line;
	struct gpuar_port *port;
	struct gpuar_error err;
	struct gpuar_plan plan;
	vendor_t *gpu;
	uint64_t target;
	bool unreaped = false;
	int ret = 1;

	if (vendor_open(&gpu, 0, &err) < 0) {
		printf("skipped: no " VENDOR " device here: %s\n", err.message);
		return 0;
	}
	if (gpuar_port_open(&port, &opts, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		goto close_gpu;
	}
	printf("engine: %s\n", gpuar_engine_name(gpuar_port_engine(port)));
	if (vendor_line_alloc(gpu, port, &line, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		goto close_port;
	}
	if (gpuar_plan_from_text("flag:park_us=50,backstop_us=100000", &plan, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		goto free_line;
	}
	for (uint64_t i = 0; i < AWAITS; i++) {
		/* user_data must be unique among the port's pending waits. */
		if (vendor_await(line, 0, STREAM_PER_THREAD, &plan, 1, i, &target,
				 &err) < 0) {
			fprintf(stderr, "await %llu: %s\n", (unsigned long long)i,
				err.message);
			goto free_line;
		}
		if (vendor_reap(gpu, port, &done, 1, 5000000000LL, &err) != 1) {
			fprintf(stderr, "reap %llu: %s\n", (unsigned long long)i,
				err.message);
			unreaped = true;
			goto free_line;
		}
		printf("await %llu: sequence %llu reached, outcome %s, status %d, "
		       "waited %llu us\n", (unsigned long long)done.record.user_data,
		       (unsigned long long)target,
		       gpuar_outcome_name(done.record.outcome), done.record.status,
		       (unsigned long long)(done.record.complete_ns -
					    done.record.start_ns) / 1000);
		if (done.record.status)
			goto free_line;
	}
	ret = 0;
free_line:
	/*
	 * An await whose record is still out holds the line (-EBUSY: nothing
	 * freed, its store may still come): leave the port open rather than
	 * unmap a page the device may store into. After -EIO or -ETIMEDOUT the
	 * backend kept the line, detached from the port, so closing the port
	 * is safe.
	 */
	if (unreaped && vendor_reap(gpu, port, &done, 1, 5000000000LL, &err) == 1)
		unreaped = false;
	if (vendor_line_free(line, 1000000000, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		if (unreaped)
			return ret;
	}
close_port:
	gpuar_port_close(port);
close_gpu:
	vendor_close(gpu);
	return ret;
}
