/* SPDX-License-Identifier: MIT */
/*
 * Test cases shared by the CUDA and HIP backend tests: how the backends
 * behave when the device, the driver or the caller fails them, as the
 * doubles fail like the vendors' libraries do (each failure the doubles
 * model is cited to the vendor's documentation where it is modelled).
 * Included after vendor_cases.h, whose fixture and helpers they use.
 *
 * Ordering is by gate words (a stream waits on a word the test stores),
 * never by sleeps; what "at once" means here is "long before the
 * timeout the old behaviour waited out", asserted by the outcome (an
 * error, not -ETIMEDOUT or a hang that Check's timeout ends).
 */
#ifndef GPUAR_VENDOR_FAIL_CASES_H
#define GPUAR_VENDOR_FAIL_CASES_H

#include <sys/mman.h>

#include "vendor_cases.h"

/* Whether [@p, @p + one page) is mapped in this process. */
static bool vt_page_mapped(void *p)
{
	return msync(p, (size_t)sysconf(_SC_PAGESIZE), MS_ASYNC) == 0;
}

/*
 * A line line_free keeps (its store still pending) is detached from its
 * port: closing the port neither unmaps the page nor lets the address be
 * reused, so the late store lands in the kept page, not in whatever the
 * process maps there next, and the next line gets a page of its own.
 */
START_TEST(kept_line_outlives_its_port)
{
	void *s = V->stream_new(0), *reuse;
	struct gpuar_vendor_line *kept = vline, *next;
	uint64_t *w = gpuar_vendor_line_words(kept);
	uint64_t target;

	/* the store waits behind a gate nobody opens before the close */
	ck_assert_int_eq(V->wait_word(kept, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->record(kept, 0, s, &target, &vdiag), 0);
	ck_assert_int_eq(V->line_free(kept, 20 * MS, &vdiag), -ETIMEDOUT);
	vline = NULL;
	gpuar_port_close(vport);
	vport = NULL;
	ck_assert_msg(vt_page_mapped(w), "the port unmapped a kept line");
	reuse = mmap(w, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert_ptr_ne(reuse, w);	/* EEXIST: the range is still taken */
	if (reuse != MAP_FAILED)	/* a kernel before 4.17 placed it elsewhere */
		munmap(reuse, (size_t)sysconf(_SC_PAGESIZE));
	__atomic_store_n(&w[6], 1, __ATOMIC_RELEASE);	/* the gate opens */
	vt_wait_reached(kept, 0, target);	/* the late store lands there */
	/* a new port's line is registered afresh, in a page of its own */
	vt_open_port(&vport);
	ck_assert_msg(V->line_alloc(vb, vport, &next, &vdiag) == 0, "%s",
		      vdiag.message);
	ck_assert_ptr_ne(gpuar_vendor_line_words(next), w);
	vline = next;
	V->stream_free(s);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
}
END_TEST

static void vt_add_fail_cases(Suite *suite)
{
	TCase *tc = vt_fixture_tcase("failures");

	tcase_add_test(tc, kept_line_outlives_its_port);
	suite_add_tcase(suite, tc);
}

#endif /* GPUAR_VENDOR_FAIL_CASES_H */
