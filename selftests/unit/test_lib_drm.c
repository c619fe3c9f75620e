// SPDX-License-Identifier: MIT
/*
 * libgpuar's DRM backend, the parts that need no DRM device: sync_file
 * queries and syncobj calls refuse what is not theirs with the right
 * errno, and an fd source follows its fd. The syncobj and vgem paths run
 * inside the VMs.
 */
#include <gpuar/gpuar.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

START_TEST(sync_file_info_refuses_other_fds)
{
	int fds[2], signalled = 7;

	ck_assert_int_eq(gpuar_sync_file_info(-1, &signalled, NULL, NULL), -EBADF);
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_sync_file_info(fds[0], &signalled, NULL, NULL), -ENOTTY);
	ck_assert_int_eq(signalled, 7);	/* untouched on failure */
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(syncobj_calls_refuse_a_non_drm_fd)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), out = 5;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_lt(gpuar_drm_point_export(fd, 1, 3, &out), 0);
	ck_assert_int_eq(out, -1);
	ck_assert_int_lt(gpuar_drm_point_export(fd, 1, 0, &out), 0);
	/* No eventfd ioctl on a non-DRM fd: reported as unsupported. */
	ck_assert_int_eq(gpuar_drm_point_available_fd(fd, 1, 3, &out), -EOPNOTSUPP);
	ck_assert_int_eq(out, -1);
	ck_assert_int_lt(gpuar_drm_point_wait_available(fd, 1, 3, 1000000), 0);
	ck_assert_int_eq(gpuar_drm_point_export(fd, 1, 3, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_drm_point_available_fd(fd, 1, 3, NULL), -EINVAL);
	close(fd);
}
END_TEST

START_TEST(fd_source_follows_its_fd)
{
	struct gpuar_fd_source fs;
	const struct gpuar_src *src;
	uint64_t v = 9;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	src = gpuar_fd_source_init(&fs, fds[0]);
	ck_assert_int_eq(src->ops->check(src->ctx, &v), 0);
	ck_assert_int_eq(src->ops->fd(src->ctx), fds[0]);
	ck_assert_ptr_null(src->ops->word);
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	ck_assert_int_eq(src->ops->check(src->ctx, &v), 1);
	ck_assert_uint_eq(v, 0);
	close(fds[1]);
	close(fds[0]);
	/* A closed fd is a source error, not "done". */
	ck_assert_int_eq(src->ops->check(src->ctx, &v), -EBADF);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_drm");
	TCase *t = tcase_create("drm");
	SRunner *sr;
	int failed;

	tcase_add_test(t, sync_file_info_refuses_other_fds);
	tcase_add_test(t, syncobj_calls_refuse_a_non_drm_fd);
	tcase_add_test(t, fd_source_follows_its_fd);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
