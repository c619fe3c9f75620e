/* SPDX-License-Identifier: MIT */
/* A port and its two engines (kernel: port_kernel.c, user: engine_user.c). */
#ifndef GPUAR_LIB_PORT_H
#define GPUAR_LIB_PORT_H

#include "internal.h"
#include "defaults.h"

#include <errno.h>
#include <pthread.h>

struct gpuar_line {
	uint64_t *words;	/* page-aligned anonymous page */
	struct gpuar_port *port;
	u32 id;
	/* Kept for a device that may still store there (gpuar_line_keep):
	 * never unmapped, never freed by the port. */
	bool kept;
};

/*
 * Keep @line of @port for the life of the process: a device may still
 * store into its page (a vendor backend could not settle it), so the page
 * stays mapped and its address range is never reused. The port forgets
 * the line (where its engine still has waits on it, only once the port
 * closes): gpuar_line_free refuses it (-EINVAL) and gpuar_port_close
 * neither unmaps nor frees it; the struct stays the caller's, reachable.
 * 0, or -EINVAL (not a line of @port), -EPERM (in a forked child).
 */
int gpuar_line_keep(struct gpuar_port *port, struct gpuar_line *line);

/*
 * Have gpuar_port_close call @fn(port) first (not in a forked child),
 * while the port is still whole: the vendor backends drop the awaits
 * they keep for it, so a port opened later at the same address never
 * meets them. One observer per process; a later call replaces it.
 */
void gpuar_port_on_close(void (*fn)(struct gpuar_port *port));

struct gpuar_engine_ops {
	int (*line_register)(struct gpuar_port *port, struct gpuar_line *line);
	int (*line_unregister)(struct gpuar_port *port, struct gpuar_line *line);
	int (*submit_word)(struct gpuar_port *port,
			   const struct gpuar_word_wait *waits, u32 count,
			   u32 *error_index);
	int (*submit_fence)(struct gpuar_port *port,
			    const struct gpuar_fence_wait *waits, u32 count,
			    u32 *error_index);
	int (*cancel)(struct gpuar_port *port, u64 user_data);
	/* @intr_fd: an interrupt's eventfd ending the wait (-EINTR), or -1 */
	int (*reap)(struct gpuar_port *port, struct gpuar_record *records,
		    u32 max, int64_t timeout_ns, int intr_fd);
	int (*process)(struct gpuar_port *port);
	u64 (*next_check)(struct gpuar_port *port);
	int (*stats)(struct gpuar_port *port, struct gpuar_port_stats *stats);
	int (*point_stats)(struct gpuar_port *port,
			   struct gpuar_point_stats *stats);
	/*
	 * Claim up to @max imminent waits (GPUAR_IOC_CLAIM's semantics),
	 * leased for @lease_ns (0: the engine's default); only called on a
	 * port whose imminent readiness runs.
	 */
	int (*claim)(struct gpuar_port *port, struct gpuar_claim_entry *entries,
		     u32 max, u64 lease_ns);
	/*
	 * Keep the port's fd ready while @held: a claimer that stopped at
	 * its slice still watches claimed waits (lib/imminent.c). NULL: the
	 * engine cannot (the module lowers EPOLLPRI at the claim).
	 */
	void (*claim_held)(struct gpuar_port *port, bool held);
	void (*close)(struct gpuar_port *port);
};

struct gpuar_port {
	enum gpuar_engine engine;
	int fd;
	const struct gpuar_engine_ops *ops;
	void *state;		/* the engine's */
	pthread_mutex_t lines_lock;
	struct gpuar_line **lines;	/* by slot; NULL where free */
	u32 lines_cap;
	u32 lines_used;
	u32 max_lines;
	unsigned long fork_gen;	/* gpuar_fork_generation() at open */
	/*
	 * Closed in a forked child: the engine drops the child's copies of
	 * its fds and memory and touches nothing the parent shares.
	 */
	bool closing_in_child;
	u64 features;		/* kernel engine: the module's GPUAR_FEATURE_* */
	u64 claim_lease_ns;	/* kernel engine: a claim's lease where 0 is
				 * asked for (0: the module's lease_us) */
	bool imminent;		/* GPUAR_PORT_IMMINENT asked for and running */
	/*
	 * The claims a sliced claimer stopped watching before their store or
	 * lease end (lib/imminent.c): the next process or reap resumes them
	 * instead of claiming again. Guarded by claim_lock.
	 */
	pthread_mutex_t claim_lock;
	struct gpuar_claim_entry held[GPUAR_BUSY_WAITS];
	u32 nheld;
	bool held_ready;	/* claim_held(true) was last said */
	u64 claim_slice_ns;	/* one sliced call's watch; 0: the whole lease */
	/* kernel engine: the shared completion area, mapped (NULL: none) */
	struct gpuar_area_ring *area;
	void *area_map;
	size_t area_len;
	/* gpuar_port_lib_stats' counters (atomic adds) */
	u64 syscalls;
	u64 area_records;
};

/*
 * Charge @port with the system calls this thread made since @mark (a
 * gpuar_sys_mark()), and take them off the thread's count, so a caller
 * that marked earlier charges only its own.
 */
void gpuar_sys_charge(struct gpuar_port *port, u64 mark);

/*
 * The kernel engine's shared completion area (lib/port_area.c). open: map
 * and check the area of a port created with GPUAR_PORT_AREA (left
 * unmapped where that fails: the port then reads). close: unmap it, before
 * the fd closes. take: up to @max records from the ring with no system
 * call, counted in area_records (0 without an area). need_read: records
 * wait in the module's queue, or the head is out of range. count: records
 * in the ring now.
 */
void gpuar_port_area_open(struct gpuar_port *port);
/*
 * The ring size the kernel engine asks for (0: the module's default,
 * max_waits rounded up): a test's hook, set before an open, for a ring
 * small enough to overflow (the library's API has no such option).
 */
extern u32 gpuar_port_area_test_entries;
void gpuar_port_area_close(struct gpuar_port *port);
int gpuar_port_area_take(struct gpuar_port *port, struct gpuar_record *records,
			 u32 max);
bool gpuar_port_area_need_read(const struct gpuar_port *port);
u32 gpuar_port_area_count(const struct gpuar_port *port);

/* Called in a child of the process that opened @port (see lib/process.c). */
static inline bool port_forked(const struct gpuar_port *port)
{
	return gpuar_forked_since(port->fork_gen);
}

/* A port a call may use: -EINVAL for NULL, -EPERM in a forked child, else 0. */
static inline int port_usable(const struct gpuar_port *port)
{
	if (!port)
		return -EINVAL;
	return port_forked(port) ? -EPERM : 0;
}

int gpuar_port_kernel_open(struct gpuar_port *port,
			   const struct gpuar_port_options *opts);
/* @imminent: run imminent readiness (never with GPUAR_PORT_WATCHER). */
int gpuar_port_user_open(struct gpuar_port *port,
			 const struct gpuar_port_options *opts, bool imminent);

/*
 * Imminent readiness (lib/imminent.c). gpuar_imminent_check: may a port
 * asked for with @flags run it, where the engine says what it lacks
 * (@lacking; NULL: nothing)? 0 (with the warning GPUAR_W_FEATURE_FALLBACK
 * in *@diag when it was asked for and is lacking, unless STRICT) or
 * -EOPNOTSUPP with GPUAR_E_FEATURE_UNAVAILABLE (STRICT). *@imminent: it
 * runs.
 */
int gpuar_imminent_check(u32 flags, const char *lacking, bool *imminent,
			 struct gpuar_error *diag);

/*
 * Serve a port's imminent waits: resume the claims held from a sliced
 * call, else claim them, and wait in user mode on their words until one
 * reaches its target, every lease has run out, or @deadline_ns; with
 * @sliced, also at most the port's claim slice, after which the claims
 * still watched are held (the fd kept ready) for the next call. Returns
 * how many reached their targets (their records come from the engine's
 * next non-blocking read or run), or a negative errno of the claim. 0 at
 * once when none is imminent.
 */
int gpuar_imminent_serve(struct gpuar_port *port, u64 deadline_ns, bool sliced);

/* The claim slice port options @claim_slice_us ask for on @engine, in ns. */
u64 gpuar_imminent_slice_ns(u32 claim_slice_us, enum gpuar_engine engine);

/*
 * A non-blocking reap of an imminent port: the records already queued,
 * else the imminent waits served until @deadline_ns (@sliced: as
 * gpuar_imminent_serve) and the records that found. Returns records,
 * -EAGAIN when none, or a negative errno. Both reapers of an imminent
 * port use it (gpuar_reap, the io_uring host at EPOLLPRI), so neither
 * spins on a claim while records wait.
 */
int gpuar_imminent_reap(struct gpuar_port *port, struct gpuar_record *records,
			u32 max, u64 deadline_ns, bool sliced);

/* A spin pass's pause: let the sibling hyperthread run, save power. */
static inline void gpuar_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" : : : "memory");
#else
	__asm__ volatile("" : : : "memory");
#endif
}

#endif /* GPUAR_LIB_PORT_H */
