// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * 32-bit callers: runs compat32/compat32_helper.c, an i386 static binary
 * embedded here at build time (COMPAT32_HELPER, by selftests/kmod/Makefile),
 * which drives the module through its compat_ioctl path. A kernel without
 * IA32 emulation cannot run it (execve fails with ENOEXEC): the test skips
 * there (the debug kernel's tinyconfig base has none); elsewhere the
 * helper's exit status is the verdict.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

__asm__(".section .rodata\n"
	".balign 16\n"
	".global compat32_helper_start\n"
	"compat32_helper_start:\n"
	".incbin \"" COMPAT32_HELPER "\"\n"
	".global compat32_helper_end\n"
	"compat32_helper_end:\n"
	".previous\n");
extern const char compat32_helper_start[], compat32_helper_end[];

#define HELPER_PATH "/tmp/gpuar_compat32_helper"

TEST(compat32_caller_submits_and_reads)
{
	size_t len = compat32_helper_end - compat32_helper_start;
	int fd, status;
	pid_t pid;

	ASSERT_LT(0U, len);
	fd = open(HELPER_PATH, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, compat32_helper_start, len));
	close(fd);

	/* Probe: can this kernel run i386 binaries at all? */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char *argv[] = { HELPER_PATH, NULL };

		execv(HELPER_PATH, argv);
		_exit(errno == ENOEXEC ? 125 : 126);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	unlink(HELPER_PATH);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 125)
		SKIP(return, "this kernel cannot run i386 binaries (no IA32 emulation)");
	ASSERT_NE(126, WEXITSTATUS(status)) {
		TH_LOG("exec of the i386 helper failed");
	}
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
