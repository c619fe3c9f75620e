// SPDX-License-Identifier: MIT
/* Opening a port on an engine, lines, and dispatch to the engine. */
#include "port.h"
#include "defaults.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PORT_KNOWN_FLAGS (GPUAR_PORT_FLAGS_ALL | GPUAR_PORT_STRICT | \
			  GPUAR_PORT_WATCHER | GPUAR_PORT_INHERIT | \
			  GPUAR_PORT_IMMINENT | GPUAR_PORT_NO_AREA)

#define US GPUAR_NSEC_PER_USEC

/*
 * The options' bounds: the module's bounds on its parameters of the same
 * names (core/defaults.h), so no option can make either engine wrap a
 * time, busy-loop or size a table to nothing. 0 is the default in each.
 */
static const struct option_range {
	const char *name;
	size_t offset, width;
	u64 min, max;
	const char *why;
} port_ranges[] = {
#define RANGE(field, lo, hi, text)					\
	{ #field, offsetof(struct gpuar_port_options, field),		\
	  sizeof(((struct gpuar_port_options *)0)->field), lo, hi, text }
	RANGE(max_waits, GPUAR_MAX_WAITS_MIN, GPUAR_MAX_WAITS_MAX,
	      "outside 1..1048576 (0: the default)"),
	RANGE(max_lines, GPUAR_MAX_LINES_MIN, GPUAR_MAX_LINES_MAX,
	      "outside 1..65536 (0: the default)"),
	RANGE(max_points, GPUAR_MAX_POINTS_MIN, GPUAR_MAX_POINTS_MAX,
	      "outside 1..4096 (0: the default)"),
	RANGE(poll_interval_ns, GPUAR_POLL_INTERVAL_US_MIN * US,
	      GPUAR_POLL_INTERVAL_US_MAX * US,
	      "outside 1 us..10 ms (0: the default)"),
	RANGE(poll_backstop_ns, GPUAR_BACKSTOP_US_MIN * US,
	      GPUAR_BACKSTOP_US_MAX * US,
	      "outside 1 us..1 s (0: the default)"),
#undef RANGE
};

/* Every option within its bound, or -EINVAL naming the first that is not. */
static int check_ranges(const struct gpuar_port_options *o,
			struct gpuar_error *diag)
{
	const char *args[2];
	size_t i;

	for (i = 0; i < sizeof(port_ranges) / sizeof(port_ranges[0]); i++) {
		const struct option_range *r = &port_ranges[i];
		const unsigned char *at = (const unsigned char *)o + r->offset;
		u64 v;

		if (r->width == sizeof(u32)) {
			u32 v32;

			memcpy(&v32, at, sizeof(v32));
			v = v32;
		} else {
			memcpy(&v, at, sizeof(v));
		}
		if (v == 0 || (v >= r->min && v <= r->max))
			continue;
		args[0] = r->name;
		args[1] = r->why;
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL,
				      args, 2);
	}
	return 0;
}

GPUAR_EXPORT const char *gpuar_engine_name(enum gpuar_engine engine)
{
	switch (engine) {
	case GPUAR_ENGINE_KERNEL:
		return "kernel";
	case GPUAR_ENGINE_USER:
		return "user";
	case GPUAR_ENGINE_AUTO:
		return "auto";
	}
	return "?";
}

/*
 * Why the kernel engine could not be had, for a person: the device, the
 * error, and what usually fixes it.
 */
static void kernel_unavailable(char *why, size_t size, const char *path, int err)
{
	const char *hint = "";

	switch (err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		hint = " (module not loaded: sudo modprobe gpuar)";
		break;
	case EACCES:
	case EPERM:
		hint = " (not allowed to open it: join its group, usually render)";
		break;
	case EPROTO:
		hint = " (the module's ABI is older than this library's)";
		break;
	case EMFILE:
	case ENFILE:
	case EUSERS:
		hint = " (a limit on ports or file descriptors)";
		break;
	}
	snprintf(why, size, "%s: %s%s", path, strerror(err), hint);
}

/*
 * The user engine runs imminent readiness itself, except with a watcher
 * thread: that thread runs the engine, and the port's fd (its record
 * eventfd) has no early wake to show.
 */
static int user_open(struct gpuar_port *p, const struct gpuar_port_options *o,
		     struct gpuar_error *diag)
{
	int ret = gpuar_imminent_check(o->flags, o->flags & GPUAR_PORT_WATCHER ?
				       "GPUAR_PORT_WATCHER's thread runs the engine" :
				       NULL, &p->imminent, diag);

	return ret ? ret : gpuar_port_user_open(p, o, p->imminent);
}

static int open_engine(struct gpuar_port *p, const struct gpuar_port_options *o,
		       struct gpuar_error *diag)
{
	bool strict = o->flags & GPUAR_PORT_STRICT;
	const char *path = o->device_path ? o->device_path : GPUAR_DEVICE_PATH;
	char why[GPUAR_MESSAGE_MAX / 2];
	const char *args[3];
	int ret;

	if (o->engine == GPUAR_ENGINE_USER)
		return user_open(p, o, diag);
	ret = gpuar_port_kernel_open(p, o);
	if (ret == 0) {
		/* The module may predate imminent readiness. */
		ret = gpuar_imminent_check(o->flags,
					   p->features & GPUAR_FEATURE_IMMINENT ? NULL :
					   "the gpuar module lacks GPUAR_FEATURE_IMMINENT",
					   &p->imminent, diag);
		if (ret)
			p->ops->close(p);
		return ret;
	}
	/* Name the device and the reason, in the refusal and the fallback alike. */
	kernel_unavailable(why, sizeof(why), path, -ret);
	args[0] = "kernel";
	args[1] = why;
	/* An explicit request is honoured or refused; only AUTO falls back. */
	if (strict || o->engine == GPUAR_ENGINE_KERNEL)
		return gpuar_diag_set(diag, GPUAR_E_ENGINE_UNAVAILABLE, -ret,
				      args, 2);
	ret = user_open(p, o, NULL);
	if (ret == 0) {
		args[2] = "user";
		gpuar_diag_set(diag, GPUAR_W_ENGINE_FALLBACK, 0, args, 3);
	}
	return ret;
}

GPUAR_EXPORT int gpuar_port_open(struct gpuar_port **port,
				 const struct gpuar_port_options *opts,
				 struct gpuar_error *diag)
{
	struct gpuar_port_options o = { 0 };
	struct gpuar_port *p;
	const char *args[2];
	int ret;

	gpuar_diag_clear(diag);
	if (!port) {
		args[0] = "port";
		args[1] = "must not be NULL";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	*port = NULL;
	ret = opts ? GPUAR_OPTIONS_IN(&o, opts, GPUAR_PORT_OPTIONS_SIZE_1_0,
				      "gpuar_port_options", diag) : 0;
	if (ret)
		return ret;
	if (o.engine > GPUAR_ENGINE_USER || (o.flags & ~PORT_KNOWN_FLAGS)) {
		args[0] = o.engine > GPUAR_ENGINE_USER ? "engine" : "flags";
		args[1] = "unknown value";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	if (o.busy_read_us > GPUAR_BUSY_READ_MAX_US &&
	    o.busy_read_us != GPUAR_BUSY_READ_OFF) {
		args[0] = "busy_read_us";
		args[1] = "above 100000 us (GPUAR_BUSY_READ_OFF disables it)";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	if (o.claim_slice_us > GPUAR_BUSY_READ_MAX_US &&
	    o.claim_slice_us != GPUAR_CLAIM_SLICE_OFF) {
		args[0] = "claim_slice_us";
		args[1] = "above 100000 us (GPUAR_CLAIM_SLICE_OFF: the whole lease)";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	if ((o.flags & GPUAR_PORT_INHERIT) && (o.flags & GPUAR_PORT_CLOEXEC)) {
		args[0] = "flags";
		args[1] = "GPUAR_PORT_INHERIT and GPUAR_PORT_CLOEXEC contradict";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	ret = check_ranges(&o, diag);
	if (ret)
		return ret;
	/* Like liburing's and libdrm's fds: not inherited across exec. */
	if (!(o.flags & GPUAR_PORT_INHERIT))
		o.flags |= GPUAR_PORT_CLOEXEC;
	if (!o.max_waits)
		o.max_waits = GPUAR_DEFAULT_MAX_WAITS;
	if (!o.max_lines)
		o.max_lines = GPUAR_DEFAULT_MAX_LINES;
	if (!o.max_points)
		o.max_points = GPUAR_DEFAULT_MAX_POINTS;
	if (!o.poll_interval_ns)
		o.poll_interval_ns = GPUAR_DEFAULT_POLL_INTERVAL_US *
				     GPUAR_NSEC_PER_USEC;
	if (!o.poll_backstop_ns)
		o.poll_backstop_ns = GPUAR_DEFAULT_BACKSTOP_US *
				     GPUAR_NSEC_PER_USEC;
	p = calloc(1, sizeof(*p));
	if (!p)
		return gpuar_diag_sys(diag, "calloc", ENOMEM);
	p->fd = -1;
	p->max_lines = o.max_lines;
	p->fork_gen = gpuar_fork_generation();
	pthread_mutex_init(&p->lines_lock, NULL);
	pthread_mutex_init(&p->claim_lock, NULL);
	ret = open_engine(p, &o, diag);
	if (ret) {
		if (diag && diag->code == GPUAR_OK)
			gpuar_diag_sys(diag, "opening the port", -ret);
		pthread_mutex_destroy(&p->claim_lock);
		pthread_mutex_destroy(&p->lines_lock);
		free(p);
		return ret;
	}
	/*
	 * The engines make every fd of their own close-on-exec; the one the
	 * caller sees follows the flags (the watcher's fd is an eventfd).
	 */
	if (o.flags & GPUAR_PORT_INHERIT)
		fcntl(p->fd, F_SETFD, 0);
	p->claim_slice_ns = gpuar_imminent_slice_ns(o.claim_slice_us, p->engine);
	*port = p;
	return 0;
}

static void (*port_close_observer)(struct gpuar_port *port);

void gpuar_port_on_close(void (*fn)(struct gpuar_port *port))
{
	__atomic_store_n(&port_close_observer, fn, __ATOMIC_RELEASE);
}

GPUAR_EXPORT void gpuar_port_close(struct gpuar_port *port)
{
	void (*observer)(struct gpuar_port *port);
	u32 i;

	if (!port)
		return;
	/*
	 * In a forked child the lines are not mapped (MADV_DONTFORK), and the
	 * locks may have been held by a parent thread at the fork.
	 */
	port->closing_in_child = port_forked(port);
	observer = __atomic_load_n(&port_close_observer, __ATOMIC_ACQUIRE);
	if (observer && !port->closing_in_child)
		observer(port);
	/* The engine goes first: it stops reading the lines' words. */
	port->ops->close(port);
	for (i = 0; i < port->lines_cap; i++) {
		/* A kept line is its keeper's, mapped for good. */
		if (!port->lines[i] || port->lines[i]->kept)
			continue;
		/* A child has no mapping there, and may have made another. */
		if (!port->closing_in_child)
			munmap(port->lines[i]->words,
			       (size_t)sysconf(_SC_PAGESIZE));
		free(port->lines[i]);
	}
	free(port->lines);
	if (!port->closing_in_child) {
		pthread_mutex_destroy(&port->claim_lock);
		pthread_mutex_destroy(&port->lines_lock);
	}
	free(port);
}

/* NULL: AUTO, the one value no open port reports (L3-12). */
GPUAR_EXPORT enum gpuar_engine gpuar_port_engine(const struct gpuar_port *port)
{
	return port ? port->engine : GPUAR_ENGINE_AUTO;
}

GPUAR_EXPORT int gpuar_port_fd(const struct gpuar_port *port)
{
	return port ? port->fd : -EINVAL;
}

GPUAR_EXPORT int gpuar_line_alloc(struct gpuar_port *port,
				  struct gpuar_line **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct gpuar_line *line;
	u32 slot;
	int ret;

	if (!port || !out)
		return -EINVAL;
	*out = NULL;
	if (port_forked(port))
		return -EPERM;
	line = calloc(1, sizeof(*line));
	if (!line)
		return -ENOMEM;
	line->words = mmap(NULL, page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (line->words == MAP_FAILED) {
		free(line);
		return -ENOMEM;
	}
	/*
	 * A child gets no copy: the device keeps writing the parent's page,
	 * and a copy-on-write break by a parent's store (with a registration
	 * that does not pin it) would leave the device on the child's copy.
	 */
	madvise(line->words, page, MADV_DONTFORK);
	line->port = port;
	pthread_mutex_lock(&port->lines_lock);
	if (port->lines_used >= port->max_lines) {
		ret = -ENOSPC;
		goto fail;
	}
	for (slot = 0; slot < port->lines_cap && port->lines[slot]; slot++)
		;
	if (slot == port->lines_cap) {
		u32 cap = port->lines_cap ? port->lines_cap * 2 : 16;
		struct gpuar_line **n = realloc(port->lines, cap * sizeof(*n));

		if (!n) {
			ret = -ENOMEM;
			goto fail;
		}
		memset(n + port->lines_cap, 0,
		       (cap - port->lines_cap) * sizeof(*n));
		port->lines = n;
		port->lines_cap = cap;
	}
	ret = port->ops->line_register(port, line);
	if (ret)
		goto fail;
	port->lines[slot] = line;
	port->lines_used++;
	pthread_mutex_unlock(&port->lines_lock);
	*out = line;
	return 0;
fail:
	pthread_mutex_unlock(&port->lines_lock);
	munmap(line->words, page);
	free(line);
	return ret;
}

/*
 * Take @line off @port: the engine unregisters it and the port forgets it.
 * With @keep, the line is marked kept first, and stays listed (skipped by
 * the close) where the engine still has waits on it. 0, -EBUSY (the
 * engine's waits: nothing done unless @keep), -EINVAL (not the port's
 * line, or already kept), -EPERM (a forked child).
 */
static int line_detach(struct gpuar_port *port, struct gpuar_line *line,
		       bool keep)
{
	u32 slot;
	int ret;

	if (!port || !line)
		return -EINVAL;
	if (port_forked(port))
		return -EPERM;
	pthread_mutex_lock(&port->lines_lock);
	for (slot = 0; slot < port->lines_cap && port->lines[slot] != line; slot++)
		;
	if (slot == port->lines_cap || line->kept) {
		pthread_mutex_unlock(&port->lines_lock);
		return -EINVAL;
	}
	line->kept = keep;
	ret = port->ops->line_unregister(port, line);
	if (ret == 0) {
		port->lines[slot] = NULL;
		port->lines_used--;
	}
	pthread_mutex_unlock(&port->lines_lock);
	return ret;
}

int gpuar_line_keep(struct gpuar_port *port, struct gpuar_line *line)
{
	int ret = line_detach(port, line, true);

	return ret == -EBUSY ? 0 : ret;
}

GPUAR_EXPORT int gpuar_line_free(struct gpuar_port *port,
				 struct gpuar_line *line)
{
	int ret = line_detach(port, line, false);

	if (ret)
		return ret;
	munmap(line->words, (size_t)sysconf(_SC_PAGESIZE));
	free(line);
	return 0;
}

GPUAR_EXPORT uint64_t *gpuar_line_words(const struct gpuar_line *line)
{
	return line ? line->words : NULL;
}

GPUAR_EXPORT uint32_t gpuar_line_id(const struct gpuar_line *line)
{
	return line ? line->id : 0;	/* ids start at 1 */
}

GPUAR_EXPORT int gpuar_submit_word_waits(struct gpuar_port *port,
					 const struct gpuar_word_wait *waits,
					 uint32_t count, uint32_t *error_index)
{
	u64 mark = gpuar_sys_mark();
	u32 idx = count;
	int ret;

	if (!port)
		return -EINVAL;
	if (port_forked(port))
		ret = -EPERM;
	else if (count && !waits)
		ret = -EFAULT;
	else
		ret = port->ops->submit_word(port, waits, count, &idx);
	gpuar_sys_charge(port, mark);
	if (error_index)
		*error_index = ret < 0 ? idx : 0;
	return ret;
}

GPUAR_EXPORT int gpuar_submit_fence_waits(struct gpuar_port *port,
					  const struct gpuar_fence_wait *waits,
					  uint32_t count, uint32_t *error_index)
{
	u64 mark = gpuar_sys_mark();
	u32 idx = count;
	int ret;

	if (!port)
		return -EINVAL;
	if (port_forked(port))
		ret = -EPERM;
	else if (count && !waits)
		ret = -EFAULT;
	else
		ret = port->ops->submit_fence(port, waits, count, &idx);
	gpuar_sys_charge(port, mark);
	if (error_index)
		*error_index = ret < 0 ? idx : 0;
	return ret;
}

GPUAR_EXPORT int gpuar_cancel(struct gpuar_port *port, uint64_t user_data)
{
	u64 mark = gpuar_sys_mark();
	int ret = port_usable(port);

	if (ret)
		return ret;
	ret = port->ops->cancel(port, user_data);
	gpuar_sys_charge(port, mark);
	return ret;
}

/* NULL: nothing is pending, so nothing need run (L3-12). */
GPUAR_EXPORT uint64_t gpuar_port_next_check_ns(struct gpuar_port *port)
{
	if (!port || port_forked(port))
		return GPUAR_U64_MAX;
	return port->ops->next_check(port);
}

GPUAR_EXPORT int gpuar_port_stats(struct gpuar_port *port,
				  struct gpuar_port_stats *stats)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	u64 mark = gpuar_sys_mark();
	int ret;

	if (!port || !stats)
		return -EINVAL;
	if (port_forked(port))
		return -EPERM;
	ret = port->ops->stats(port, &st);
	gpuar_sys_charge(port, mark);
	if (ret)
		return ret;
	return gpuar_sized_out(stats, &st, sizeof(st), GPUAR_PORT_STATS_SIZE_VER1);
}

GPUAR_EXPORT int gpuar_point_stats(struct gpuar_port *port,
				   struct gpuar_point_stats *stats)
{
	struct gpuar_point_stats ps = { .size = sizeof(ps) };
	u64 mark = gpuar_sys_mark();
	int ret;

	if (!port || !stats)
		return -EINVAL;
	if (port_forked(port))
		return -EPERM;
	ps.point = stats->point;
	ret = port->ops->point_stats(port, &ps);
	gpuar_sys_charge(port, mark);
	if (ret)
		return ret;
	return gpuar_sized_out(stats, &ps, sizeof(ps), GPUAR_POINT_STATS_SIZE_VER1);
}

GPUAR_EXPORT int gpuar_port_lib_stats(struct gpuar_port *port,
				      struct gpuar_port_lib_stats *stats)
{
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };

	if (!port || !stats)
		return -EINVAL;
	if (port->area)
		st.flags |= GPUAR_LIB_STATS_AREA;
	st.syscalls = __atomic_load_n(&port->syscalls, __ATOMIC_RELAXED);
	st.area_records = __atomic_load_n(&port->area_records,
					  __ATOMIC_RELAXED);
	return gpuar_sized_out(stats, &st, sizeof(st),
			       GPUAR_PORT_LIB_STATS_SIZE_1_1);
}
