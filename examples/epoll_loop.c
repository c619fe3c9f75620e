// SPDX-License-Identifier: MIT
/*
 * A port in a plain epoll loop, next to other fds (here stdin), with
 * imminent readiness (GPUAR_PORT_IMMINENT): jobs of the same 5 ms run one
 * after another at one call site, the estimator learns their duration,
 * and from then on the port turns ready shortly before each completion
 * (the kernel engine raises EPOLLPRI, the user engine's fd turns
 * readable); the loop's gpuar_port_reap(.., 0) then watches the word in this
 * thread until the store and returns the record at about a spin's
 * latency. The port fd is also readable when a record is ready or, for
 * the user engine, when the engine must run a check: a wake-up that
 * yields no record is normal (a check that found the work pending).
 */
#include <gpuar/gpuar.h>

#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#define JOBS 8
#define JOB_NS 5000000ULL	/* 5 ms of "GPU work" each */
#define PLAN "flag:park_us=200,backstop_us=1000000" \
	"+predict:margin_us=100,min_sleep_us=20,max_sleep_us=50000,window=4"

/*
 * The application's other fd: take what is there. At end of file (or an
 * error) stop watching it: a level-triggered epoll would report it
 * readable again at every call, and the loop would spin.
 */
static void drain_stdin(int ep)
{
	char buf[256];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		epoll_ctl(ep, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
}

static int submit(struct gpuar_port *port, struct gpuar_line *line,
		  struct gpuar_soft_producer *device, uint64_t job)
{
	struct gpuar_word_wait w = {
		.user_data = job, .target = job, .point = 1,
		.line = gpuar_line_id(line),
	};

	gpuar_plan_from_text(PLAN, &w.plan, NULL);
	if (gpuar_submit_word_waits(port, &w, 1, NULL) != 1)
		return -1;
	return gpuar_soft_store_after(device, &gpuar_line_words(line)[0], job,
				      JOB_NS);
}

int main(void)
{
	struct gpuar_port_options opts = { .flags = GPUAR_PORT_IMMINENT };
	struct epoll_event ev = { .events = EPOLLIN | EPOLLPRI };
	struct gpuar_soft_producer *device;
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_error err;
	int ep, done = 0, wakes = 0, i;

	if (gpuar_port_open(&port, &opts, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	if (err.code != GPUAR_OK)	/* a warning: the open went ahead */
		fprintf(stderr, "%s\n", err.message);
	printf("engine: %s, imminent readiness: %s\n",
	       gpuar_engine_name(gpuar_port_engine(port)),
	       gpuar_port_imminent(port) ? "on" : "off");
	if (gpuar_line_alloc(port, &line) < 0 || gpuar_soft_producer_new(&device) < 0)
		return 1;
	if (submit(port, line, device, 1) < 0)
		return 1;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = gpuar_port_fd(port);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	ev.events = EPOLLIN;
	ev.data.fd = STDIN_FILENO;
	epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev);	/* fails harmlessly if not pollable */

	while (done < JOBS) {
		struct epoll_event ready[4];
		int n = epoll_wait(ep, ready, 4, 1000);

		for (i = 0; i < n; i++) {
			struct gpuar_record rec;
			uint64_t stored;

			if (ready[i].data.fd != gpuar_port_fd(port)) {
				drain_stdin(ep);	/* another fd of the application */
				continue;
			}
			wakes++;
			/*
			 * One call at any readiness: queued records first; else
			 * it claims the imminent wait and watches its word.
			 */
			if (gpuar_port_reap(port, &rec, 1, 0) != 1)
				continue;
			stored = gpuar_soft_stored_at(device, &gpuar_line_words(line)[0],
						      rec.user_data);
			printf("job %llu: %s, seen %llu us after the store\n",
			       (unsigned long long)rec.user_data,
			       gpuar_outcome_name(rec.outcome),
			       (unsigned long long)(gpuar_now_ns() - stored) / 1000);
			if (++done < JOBS && submit(port, line, device, rec.user_data + 1) < 0)
				return 1;
		}
	}
	printf("%d records, %d wake-ups of the port fd\n", done, wakes);
	close(ep);
	gpuar_soft_producer_free(device);
	gpuar_port_close(port);
	return 0;
}
