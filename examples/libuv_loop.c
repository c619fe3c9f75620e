// SPDX-License-Identifier: MIT
/*
 * A port in another event loop: libuv. uv_poll watches the port fd; its
 * callback runs the engine (gpuar_port_process) and reaps the records. A
 * uv_timer runs beside it to show the loop is free while the GPU works.
 */
#include <gpuar/gpuar.h>

#include <stdio.h>
#include <uv.h>

struct app {
	struct gpuar_port *port;
	uv_poll_t poll;
	uv_timer_t ticker;
	int ticks;
	int records;
};

static void on_port(uv_poll_t *h, int status, int events)
{
	struct app *app = h->data;
	struct gpuar_record rec;

	(void)events;
	if (status < 0)
		return;
	gpuar_port_process(app->port);
	while (gpuar_reap(app->port, &rec, 1, 0) == 1) {
		printf("record %llu: %s, %u checks\n",
		       (unsigned long long)rec.user_data,
		       gpuar_outcome_name(rec.outcome), rec.checks);
		app->records++;
	}
	if (app->records == 1) {
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
	struct gpuar_word_wait w = { .user_data = 7, .target = 1, .point = 1 };
	struct gpuar_soft_producer *device;
	struct gpuar_line *line;
	struct app app = { 0 };
	uv_loop_t *loop = uv_default_loop();

	if (gpuar_port_open(&app.port, NULL, NULL) < 0 ||
	    gpuar_line_alloc(app.port, &line) < 0 ||
	    gpuar_soft_producer_new(&device) < 0)
		return 1;
	gpuar_plan_from_text("poll", &w.plan, NULL);
	w.line = gpuar_line_id(line);
	if (gpuar_submit_word_waits(app.port, &w, 1, NULL) < 0)
		return 1;
	gpuar_soft_store_after(device, &gpuar_line_words(line)[0], 1, 30000000);

	uv_poll_init(loop, &app.poll, gpuar_port_fd(app.port));
	app.poll.data = &app;
	uv_poll_start(&app.poll, UV_READABLE, on_port);
	uv_timer_init(loop, &app.ticker);
	app.ticker.data = &app;
	uv_timer_start(&app.ticker, on_tick, 5, 5);
	uv_run(loop, UV_RUN_DEFAULT);
	printf("%d record(s); the loop ticked %d times meanwhile\n", app.records,
	       app.ticks);
	uv_close((uv_handle_t *)&app.poll, NULL);
	uv_close((uv_handle_t *)&app.ticker, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
	gpuar_soft_producer_free(device);
	gpuar_port_close(app.port);
	return app.records == 1 ? 0 : 1;
}
