// SPDX-License-Identifier: MIT
/*
 * The host layer's capabilities, probed once, and the resolution of
 * executor kinds and park mechanisms against them.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>


static struct gpuar_caps caps;
static pthread_once_t caps_once = PTHREAD_ONCE_INIT;

/* io_uring works when a ring comes up and a 1 ns TIMEOUT completes. */
static bool probe_io_uring(bool *multishot)
{
	struct __kernel_timespec ts = { .tv_nsec = 1 };
	struct io_uring_probe *probe;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	bool ok = false;

	*multishot = false;
	if (io_uring_queue_init(2, &ring, 0) < 0)
		return false;
	sqe = io_uring_get_sqe(&ring);
	if (sqe) {
		io_uring_prep_timeout(sqe, &ts, 0, 0);
		if (io_uring_submit_and_wait(&ring, 1) >= 0 &&
		    io_uring_peek_cqe(&ring, &cqe) == 0) {
			ok = cqe->res == -ETIME;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	probe = io_uring_get_probe_ring(&ring);
	if (probe) {
		/* The host prepares the op's SQE itself (liburing 2.3 cannot). */
		*multishot = io_uring_opcode_supported(probe,
					GPUAR_IORING_OP_READ_MULTISHOT);
		io_uring_free_probe(probe);
	}
	io_uring_queue_exit(&ring);
	return ok;
}

static bool probe_module(void)
{
	struct gpuar_version v = { .size = sizeof(v) };
	int fd = open(GPUAR_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = ioctl(fd, GPUAR_IOC_VERSION, &v) == 0 && v.abi == GPUAR_ABI_VERSION;
	close(fd);
	return ok;
}

static bool probe_precise_sleep(void)
{
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	int fd;

	if (slack >= 0 && prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) == 0)
		return true;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void probe_all(void)
{
	const char *hw = gpuar_hw_word_wait_kind();

	caps.io_uring = probe_io_uring(&caps.multishot_read);
	caps.hw_word_wait = hw != NULL;
	caps.hw_word_wait_kind = hw ? hw : "none";
	caps.module = probe_module();
	caps.precise_sleep = probe_precise_sleep();
}

GPUAR_EXPORT const struct gpuar_caps *gpuar_caps_probe(void)
{
	pthread_once(&caps_once, probe_all);
	return &caps;
}

GPUAR_EXPORT const char *gpuar_exec_kind_name(enum gpuar_exec_kind kind)
{
	switch (kind) {
	case GPUAR_EXEC_NAIVE:
		return "naive";
	case GPUAR_EXEC_GPU_REACTOR:
		return "gpu-reactor";
	case GPUAR_EXEC_IO_URING:
		return "io-uring";
	}
	return NULL;
}

#define KIND_CHOICES "one of naive, gpu-reactor, io-uring"

GPUAR_EXPORT int gpuar_exec_kind_parse(const char *name,
				       enum gpuar_exec_kind *kind,
				       struct gpuar_error *diag)
{
	enum gpuar_exec_kind k;
	const char *args[2] = { name ? name : "(null)", KIND_CHOICES };

	gpuar_diag_clear(diag);
	for (k = GPUAR_EXEC_NAIVE; name && k <= GPUAR_EXEC_IO_URING; k++) {
		if (strcmp(name, gpuar_exec_kind_name(k)) == 0) {
			if (kind)
				*kind = k;
			return 0;
		}
	}
	return gpuar_diag_set(diag, GPUAR_E_INVALID_EXECUTOR, EINVAL, args, 2);
}

/* Why @kind cannot run on @c, or NULL when it can. */
static const char *unavailable(enum gpuar_exec_kind kind,
			       const struct gpuar_caps *c)
{
	if (kind == GPUAR_EXEC_IO_URING && !c->io_uring)
		return "io_uring is not usable on this host";
	if (kind != GPUAR_EXEC_NAIVE && !c->precise_sleep)
		return "no slack-free sleep (neither PR_SET_TIMERSLACK nor timerfd works)";
	return NULL;
}

GPUAR_EXPORT int gpuar_exec_resolve(enum gpuar_exec_kind requested,
				    bool strict, const struct gpuar_caps *c,
				    enum gpuar_exec_kind *resolved,
				    struct gpuar_error *diag)
{
	enum gpuar_exec_kind k = requested;
	const char *why, *first_why = NULL;
	const char *args[3];
	char num[24];

	gpuar_diag_clear(diag);
	if (!gpuar_exec_kind_name(requested)) {
		args[0] = gpuar_u64_text((u64)requested, num);
		args[1] = KIND_CHOICES;
		return gpuar_diag_set(diag, GPUAR_E_INVALID_EXECUTOR, EINVAL, args, 2);
	}
	if (!c)
		c = gpuar_caps_probe();
	/* The declared chain: io-uring -> gpu-reactor -> naive. */
	while ((why = unavailable(k, c))) {
		if (!first_why)
			first_why = why;
		if (strict) {
			args[0] = gpuar_exec_kind_name(requested);
			args[1] = why;
			return gpuar_diag_set(diag, GPUAR_E_EXECUTOR_REFUSED,
					      EOPNOTSUPP, args, 2);
		}
		k = (enum gpuar_exec_kind)(k - 1);
	}
	if (k != requested) {
		args[0] = gpuar_exec_kind_name(requested);
		args[1] = first_why;
		args[2] = gpuar_exec_kind_name(k);
		gpuar_diag_set(diag, GPUAR_W_EXECUTOR_FALLBACK, 0, args, 3);
	}
	if (resolved)
		*resolved = k;
	return 0;
}

GPUAR_EXPORT const char *gpuar_park_resolve(const struct gpuar_caps *c,
					    struct gpuar_error *diag)
{
	const char *args[3] = { "hardware word wait",
#if defined(__aarch64__)
				"the CPU has neither WFxT (wfet) nor the event stream (wfe)",
#else
				"the CPU has neither WAITPKG (umwait) nor MONITORX (mwaitx)",
#endif
				"sleep" };

	gpuar_diag_clear(diag);
	if (!c)
		c = gpuar_caps_probe();
	if (c->hw_word_wait)
		return c->hw_word_wait_kind;
	gpuar_diag_set(diag, GPUAR_W_PARK_FALLBACK, 0, args, 3);
	return "sleep";
}
