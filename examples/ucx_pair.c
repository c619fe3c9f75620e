// SPDX-License-Identifier: MIT
/*
 * GPU completion meets the network in one loop: UCX beside a gpuar port.
 *
 * Two processes on one machine, each running one epoll loop that holds a
 * UCX worker's event fd (ucp_worker_get_efd) and a gpuar port's fd:
 *
 *   sender    starts "GPU work" (the soft producer stores a word when it
 *             is done), awaits it through its port, and tag-sends the
 *             result the moment the record arrives; then the next job.
 *   receiver  receives each result and hands it to its own "GPU work",
 *             awaited through its own port.
 *
 * Neither loop spins: each sleeps in epoll_wait until the port or the
 * worker has something. The UCX rule for sleeping is progress until
 * ucp_worker_progress returns 0, then ucp_worker_arm: UCS_ERR_BUSY means
 * events came in meanwhile (progress again), UCS_OK means the fd will be
 * signalled by the next one.
 *
 * Transports: loopback only. UCX_TLS defaults to "tcp" with
 * UCX_NET_DEVICES=lo; --transport sm uses shared memory ("sm": posix,
 * sysv, cma). The receiver prints, per message, the latency from the
 * word's store (the end of the sender's GPU work) to the sender's record,
 * and to the receiver's completed receive, and both processes print the
 * CPU time of their loop's thread and of the whole process, and their
 * epoll wake-ups, per message.
 *
 *   ucx_pair [--messages N] [--work-us US] [--transport tcp|sm]
 */
#include <gpuar/gpuar.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define RESULT_TAG 0x6770756172ULL	/* "gpuar" */
#define EPOLL_TIMEOUT_MS 1000
#define RUN_LIMIT_S 60			/* the example stops itself */
#define CONSUME_NS 50000		/* the receiver's own GPU work */

/* What the sender sends: the job and when its completion was seen. */
struct result {
	uint64_t seq;
	uint64_t stored_ns;	/* the word's store: the GPU work ended */
	uint64_t record_ns;	/* the sender's port produced the record */
};

struct side {
	const char *name;
	ucp_context_h context;
	ucp_worker_h worker;
	int worker_fd, epoll_fd;
	int peer_fd;		/* the socket the address came over */
	int peer_gone;		/* it reached EOF */
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_soft_producer *gpu;
	struct gpuar_plan plan;
	uint64_t wakes;
	struct gpuar_record last;	/* the record the loop was waiting for */
	int have_record;
};

struct request_done {
	int done;
	ucs_status_t status;
};

_Noreturn static void die(const char *what, const char *why)
{
	fprintf(stderr, "ucx_pair: %s: %s\n", what, why);
	exit(1);
}

static void check_ucs(ucs_status_t st, const char *what)
{
	if (st != UCS_OK)
		die(what, ucs_status_string(st));
}

static void watch(int epoll_fd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl", strerror(errno));
}

static void side_open(struct side *s, const char *name, int peer_fd)
{
	ucp_params_t params = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP,
	};
	ucp_worker_params_t wparams = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	struct gpuar_error err;
	ucp_config_t *config;

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->peer_fd = peer_fd;
	check_ucs(ucp_config_read(NULL, NULL, &config), "ucp_config_read");
	check_ucs(ucp_init(&params, config, &s->context), "ucp_init");
	ucp_config_release(config);
	check_ucs(ucp_worker_create(s->context, &wparams, &s->worker),
		  "ucp_worker_create");
	check_ucs(ucp_worker_get_efd(s->worker, &s->worker_fd),
		  "ucp_worker_get_efd");

	if (gpuar_port_open(&s->port, NULL, &err) < 0)
		die("gpuar_port_open", err.message);
	if (gpuar_line_alloc(s->port, &s->line) < 0 ||
	    gpuar_soft_producer_new(&s->gpu) < 0)
		die(name, "line or soft producer");
	/* Sleep to just before the learned completion, then check often. */
	if (gpuar_plan_from_text("flag:park_us=50,backstop_us=1000000+predict:"
				 "margin_us=50,min_sleep_us=20,"
				 "max_sleep_us=100000,window=8",
				 &s->plan, &err) < 0)
		die("plan", err.message);

	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	watch(s->epoll_fd, s->worker_fd);
	watch(s->epoll_fd, gpuar_port_fd(s->port));
}

static void side_close(struct side *s)
{
	close(s->epoll_fd);
	gpuar_soft_producer_free(s->gpu);
	gpuar_port_close(s->port);
	ucp_worker_destroy(s->worker);
	ucp_cleanup(s->context);
}

/* Start "GPU work" that stores @seq into slot 0 after @ns, and await it. */
static void gpu_start(struct side *s, uint64_t seq, uint64_t ns)
{
	struct gpuar_word_wait w = {
		.user_data = seq, .target = seq, .point = 1,
		.line = gpuar_line_id(s->line), .slot = 0, .plan = s->plan,
	};

	if (gpuar_submit_word_waits(s->port, &w, 1, NULL) < 0)
		die(s->name, "gpuar_submit_word_waits");
	if (gpuar_soft_store_after(s->gpu, &gpuar_line_words(s->line)[0], seq,
				   ns) < 0)
		die(s->name, "gpuar_soft_store_after");
}

/*
 * Turn the loop until @stop is set (by a UCX callback, a record or the
 * peer's EOF): drain UCX, then sleep in epoll on every fd. A readable
 * port runs the engine and takes its record; a readable worker fd needs
 * nothing more than the progress at the top of the next turn.
 */
static void loop_until(struct side *s, const int *stop)
{
	while (!*stop) {
		struct epoll_event ready[2];
		ucs_status_t st;
		int n, i;

		while (ucp_worker_progress(s->worker))
			;
		if (*stop)
			break;
		st = ucp_worker_arm(s->worker);
		if (st == UCS_ERR_BUSY)
			continue;
		check_ucs(st, "ucp_worker_arm");
		n = epoll_wait(s->epoll_fd, ready, 2, EPOLL_TIMEOUT_MS);
		if (n < 0 && errno != EINTR)
			die("epoll_wait", strerror(errno));
		s->wakes++;
		for (i = 0; i < n; i++) {
			if (ready[i].data.fd == s->peer_fd) {
				char c;

				s->peer_gone = read(s->peer_fd, &c, 1) <= 0;
				continue;
			}
			if (ready[i].data.fd != gpuar_port_fd(s->port))
				continue;
			gpuar_port_process(s->port);
			if (gpuar_port_reap(s->port, &s->last, 1, 0) == 1) {
				if (s->last.status < 0)
					die(s->name, strerror(-s->last.status));
				s->have_record = 1;
			}
		}
	}
}

static void await_gpu(struct side *s)
{
	loop_until(s, &s->have_record);
	s->have_record = 0;
}

static void request_completed(void *request, ucs_status_t status,
			      void *user_data)
{
	struct request_done *rd = user_data;

	(void)request;
	rd->status = status;
	rd->done = 1;
}

static void received(void *request, ucs_status_t status,
		     const ucp_tag_recv_info_t *info, void *user_data)
{
	(void)info;
	request_completed(request, status, user_data);
}

/* Wait for a request of ucp_*_nbx (or its immediate status). */
static void await_request(struct side *s, ucs_status_ptr_t req,
			  struct request_done *rd, const char *what)
{
	if (UCS_PTR_IS_ERR(req))
		die(what, ucs_status_string(UCS_PTR_STATUS(req)));
	if (req == NULL)
		return;		/* completed in place */
	loop_until(s, &rd->done);
	check_ucs(rd->status, what);
	ucp_request_free(req);
}

/* CPU time of @clock (the process's, or the calling thread's), in us. */
static double cpu_us(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct cpu_mark {
	double process, loop;
	uint64_t wall_ns;
};

static void cpu_mark(struct cpu_mark *m)
{
	m->process = cpu_us(CLOCK_PROCESS_CPUTIME_ID);
	m->loop = cpu_us(CLOCK_THREAD_CPUTIME_ID);
	m->wall_ns = gpuar_now_ns();
}

/*
 * CPU per message: the loop's thread, and the whole process, which also
 * holds the soft producer's thread (it spins the last 50 us before each
 * store, as a GPU stand-in that is not the waiter's cost) and UCX's.
 */
static void report_cpu(struct side *s, unsigned int messages,
		       const struct cpu_mark *start)
{
	struct cpu_mark end;
	double wall;

	cpu_mark(&end);
	wall = (double)(end.wall_ns - start->wall_ns) / 1e3;
	printf("%s: loop thread CPU %.1f us/message (%.0f%% of a core), "
	       "process %.1f us/message, %.2f epoll wake-ups/message\n",
	       s->name, (end.loop - start->loop) / messages,
	       100 * (end.loop - start->loop) / wall,
	       (end.process - start->process) / messages,
	       (double)s->wakes / messages);
	fflush(stdout);
}

/* ------------------------------------------------------------ sender */

static void sender(int sock, unsigned int messages, uint64_t work_ns)
{
	struct side s;
	ucp_ep_params_t ep_params = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS };
	struct request_done rd;
	ucp_request_param_t param = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
		.cb.send = request_completed, .user_data = &rd,
	};
	struct result res;
	size_t len;
	void *addr;
	struct cpu_mark start;
	ucp_ep_h ep;

	side_open(&s, "sender", -1);
	if (read(sock, &len, sizeof(len)) != sizeof(len))
		die("sender", "reading the receiver's worker address");
	addr = malloc(len);
	if (!addr || read(sock, addr, len) != (ssize_t)len)
		die("sender", "reading the receiver's worker address");
	ep_params.address = addr;
	check_ucs(ucp_ep_create(s.worker, &ep_params, &ep), "ucp_ep_create");
	free(addr);

	cpu_mark(&start);
	for (uint64_t seq = 1; seq <= messages; seq++) {
		gpu_start(&s, seq, work_ns);
		await_gpu(&s);
		res.seq = seq;
		res.record_ns = s.last.complete_ns;
		res.stored_ns = gpuar_soft_stored_at(s.gpu,
						     &gpuar_line_words(s.line)[0], seq);
		rd.done = 0;
		await_request(&s, ucp_tag_send_nbx(ep, &res, sizeof(res),
						   RESULT_TAG, &param),
			      &rd, "ucp_tag_send_nbx");
	}
	report_cpu(&s, messages, &start);

	rd.done = 0;
	param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	await_request(&s, ucp_ep_close_nbx(ep, &param), &rd, "ucp_ep_close_nbx");
	side_close(&s);
}

/* ---------------------------------------------------------- receiver */

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * @later - @earlier, or 0: a check's time is read before its load of the
 * word and the store's time just before the store, so a check that saw
 * the store can carry a time a little before it.
 */
static uint64_t since(uint64_t later, uint64_t earlier)
{
	return later > earlier ? later - earlier : 0;
}

static void print_latency(const char *what, uint64_t *ns, unsigned int n)
{
	qsort(ns, n, sizeof(*ns), by_value);
	printf("  %-28s p50 %6.1f us  p99 %6.1f us  max %6.1f us\n", what,
	       (double)ns[n / 2] / 1e3, (double)ns[n * 99 / 100] / 1e3,
	       (double)ns[n - 1] / 1e3);
}

static void receiver(int sock, unsigned int messages)
{
	struct side s;
	struct request_done rd;
	ucp_request_param_t param = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
		.cb.recv = received, .user_data = &rd,
	};
	uint64_t *to_port = calloc(messages, sizeof(uint64_t));
	uint64_t *to_peer = calloc(messages, sizeof(uint64_t));
	ucp_address_t *addr;
	struct cpu_mark start;
	struct result res;
	size_t len;

	side_open(&s, "receiver", sock);
	check_ucs(ucp_worker_get_address(s.worker, &addr, &len),
		  "ucp_worker_get_address");
	if (!to_port || !to_peer || write(sock, &len, sizeof(len)) != sizeof(len) ||
	    write(sock, addr, len) != (ssize_t)len)
		die("receiver", "sending the worker address");
	ucp_worker_release_address(s.worker, addr);

	cpu_mark(&start);
	for (unsigned int i = 0; i < messages; i++) {
		uint64_t now;

		rd.done = 0;
		await_request(&s, ucp_tag_recv_nbx(s.worker, &res, sizeof(res),
						   RESULT_TAG, UINT64_MAX, &param),
			      &rd, "ucp_tag_recv_nbx");
		now = gpuar_now_ns();
		if (res.seq != i + 1 || !res.stored_ns)
			die("receiver", "results out of order");
		to_port[i] = since(res.record_ns, res.stored_ns);
		to_peer[i] = since(now, res.stored_ns);
		gpu_start(&s, res.seq, CONSUME_NS);	/* consume the result */
		await_gpu(&s);
	}
	report_cpu(&s, messages, &start);
	printf("%u messages, from the end of the sender's GPU work:\n", messages);
	print_latency("to the sender's record", to_port, messages);
	print_latency("to the receiver's receive", to_peer, messages);
	fflush(stdout);
	free(to_port);
	free(to_peer);

	/*
	 * The sender closes the socket once its endpoint is closed, which
	 * takes this worker's part: keep progressing until then.
	 */
	watch(s.epoll_fd, sock);
	loop_until(&s, &s.peer_gone);
	side_close(&s);
}

int main(int argc, char **argv)
{
	unsigned int messages = 1000;
	uint64_t work_ns = 200000;
	const char *transport = "tcp";
	int sv[2], status;
	pid_t child;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--messages"))
			messages = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--work-us"))
			work_ns = strtoull(argv[i + 1], NULL, 0) * 1000;
		else if (!strcmp(argv[i], "--transport"))
			transport = argv[i + 1];
		else
			die(argv[i], "unknown option");
	}
	if (argc % 2 == 0 || messages == 0)
		die("usage", "ucx_pair [--messages N] [--work-us US] [--transport tcp|sm]");
	/* Loopback only, unless the caller's UCX_* environment says more. */
	if (!strcmp(transport, "tcp")) {
		setenv("UCX_TLS", "tcp", 0);
		setenv("UCX_NET_DEVICES", "lo", 0);
	} else {
		setenv("UCX_TLS", "sm", 0);
	}
	printf("ucx_pair: %u messages, %llu us of GPU work each, UCX_TLS=%s\n",
	       messages, (unsigned long long)work_ns / 1000, getenv("UCX_TLS"));
	fflush(stdout);

	alarm(RUN_LIMIT_S);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair", strerror(errno));
	child = fork();
	if (child < 0)
		die("fork", strerror(errno));
	if (child == 0) {
		alarm(RUN_LIMIT_S);	/* alarms are not inherited */
		close(sv[0]);
		receiver(sv[1], messages);
		return 0;
	}
	close(sv[1]);
	sender(sv[0], messages, work_ns);
	close(sv[0]);
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		die("receiver", "failed");
	return 0;
}
