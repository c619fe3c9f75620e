// SPDX-License-Identifier: MIT
/*
 * gpuar-bench --strategies service (bench_service.h): the loop, its
 * client, and the never-completing wait.
 *
 * The loop is what a service's is: one thread, one epoll set over the
 * listening socket, the accepted connection and the port's fd; at the
 * port's readiness gpuar_port_process() and a zero-timeout reap of what
 * it counted, each record answered by the next job (a soft producer's
 * store the job's length later), so one GPU wait is always in flight.
 * The client sends a 64-byte message, waits for its echo and times the
 * round trip, then pauses a random 100..400 us, so messages land at
 * every phase of the GPU waits, the claimed stretches included.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gpuar/gpuar.h>

#include "bench_service.h"

#define MSG_BYTES 64
#define TRAIN_JOBS 16

static uint64_t now_ns(void)
{
	return gpuar_now_ns();
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL),
			       (long)(ns % 1000000000ULL) };

	nanosleep(&ts, NULL);
}

struct client {
	pthread_t thread;
	uint16_t port;
	uint32_t messages;
	double *rtt_us;
	uint32_t done;
	uint64_t errors;
	int wake;		/* written when the client is finished */
};

static bool io_all(int fd, char *buf, size_t len, bool send_it)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send_it ? send(fd, buf + off, len - off, MSG_NOSIGNAL) :
			    recv(fd, buf + off, len - off, 0);

		if (n <= 0 && !(n < 0 && errno == EINTR))
			return false;
		if (n > 0)
			off += (size_t)n;
	}
	return true;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = c->port };
	char buf[MSG_BYTES] = { 0 };
	unsigned int seed = 12345;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		c->errors++;
		goto out;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (uint32_t i = 0; i < c->messages; i++) {
		uint64_t t0 = now_ns();

		memcpy(buf, &i, sizeof(i));
		if (!io_all(fd, buf, sizeof(buf), true) ||
		    !io_all(fd, buf, sizeof(buf), false)) {
			c->errors++;
			break;
		}
		c->rtt_us[c->done++] = (double)(now_ns() - t0) / 1e3;
		sleep_ns(100000 + (uint64_t)(rand_r(&seed) % 300000));
	}
out:
	if (fd >= 0)
		close(fd);
	{
		uint64_t v = 1;

		if (write(c->wake, &v, sizeof(v)) < 0)
			c->errors++;
	}
	return NULL;
}

/* The echo server's listening socket on 127.0.0.1, any port. */
static int listen_loopback(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		int err = errno;

		close(fd);
		return -err;
	}
	*port = a.sin_port;
	return fd;
}

/* A port, its line and a producer: one GPU stream. */
struct gpu {
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_soft_producer *prod;
	uint64_t *word;
	uint64_t seq;
	uint64_t work_ns;
	struct gpuar_word_wait wait;
};

/* How a mode's port watches: no imminent readiness, sliced, whole lease. */
enum watch { WATCH_NONE, WATCH_SLICED, WATCH_LEASE };

static int gpu_open(struct gpu *g, enum gpuar_engine engine, enum watch watch,
		    const struct bench_service_config *cfg, char *why, size_t size)
{
	struct gpuar_port_options o = {
		.engine = engine,
		.flags = GPUAR_PORT_STRICT |
			 (watch != WATCH_NONE ? GPUAR_PORT_IMMINENT : 0),
		.device_path = cfg->device_path,
		.claim_slice_us = watch == WATCH_LEASE ? GPUAR_CLAIM_SLICE_OFF : 0,
	};
	struct gpuar_error err = { 0 };
	int r;

	memset(g, 0, sizeof(*g));
	g->work_ns = cfg->work_ns;
	r = gpuar_port_open(&g->port, &o, &err);
	if (r) {
		snprintf(why, size, "%.150s", err.message);
		return r;
	}
	r = gpuar_line_alloc(g->port, &g->line);
	if (!r)
		r = gpuar_soft_producer_new(&g->prod);
	if (r) {
		snprintf(why, size, "line or producer: %s", strerror(-r));
		return r;
	}
	g->word = &gpuar_line_words(g->line)[0];
	g->wait.line = gpuar_line_id(g->line);
	g->wait.point = GPUAR_POINT_OF_SLOT(g->wait.line, 0);
	gpuar_plan_from_text("default", &g->wait.plan, NULL);
	return 0;
}

static void gpu_close(struct gpu *g)
{
	gpuar_soft_producer_free(g->prod);
	gpuar_port_close(g->port);
}

/* The next job: a wait on it, its store @delay_ns later (0: never). */
static int gpu_submit(struct gpu *g, uint64_t delay_ns)
{
	int r;

	g->seq++;
	g->wait.target = g->wait.user_data = g->seq;
	g->wait.start_ns = 0;
	r = gpuar_submit_word_waits(g->port, &g->wait, 1, NULL);
	if (r < 0)
		return r;
	return delay_ns ? gpuar_soft_store_after(g->prod, g->word, g->seq,
						 delay_ns) : 0;
}

/* Train the point, so the loop's waits sleep on a prediction. */
static int gpu_train(struct gpu *g)
{
	struct gpuar_record rec;

	for (int i = 0; i < TRAIN_JOBS; i++) {
		int r = gpu_submit(g, g->work_ns);

		if (r)
			return r;
		r = gpuar_port_reap(g->port, &rec, 1, 2000000000LL);
		if (r != 1)
			return r < 0 ? r : -EIO;
	}
	return 0;
}

static uint64_t port_claims(struct gpuar_port *port)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };

	return gpuar_port_stats(port, &st) ? 0 : st.claims;
}

static uint64_t port_checks(struct gpuar_port *port)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };

	return gpuar_port_stats(port, &st) ? 0 : st.checks;
}

struct loop {
	int ep, lfd, conn, wake;
	struct gpu *g;
	double *gpu_us;
	uint64_t gpu_n, gpu_cap, errors;
	bool client_done;
};

enum { TAG_LISTEN = 1, TAG_CONN, TAG_PORT, TAG_WAKE };

static void echo(struct loop *l)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(l->conn, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		if (!io_all(l->conn, buf, (size_t)n, true))
			l->errors++;
}

/* The port is ready: run it, take what it counted, start the next job. */
static void serve_port(struct loop *l)
{
	struct gpuar_record rec[8];
	int n = gpuar_port_process(l->g->port);

	if (n <= 0) {
		if (n < 0)
			l->errors++;
		return;
	}
	n = gpuar_port_reap(l->g->port, rec, 8, 0);
	for (int i = 0; i < n; i++) {
		uint64_t at = gpuar_soft_stored_at(l->g->prod, l->g->word,
						   rec[i].user_data);
		uint64_t seen = now_ns();

		if (rec[i].status || !at)
			l->errors++;
		else if (l->gpu_n < l->gpu_cap)
			l->gpu_us[l->gpu_n++] = (double)(seen - at) / 1e3;
		if (gpu_submit(l->g, l->g->work_ns))
			l->errors++;
	}
}

static int loop_add(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void loop_run(struct loop *l)
{
	struct epoll_event ev[8];
	int one = 1;

	while (!l->client_done) {
		int n = epoll_wait(l->ep, ev, 8, 2000);

		if (n <= 0) {
			if (n == 0 || errno != EINTR) {
				l->errors++;
				return;
			}
			continue;
		}
		for (int i = 0; i < n; i++) {
			switch (ev[i].data.u64) {
			case TAG_LISTEN:
				l->conn = accept4(l->lfd, NULL, NULL,
						  SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (l->conn < 0 || loop_add(l->ep, l->conn, TAG_CONN))
					l->errors++;
				else
					setsockopt(l->conn, IPPROTO_TCP,
						   TCP_NODELAY, &one, sizeof(one));
				break;
			case TAG_CONN:
				echo(l);
				break;
			case TAG_PORT:
				serve_port(l);
				break;
			case TAG_WAKE:
				l->client_done = true;
				break;
			}
		}
	}
}

static void run_mode(enum gpuar_engine engine, enum watch watch,
		     const struct bench_service_config *cfg,
		     struct bench_service_mode *m)
{
	struct gpu g;
	struct client c = { .messages = cfg->messages };
	struct loop l = { .ep = -1, .lfd = -1, .conn = -1, .g = &g };
	uint64_t claims0;
	int r;

	memset(m, 0, sizeof(*m));
	if (gpu_open(&g, engine, watch, cfg, m->reason, sizeof(m->reason))) {
		gpu_close(&g);
		return;
	}
	c.rtt_us = calloc(cfg->messages, sizeof(double));
	l.gpu_cap = cfg->messages * 4 + 64;
	l.gpu_us = calloc(l.gpu_cap, sizeof(double));
	c.wake = l.wake = eventfd(0, EFD_CLOEXEC);
	l.ep = epoll_create1(EPOLL_CLOEXEC);
	l.lfd = listen_loopback(&c.port);
	r = gpu_train(&g);
	if (!c.rtt_us || !l.gpu_us || l.wake < 0 || l.ep < 0 || l.lfd < 0 || r ||
	    loop_add(l.ep, l.lfd, TAG_LISTEN) ||
	    loop_add(l.ep, gpuar_port_fd(g.port), TAG_PORT) ||
	    loop_add(l.ep, l.wake, TAG_WAKE)) {
		snprintf(m->reason, sizeof(m->reason), "setting up: %s",
			 r ? strerror(-r) : strerror(errno));
		goto out;
	}
	claims0 = port_claims(g.port);
	if (gpu_submit(&g, g.work_ns) ||
	    pthread_create(&c.thread, NULL, client_main, &c)) {
		snprintf(m->reason, sizeof(m->reason), "starting the client");
		goto out;
	}
	loop_run(&l);
	pthread_join(c.thread, NULL);
	m->ran = true;
	m->rtt_n = c.done;
	bench_service_percentiles(c.rtt_us, c.done, &m->rtt_p50_us, &m->rtt_p99_us);
	m->gpu_n = l.gpu_n;
	bench_service_percentiles(l.gpu_us, l.gpu_n, &m->gpu_p50_us, &m->gpu_p99_us);
	m->errors = l.errors + c.errors + (c.done < cfg->messages);
	m->claims = port_claims(g.port) - claims0;
out:
	if (l.conn >= 0)
		close(l.conn);
	if (l.lfd >= 0)
		close(l.lfd);
	if (l.ep >= 0)
		close(l.ep);
	if (l.wake >= 0)
		close(l.wake);
	free(c.rtt_us);
	free(l.gpu_us);
	gpu_close(&g);
}

/*
 * Serve the port alone until @until: process, reap, and resubmit a
 * TIMEOUT (the backstop) with its original start, as a caller whose
 * work is merely late does.
 */
static int idle_serve(struct gpu *g, int ep, uint64_t until, uint64_t *resubmits)
{
	struct epoll_event ev;
	struct gpuar_record rec;
	uint64_t now;

	while ((now = now_ns()) < until) {
		int ms = (int)((until - now) / 1000000) + 1;
		int n = epoll_wait(ep, &ev, 1, ms);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		n = gpuar_port_process(g->port);
		if (n <= 0) {
			if (n < 0)
				return n;
			continue;
		}
		if (gpuar_port_reap(g->port, &rec, 1, 0) != 1)
			continue;
		if (rec.outcome != GPUAR_OUTCOME_TIMEOUT)
			return -EIO;	/* nothing stores: only timeouts come */
		g->wait.start_ns = rec.start_ns;
		n = gpuar_submit_word_waits(g->port, &g->wait, 1, NULL);
		if (n < 0)
			return n;
		(*resubmits)++;
	}
	return 0;
}

/* One wait whose store never comes, on a trained imminent port. */
static void run_idle(enum gpuar_engine engine,
		     const struct bench_service_config *cfg,
		     struct bench_service_idle *w)
{
	struct gpu g;
	uint64_t t0, c0, c1, c2, k1, t2;
	int ep = -1, r;

	memset(w, 0, sizeof(*w));
	if (gpu_open(&g, engine, WATCH_SLICED, cfg, w->reason, sizeof(w->reason)))
		goto out;
	ep = epoll_create1(EPOLL_CLOEXEC);
	r = gpu_train(&g);
	if (!r && (ep < 0 || loop_add(ep, gpuar_port_fd(g.port), TAG_PORT)))
		r = -errno;
	if (!r)
		r = gpu_submit(&g, 0);
	t0 = now_ns();
	c0 = process_cpu_ns();
	if (!r)
		r = idle_serve(&g, ep, t0 + 1000000000ULL, &w->resubmits);
	c1 = process_cpu_ns();
	k1 = port_checks(g.port);
	t2 = t0 + 1000000000ULL + (uint64_t)(cfg->idle_after_s * 1e9);
	if (!r)
		r = idle_serve(&g, ep, t2, &w->resubmits);
	c2 = process_cpu_ns();
	if (r) {
		snprintf(w->reason, sizeof(w->reason), "%s", strerror(-r));
		goto out;
	}
	w->ran = true;
	w->first_s_pct = (double)(c1 - c0) / 1e9 * 100;
	w->after_s = (double)(now_ns() - t0 - 1000000000ULL) / 1e9;
	w->after_pct = (double)(c2 - c1) / (w->after_s * 1e9) * 100;
	w->checks_after = port_checks(g.port) - k1;
out:
	if (ep >= 0)
		close(ep);
	gpu_close(&g);
}

int bench_service_main(const struct bench_service_config *cfg,
		       const char *json_path, FILE *out)
{
	static const struct {
		const char *name;
		enum gpuar_engine engine;
	} engines[BENCH_SERVICE_ENGINES] = {
		{ "user", GPUAR_ENGINE_USER },
		{ "kernel", GPUAR_ENGINE_KERNEL },
	};
	struct bench_service_result r = { .cfg = *cfg };
	int status = 0;

	for (unsigned int i = 0; i < BENCH_SERVICE_ENGINES; i++) {
		struct bench_service_engine *e = &r.eng[r.engines++];

		e->engine = engines[i].name;
		run_mode(engines[i].engine, WATCH_NONE, cfg, &e->off);
		run_mode(engines[i].engine, WATCH_SLICED, cfg, &e->on);
		run_mode(engines[i].engine, WATCH_LEASE, cfg, &e->on_lease);
		if (e->off.ran)
			run_idle(engines[i].engine, cfg, &e->idle);
		else
			memcpy(e->idle.reason, e->off.reason,
			       sizeof(e->idle.reason));
		if (e->off.errors || e->on.errors ||
		    e->on_lease.errors ||
		    (e->off.ran && (!e->on.ran || !e->on_lease.ran || !e->idle.ran)))
			status = 1;
	}
	if (!r.eng[0].off.ran)
		status = 1;
	if (json_path) {
		FILE *f = fopen(json_path, "w");

		if (!f || bench_service_write_json(f, &r) || fclose(f)) {
			fprintf(stderr, "gpuar-bench: --json %s: %s\n", json_path,
				strerror(errno));
			status = 1;
		}
	}
	bench_service_print_table(out, &r);
	return status;
}
