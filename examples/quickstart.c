// SPDX-License-Identifier: MIT
/*
 * gpuar quick start: wait for a "GPU" store through a completion port.
 * Runs anywhere: with the gpuar module loaded the port is the kernel's,
 * otherwise the library's userspace port; the device is the soft backend
 * (a CPU thread storing into the line, as a GPU stream would).
 *
 *   cc quickstart.c $(pkg-config --cflags --libs gpuar) && ./a.out
 */
#include <gpuar/gpuar.h>
#include <stdio.h>

int main(void)
{
	struct gpuar_port_options opts = { .engine = GPUAR_ENGINE_AUTO };
	struct gpuar_word_wait wait = { .user_data = 42, .target = 1, .point = 1 };
	struct gpuar_soft_producer *device;
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_record rec;
	struct gpuar_error err;

	/* A port: the kernel's if /dev/gpuar is there, else the userspace one. */
	if (gpuar_port_open(&port, &opts, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	if (err.code != GPUAR_OK)
		printf("note: %s\n", err.message);	/* which engine and why */
	printf("engine: %s\n", gpuar_engine_name(gpuar_port_engine(port)));

	/* A completion line (8 words) and a wait for slot 0 to reach 1. */
	if (gpuar_line_alloc(port, &line) < 0 ||
	    gpuar_plan_from_text("flag:park_us=100,backstop_us=1000000",
				 &wait.plan, &err) < 0)
		return 1;
	wait.line = gpuar_line_id(line);
	wait.slot = 0;
	if (gpuar_submit_word_waits(port, &wait, 1, NULL) < 0)
		return 1;

	/* The "GPU": stores 1 into slot 0 after 20 ms of work. */
	if (gpuar_soft_producer_new(&device) < 0)
		return 1;
	gpuar_soft_store_after(device, &gpuar_line_words(line)[0], 1, 20000000);

	/* Block until the completion record arrives. */
	if (gpuar_reap(port, &rec, 1, -1) != 1)
		return 1;
	printf("record: user_data=%llu outcome=%s status=%d value=%llu "
	       "checks=%u waited=%llu us\n",
	       (unsigned long long)rec.user_data, gpuar_outcome_name(rec.outcome),
	       rec.status, (unsigned long long)rec.value, rec.checks,
	       (unsigned long long)(rec.complete_ns - rec.start_ns) / 1000);

	gpuar_soft_producer_free(device);
	gpuar_port_close(port);
	return rec.status == 0 ? 0 : 1;
}
