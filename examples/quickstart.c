// SPDX-License-Identifier: MIT
/*
 * gpuar quick start: wait for a "GPU" store through a completion port.
 * Runs anywhere: with the gpuar module loaded the port is the kernel's,
 * otherwise the library's userspace port. The "GPU" is a thread that
 * stores 1 into the line's first word after 20 ms of "work", as a stream
 * does behind its kernels (with CUDA, gpuar_cuda_queue_await enqueues
 * that store on your stream: examples/cuda_quickstart.c).
 *
 *   cc quickstart.c $(pkg-config --cflags --libs gpuar) && ./a.out
 */
#include <gpuar/gpuar.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void *gpu(void *word)
{
	nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);	/* the work */
	__atomic_store_n((uint64_t *)word, 1, __ATOMIC_RELEASE);	/* its store */
	return NULL;
}

int main(void)
{
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_record rec;
	struct gpuar_error err;
	pthread_t device;

	/* A port: the kernel's if /dev/gpuar is there, else the userspace one. */
	if (gpuar_port_open(&port, NULL, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	if (err.code != GPUAR_OK)
		printf("note: %s\n", err.message);	/* which engine, and why */

	/* A line (eight words), and a wait for word 0 to reach 1 under the
	 * default plan; its record will carry the user data 42. */
	if (gpuar_line_alloc(port, &line) < 0 ||
	    gpuar_port_await_word(port, line, 0, 1, 42, NULL) < 0)
		return 1;

	/* The "GPU" stores into word 0. */
	if (pthread_create(&device, NULL, gpu, &gpuar_line_words(line)[0]))
		return 1;

	/* Block until the record arrives (an event loop polls the port's fd). */
	if (gpuar_port_reap(port, &rec, 1, -1) != 1)
		return 1;
	pthread_join(device, NULL);
	printf("record: user_data=%llu status=%d value=%llu waited=%llu us\n",
	       (unsigned long long)rec.user_data, rec.status,
	       (unsigned long long)rec.value,
	       (unsigned long long)(rec.complete_ns - rec.start_ns) / 1000);

	gpuar_port_close(port);	/* frees its line too */
	return rec.status == 0 ? 0 : 1;
}
