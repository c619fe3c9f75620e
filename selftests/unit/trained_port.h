/* SPDX-License-Identifier: MIT */
/*
 * A user engine port with one line, a soft producer storing into its
 * first word, and a point trained on repeated work so that its later
 * waits sleep on a prediction: what the busy-read and imminent-readiness
 * suites wait on. Each wait's user data and target are its sequence
 * number.
 */
#ifndef GPUAR_UNIT_TRAINED_PORT_H
#define GPUAR_UNIT_TRAINED_PORT_H

#include <gpuar/gpuar.h>

#include <check.h>
#include <stdint.h>

struct trained_port {
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_soft_producer *prod;
	uint64_t *word;
	uint64_t seq;
	struct gpuar_word_wait wait;
};

static inline void trained_port_open(struct trained_port *f,
				     const struct gpuar_port_options *o,
				     const char *plan, uint64_t point)
{
	struct gpuar_error err;

	ck_assert_msg(gpuar_port_open(&f->port, o, &err) == 0, "%s",
		      err.message);
	ck_assert_int_eq(gpuar_line_alloc(f->port, &f->line), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&f->prod), 0);
	f->word = &gpuar_line_words(f->line)[0];
	f->seq = 0;
	f->wait = (struct gpuar_word_wait){
		.point = point,
		.line = gpuar_line_id(f->line),
	};
	ck_assert_int_eq(gpuar_plan_from_text(plan, &f->wait.plan, NULL), 0);
}

static inline void trained_port_close(struct trained_port *f)
{
	gpuar_soft_producer_free(f->prod);
	gpuar_port_close(f->port);
}

/* The next wait, its store @delay_ns later (0: no store). */
static inline void trained_port_submit(struct trained_port *f,
				       uint64_t delay_ns)
{
	f->seq++;
	f->wait.target = f->seq;
	f->wait.user_data = f->seq;
	ck_assert_int_eq(gpuar_submit_word_waits(f->port, &f->wait, 1, NULL),
			 1);
	if (delay_ns)
		ck_assert_int_eq(gpuar_soft_store_after(f->prod, f->word, f->seq,
							delay_ns), 0);
}

/* One record, within 2 s. */
static inline struct gpuar_record trained_port_reap(struct trained_port *f)
{
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_port_reap(f->port, &rec, 1, 2000000000LL), 1);
	return rec;
}

/* @n waits of @work_ns, so the point predicts it and later waits sleep. */
static inline void trained_port_train(struct trained_port *f, int n,
				      uint64_t work_ns)
{
	struct gpuar_point_stats ps = { .point = f->wait.point };

	for (int i = 0; i < n; i++) {
		struct gpuar_record rec;

		trained_port_submit(f, work_ns);
		rec = trained_port_reap(f);
		ck_assert_uint_eq(rec.value, f->seq);
		ck_assert_int_eq(rec.status, 0);
	}
	ck_assert_int_eq(gpuar_point_stats(f->port, &ps), 0);
	ck_assert(ps.flags & GPUAR_POINT_HAS_PREDICTION);
}

#endif /* GPUAR_UNIT_TRAINED_PORT_H */
