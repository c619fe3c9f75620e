// SPDX-License-Identifier: MIT
/*
 * gpuar CUDA quick start: await a CUDA stream through a completion port.
 * The queue opens the driver, a port and lines, and picks the slot, the
 * user data and the plan for each await. The driver is loaded at run
 * time: this builds without the CUDA toolkit and, with no GPU, says
 * "skipped" and exits 0. Pass the stream your kernels run on (a
 * cudaStream_t converts to struct CUstream_st *); here it is the
 * per-thread default stream.
 *
 *   cc cuda_quickstart.c $(pkg-config --cflags --libs gpuar) && ./a.out
 */
#include <gpuar/cuda.h>
#include <stdio.h>

#define STREAM ((struct CUstream_st *)0x2)	/* CU_STREAM_PER_THREAD */

int main(void)
{
	struct gpuar_vendor_completion done;
	struct gpuar_cuda_queue *queue;
	struct gpuar_error err;
	uint64_t id;

	if (gpuar_cuda_queue_open(&queue, 0, &err) < 0) {
		printf("skipped: %s\n", err.message);	/* no driver or device */
		return 0;
	}
	/* The record arrives once the stream's work so far is done. */
	if (gpuar_cuda_queue_await(queue, STREAM, &id, &err) < 0 ||
	    gpuar_cuda_queue_reap(queue, &done, 1, -1, &err) != 1) {
		fprintf(stderr, "%s\n", err.message);
		gpuar_cuda_queue_close(queue, 1000000000, NULL);
		return 1;
	}
	printf("stream done: user_data=%llu (await %llu) status=%d\n",
	       (unsigned long long)done.record.user_data,
	       (unsigned long long)id, done.record.status);
	if (gpuar_cuda_queue_close(queue, 1000000000, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	return done.record.status == 0 ? 0 : 1;
}
