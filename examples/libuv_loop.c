// SPDX-License-Identifier: MIT
/*
 * A port in another event loop: libuv, with imminent readiness
 * (GPUAR_PORT_IMMINENT). uv_poll watches the port fd for readable and
 * prioritized (EPOLLPRI) events; its callback reaps without blocking,
 * which on an imminent wake claims the wait and watches its word until
 * the store. Jobs of the same 10 ms run one after another at one call
 * site, so the estimator predicts them from the third on. A uv_timer runs
 * beside it to show the loop is free while the GPU works.
 */
#include <gpuar/gpuar.h>

#include <stdio.h>
#include <uv.h>

#define JOBS 4
#define JOB_NS 10000000ULL
#define PLAN "flag:park_us=200,backstop_us=1000000" \
	"+predict:margin_us=100,min_sleep_us=20,max_sleep_us=50000,window=4"

struct app {
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_soft_producer *device;
	uv_poll_t poll;
	uv_timer_t ticker;
	int ticks;
	int records;
	int failed;
};

static int submit(struct app *app, uint64_t job)
{
	struct gpuar_word_wait w = {
		.user_data = job, .target = job, .point = 1,
		.line = gpuar_line_id(app->line),
	};

	gpuar_plan_from_text(PLAN, &w.plan, NULL);
	if (gpuar_submit_word_waits(app->port, &w, 1, NULL) != 1)
		return -1;
	return gpuar_soft_store_after(app->device,
				      &gpuar_line_words(app->line)[0], job, JOB_NS);
}

static void on_port(uv_poll_t *h, int status, int events)
{
	struct app *app = h->data;
	struct gpuar_record rec;

	(void)events;
	if (status < 0)
		return;
	/* Any readiness: queued records, or claim and watch the imminent wait. */
	while (gpuar_port_reap(app->port, &rec, 1, 0) == 1) {
		printf("job %llu: %s, %u checks\n",
		       (unsigned long long)rec.user_data,
		       gpuar_outcome_name(rec.outcome), rec.checks);
		if (++app->records < JOBS && submit(app, rec.user_data + 1) < 0)
			app->failed = 1;
	}
	if (app->records == JOBS || app->failed) {
		uv_poll_stop(&app->poll);
		uv_timer_stop(&app->ticker);
	}
}

static void on_tick(uv_timer_t *t)
{
	((struct app *)t->data)->ticks++;
}

int main(void)
{
	struct gpuar_port_options opts = { .flags = GPUAR_PORT_IMMINENT };
	struct app app = { 0 };
	uv_loop_t *loop = uv_default_loop();

	if (gpuar_port_open(&app.port, &opts, NULL) < 0 ||
	    gpuar_line_alloc(app.port, &app.line) < 0 ||
	    gpuar_soft_producer_new(&app.device) < 0 || submit(&app, 1) < 0)
		return 1;

	uv_poll_init(loop, &app.poll, gpuar_port_fd(app.port));
	app.poll.data = &app;
	uv_poll_start(&app.poll, UV_READABLE | UV_PRIORITIZED, on_port);
	uv_timer_init(loop, &app.ticker);
	app.ticker.data = &app;
	uv_timer_start(&app.ticker, on_tick, 5, 5);
	uv_run(loop, UV_RUN_DEFAULT);
	printf("%d record(s), imminent readiness %s; the loop ticked %d times meanwhile\n",
	       app.records, gpuar_port_imminent(app.port) ? "on" : "off", app.ticks);
	uv_close((uv_handle_t *)&app.poll, NULL);
	uv_close((uv_handle_t *)&app.ticker, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
	gpuar_soft_producer_free(app.device);
	gpuar_port_close(app.port);
	return app.records == JOBS && !app.failed ? 0 : 1;
}
