/* SPDX-License-Identifier: MIT */
/*
 * Opening ports on the engine under test, for the engine-agnostic suites
 * (test_lib_port.c, test_conformance.c): GPUAR_TEST_ENGINE=user|kernel|auto
 * (default user), so the same suite runs against the module's port inside
 * the VMs (tools/vm/lib-tests.sh), and the small helpers both use.
 */
#ifndef GPUAR_UNIT_ENGINE_FIXTURE_H
#define GPUAR_UNIT_ENGINE_FIXTURE_H

#include <gpuar/gpuar.h>

#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ULL

static inline enum gpuar_engine test_engine(void)
{
	const char *e = getenv("GPUAR_TEST_ENGINE");

	if (!e || !strcmp(e, "user"))
		return GPUAR_ENGINE_USER;
	if (!strcmp(e, "kernel"))
		return GPUAR_ENGINE_KERNEL;
	return GPUAR_ENGINE_AUTO;
}

static inline bool user_engine(struct gpuar_port *p)
{
	return gpuar_port_engine(p) == GPUAR_ENGINE_USER;
}

/*
 * The user engine takes its limits and default backstop as port options;
 * the module as its parameters (of the same names), which the tests set
 * through sysfs for the kernel engine, so both engines run the same
 * script. Every kernel-engine open sets all of them (an option left 0: the
 * value the module had when the suite started), so no test inherits
 * another's; main() restores them at the end.
 */
#define KPARAM_DIR "/sys/module/gpuar/parameters/"

static const char *const kparam_names[] = {
	"max_lines", "max_waits", "max_points", "poll_backstop_us",
};
static uint64_t kparam_saved[4];
static bool kparam_have;

static inline bool kparam_read(const char *name, uint64_t *v)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), KPARAM_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok;
}

static inline bool kparam_write(const char *name, uint64_t v)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), KPARAM_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fprintf(f, "%" PRIu64, v) > 0;
	ok = !fclose(f) && ok;
	return ok;
}

static inline void kparams_save(void)
{
	kparam_have = true;
	for (size_t i = 0; i < 4; i++)
		kparam_have = kparam_have &&
			      kparam_read(kparam_names[i], &kparam_saved[i]);
}

static inline void kparams_restore(void)
{
	for (size_t i = 0; kparam_have && i < 4; i++)
		kparam_write(kparam_names[i], kparam_saved[i]);
}

static inline void kparams_apply(const struct gpuar_port_options *o)
{
	const uint64_t want[4] = {
		o->max_lines, o->max_waits, o->max_points,
		o->poll_backstop_ns / 1000,
	};

	if (!kparam_have)
		return;		/* no module loaded: nothing to mirror */
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(kparam_write(kparam_names[i],
					   want[i] ? want[i] : kparam_saved[i]),
			      "cannot set the module's %s", kparam_names[i]);
}

static inline struct gpuar_port *open_opts(struct gpuar_port_options *o)
{
	struct gpuar_port *p = NULL;
	struct gpuar_error err;

	o->engine = test_engine();
	if (o->engine == GPUAR_ENGINE_KERNEL)
		o->flags |= GPUAR_PORT_STRICT;
	if (o->engine != GPUAR_ENGINE_USER)
		kparams_apply(o);
	ck_assert_msg(gpuar_port_open(&p, o, &err) == 0, "%s", err.message);
	return p;
}

static inline struct gpuar_port *open_port(void)
{
	struct gpuar_port_options o = { 0 };

	return open_opts(&o);
}

static inline struct gpuar_plan plan_of(const char *text)
{
	struct gpuar_plan plan;

	ck_assert_int_eq(gpuar_plan_from_text(text, &plan, NULL), 0);
	return plan;
}

static inline struct gpuar_word_wait word_wait(struct gpuar_line *line,
					       uint32_t slot, uint64_t target,
					       uint64_t ud, const char *plan)
{
	struct gpuar_word_wait w = {
		.user_data = ud,
		.target = target,
		.point = 7,
		.line = gpuar_line_id(line),
		.slot = slot,
		.plan = plan_of(plan),
	};
	return w;
}

static inline void submit1(struct gpuar_port *p,
			   const struct gpuar_word_wait *w)
{
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 1, NULL), 1);
}

static inline struct gpuar_record reap1(struct gpuar_port *p, int64_t timeout)
{
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, timeout), 1);
	ck_assert_uint_eq(rec.version, GPUAR_RECORD_VERSION_1);
	return rec;
}

#endif /* GPUAR_UNIT_ENGINE_FIXTURE_H */
