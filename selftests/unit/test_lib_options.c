// SPDX-License-Identifier: MIT
/*
 * The size and reserved rules of the library's caller-filled structs
 * (struct gpuar_port_options, gpuar_exec_options, gpuar_waiter_options)
 * and of its sized statistics: size 0 means the 1.0 layout, sizeof() is
 * accepted, a newer (larger) struct only with a zero tail (else -E2BIG),
 * a size below 1.0 and a non-zero reserved field are -EINVAL, and every
 * refusal is a coded error naming the field.
 */
#include <gpuar/gpuar.h>

#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens the object @opts describes, closes it again; returns the open's. */
typedef int (*open_fn)(const void *opts, struct gpuar_error *diag);

struct sized_case {
	const char *type;
	size_t size;
	size_t reserved_off;
	size_t reserved_n;
	const void *base;	/* a valid struct, size 0 */
	open_fn open;
};

static int open_port(const void *opts, struct gpuar_error *diag)
{
	struct gpuar_port *p;
	int ret = gpuar_port_open(&p, opts, diag);

	if (!ret)
		gpuar_port_close(p);
	return ret;
}

static int open_exec(const void *opts, struct gpuar_error *diag)
{
	struct gpuar_exec *ex;
	int ret = gpuar_exec_new(&ex, opts, diag);

	if (!ret)
		gpuar_exec_free(ex);
	return ret;
}

static int open_waiter(const void *opts, struct gpuar_error *diag)
{
	struct gpuar_waiter *w;
	int ret = gpuar_waiter_new(&w, opts, diag);

	if (!ret)
		gpuar_waiter_free(w);
	return ret;
}

static const struct gpuar_port_options port_base = {
	.engine = GPUAR_ENGINE_USER,
};
static const struct gpuar_exec_options exec_base = {
	.kind = GPUAR_EXEC_NAIVE,
};
static const struct gpuar_waiter_options waiter_base = { .max_points = 4 };

#define SIZED_CASE(T, base, open)					\
	{ #T, sizeof(struct T), offsetof(struct T, reserved),		\
	  sizeof(((struct T *)0)->reserved) / sizeof(uint32_t), &(base), (open) }

static const struct sized_case cases[] = {
	SIZED_CASE(gpuar_port_options, port_base, open_port),
	SIZED_CASE(gpuar_exec_options, exec_base, open_exec),
	SIZED_CASE(gpuar_waiter_options, waiter_base, open_waiter),
};

#define FUTURE 16	/* bytes a newer struct might add */

/* The case's base struct with @size in its size field, FUTURE zero bytes after. */
static void *sized_copy(const struct sized_case *c, uint32_t size)
{
	uint64_t *buf = calloc(1, c->size + FUTURE);

	ck_assert_ptr_nonnull(buf);
	memcpy(buf, c->base, c->size);
	memcpy(buf, &size, sizeof(size));
	return buf;
}

static void assert_refused(const struct sized_case *c, const void *opts,
			   int err, const char *field)
{
	struct gpuar_error diag;
	char name[64];

	ck_assert_int_eq(c->open(opts, &diag), -err);
	ck_assert_uint_eq(diag.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_int_eq(diag.sys_errno, err);
	snprintf(name, sizeof(name), "%s.%s", c->type, field);
	ck_assert_msg(strstr(diag.message, name), "'%s' does not name %s",
		      diag.message, name);
}

START_TEST(size_zero_and_sizeof_are_accepted)
{
	const struct sized_case *c = &cases[_i];
	void *o0 = sized_copy(c, 0), *o1 = sized_copy(c, (uint32_t)c->size);

	ck_assert_int_eq(c->open(o0, NULL), 0);
	ck_assert_int_eq(c->open(o1, NULL), 0);
	free(o0);
	free(o1);
}
END_TEST

START_TEST(newer_struct_needs_a_zero_tail)
{
	const struct sized_case *c = &cases[_i];
	unsigned char *o = sized_copy(c, (uint32_t)(c->size + FUTURE));

	ck_assert_int_eq(c->open(o, NULL), 0);
	o[c->size + FUTURE - 1] = 1;
	assert_refused(c, o, E2BIG, "size");
	free(o);
}
END_TEST

START_TEST(size_below_the_first_layout_is_refused)
{
	const struct sized_case *c = &cases[_i];
	void *o = sized_copy(c, 4);

	assert_refused(c, o, EINVAL, "size");
	free(o);
}
END_TEST

START_TEST(reserved_must_be_zero)
{
	const struct sized_case *c = &cases[_i];
	unsigned char *o = sized_copy(c, 0);
	uint32_t one = 1;
	char field[32];

	for (size_t i = 0; i < c->reserved_n; i += c->reserved_n - 1) {
		memset(o + c->reserved_off, 0, c->reserved_n * sizeof(one));
		memcpy(o + c->reserved_off + i * sizeof(one), &one, sizeof(one));
		snprintf(field, sizeof(field), "reserved[%zu]", i);
		assert_refused(c, o, EINVAL, field);
	}
	free(o);
}
END_TEST

/* Port statistics are written as far as the caller's size reaches. */
START_TEST(stats_follow_the_callers_size)
{
	struct {
		struct gpuar_port_stats st;
		uint64_t future[2];
	} big;
	struct gpuar_port_stats st;
	struct gpuar_port *p;
	struct gpuar_line *line;

	ck_assert_int_eq(gpuar_port_open(&p, &port_base, NULL), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &line), 0);

	memset(&st, 0xff, sizeof(st));
	st.size = 0;		/* the v1 layout */
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_uint_eq(st.size, 0);
	ck_assert_uint_eq(st.lines, 1);
	ck_assert_uint_eq(st.outcomes[GPUAR_OUTCOME_SLOTS - 1], 0);

	memset(&big, 0xff, sizeof(big));
	big.st.size = sizeof(big);
	ck_assert_int_eq(gpuar_port_stats(p, &big.st), 0);
	ck_assert_uint_eq(big.st.size, sizeof(big));
	ck_assert_uint_eq(big.st.lines, 1);
	ck_assert_uint_eq(big.future[0], 0);
	ck_assert_uint_eq(big.future[1], 0);

	st.size = GPUAR_PORT_STATS_SIZE_VER1 - 8;
	st.lines = 77;
	ck_assert_int_eq(gpuar_port_stats(p, &st), -EINVAL);
	ck_assert_uint_eq(st.lines, 77);
	gpuar_port_close(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_options");
	TCase *t = tcase_create("rules");
	int n = (int)(sizeof(cases) / sizeof(cases[0]));
	SRunner *sr;
	int failed;

	tcase_add_loop_test(t, size_zero_and_sizeof_are_accepted, 0, n);
	tcase_add_loop_test(t, newer_struct_needs_a_zero_tail, 0, n);
	tcase_add_loop_test(t, size_below_the_first_layout_is_refused, 0, n);
	tcase_add_loop_test(t, reserved_must_be_zero, 0, n);
	tcase_add_test(t, stats_follow_the_callers_size);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
