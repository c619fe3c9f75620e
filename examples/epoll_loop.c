// SPDX-License-Identifier: MIT
/*
 * A port in a plain epoll loop, next to other fds (here stdin). The port
 * fd turns readable when a record is ready or, for the userspace engine,
 * when the engine must run a check: the loop then calls
 * gpuar_port_process() and reaps whatever records it produced. A wake-up
 * that yields no record is normal (a check that found the work pending).
 */
#include <gpuar/gpuar.h>

#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#define WAITS 4

int main(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct gpuar_soft_producer *device;
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_error err;
	int ep, done = 0, wakes = 0, i;

	if (gpuar_port_open(&port, NULL, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	printf("engine: %s\n", gpuar_engine_name(gpuar_port_engine(port)));
	if (gpuar_line_alloc(port, &line) < 0 || gpuar_soft_producer_new(&device) < 0)
		return 1;
	for (i = 0; i < WAITS; i++) {
		struct gpuar_word_wait w = {
			.user_data = (uint64_t)i, .target = 1, .point = 1,
			.line = gpuar_line_id(line), .slot = (uint32_t)i,
		};

		gpuar_plan_from_text("flag:park_us=200,backstop_us=1000000", &w.plan, NULL);
		if (gpuar_submit_word_waits(port, &w, 1, NULL) < 0)
			return 1;
		/* work of 10, 20, 30, 40 ms, finishing out of submission order */
		gpuar_soft_store_after(device, &gpuar_line_words(line)[i], 1,
				       (uint64_t)(WAITS - i) * 10000000);
	}

	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = gpuar_port_fd(port);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	ev.data.fd = STDIN_FILENO;
	epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev);	/* fails harmlessly if not pollable */

	while (done < WAITS) {
		struct epoll_event ready[4];
		int n = epoll_wait(ep, ready, 4, 1000);

		for (i = 0; i < n; i++) {
			struct gpuar_record rec[WAITS];
			int got, j;

			if (ready[i].data.fd != gpuar_port_fd(port))
				continue;	/* another fd of the application */
			wakes++;
			gpuar_port_process(port);
			got = gpuar_reap(port, rec, WAITS, 0);
			for (j = 0; j < got; j++)
				printf("wait %llu: %s after %llu us\n",
				       (unsigned long long)rec[j].user_data,
				       gpuar_outcome_name(rec[j].outcome),
				       (unsigned long long)(rec[j].complete_ns -
							    rec[j].start_ns) / 1000);
			done += got > 0 ? got : 0;
		}
	}
	printf("%d records, %d wake-ups of the port fd\n", done, wakes);
	close(ep);
	gpuar_soft_producer_free(device);
	gpuar_port_close(port);
	return 0;
}
