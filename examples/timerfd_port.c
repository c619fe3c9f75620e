// SPDX-License-Identifier: MIT
/*
 * A periodic timer and a completion port in one epoll loop: a render or
 * control loop that ticks every 5 ms and takes the GPU's completions as
 * they come, sleeping in between. Nothing spins: each wake-up is a tick
 * or the port (a record, or for the user engine a check that is due).
 *
 * The "GPU" is the soft backend: two jobs of 12 and 31 ms.
 *
 *   cc timerfd_port.c $(pkg-config --cflags --libs gpuar) && ./a.out
 */
#include <gpuar/gpuar.h>

#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define JOBS 2
#define TICK_NS 5000000

int main(void)
{
	static const uint64_t work_ns[JOBS] = { 12000000, 31000000 };
	struct itimerspec every = {
		.it_interval = { .tv_nsec = TICK_NS }, .it_value = { .tv_nsec = TICK_NS },
	};
	struct epoll_event ev = { .events = EPOLLIN };
	struct gpuar_soft_producer *device;
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_error err;
	unsigned long long ticks = 0, port_wakes = 0;
	int ep, tfd, done = 0;

	if (gpuar_port_open(&port, NULL, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	if (err.code != GPUAR_OK)
		printf("note: %s\n", err.message);
	printf("engine: %s\n", gpuar_engine_name(gpuar_port_engine(port)));
	if (gpuar_line_alloc(port, &line) < 0 || gpuar_soft_producer_new(&device) < 0)
		return 1;
	for (uint32_t i = 0; i < JOBS; i++) {
		struct gpuar_word_wait w = {
			.user_data = i, .target = 1, .point = 1,
			.line = gpuar_line_id(line), .slot = i,
		};

		if (gpuar_plan_from_text("flag:park_us=200,backstop_us=1000000",
					 &w.plan, &err) < 0) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
		if (gpuar_submit_word_waits(port, &w, 1, NULL) < 0)
			return 1;
		gpuar_soft_store_after(device, &gpuar_line_words(line)[i], 1, work_ns[i]);
	}

	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (tfd < 0 || ep < 0 || timerfd_settime(tfd, 0, &every, NULL) < 0)
		return 1;
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = gpuar_port_fd(port);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);

	while (done < JOBS) {
		struct epoll_event ready[2];
		int n = epoll_wait(ep, ready, 2, 1000);

		for (int i = 0; i < n; i++) {
			struct gpuar_record rec[JOBS];
			uint64_t expirations;
			int got;

			if (ready[i].data.fd == tfd) {
				/* Reading the count re-arms readiness for the next tick. */
				if (read(tfd, &expirations, sizeof(expirations)) ==
				    sizeof(expirations))
					ticks += expirations;
				continue;
			}
			port_wakes++;
			gpuar_port_process(port);	/* the user engine's checks */
			got = gpuar_port_reap(port, rec, JOBS, 0);
			for (int j = 0; j < got; j++)
				printf("tick %llu: job %llu done, %s, %llu us after submit\n",
				       ticks, (unsigned long long)rec[j].user_data,
				       gpuar_outcome_name(rec[j].outcome),
				       (unsigned long long)(rec[j].complete_ns -
							    rec[j].start_ns) / 1000);
			done += got > 0 ? got : 0;
		}
	}
	printf("%d jobs, %llu ticks, %llu port wake-ups\n", done, ticks, port_wakes);
	close(ep);
	close(tfd);
	gpuar_soft_producer_free(device);
	gpuar_port_close(port);
	return 0;
}
