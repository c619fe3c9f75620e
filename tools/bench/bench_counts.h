/* SPDX-License-Identifier: MIT */
/*
 * Machine-independent counts of one repetition, which explain its CPU
 * and latency figures without depending on how fast the machine is: the
 * port's own counters (timer firings, word checks, waits raised imminent,
 * waits claimed, leases that ran out, waits that ended LATE: found done
 * by the first look after their estimator sleep), the waiter thread's context
 * switches (getrusage RUSAGE_THREAD: voluntary ones are blocks, each
 * ended by a wake-up; involuntary ones are preemptions), and the
 * wake-ups of a strategy's helper thread, and the system calls made to
 * wait: the library's for the strategy's port (gpuar_port_lib_stats) and
 * the bench's own (BENCH_SYS, where the strategy calls the kernel itself:
 * its epoll loop, read(), io_uring, futex, sleeps), the waiter's and a
 * helper thread's alike; never the simulated device's.
 */
#ifndef GPUAR_BENCH_COUNTS_H
#define GPUAR_BENCH_COUNTS_H

#include <stdbool.h>
#include <stdint.h>

/* The port counters a repetition reports per wait. */
struct bench_port_counts {
	uint64_t timer_fires, checks, imminent, claims, lease_expiries, late;
};

struct bench_counts {
	uint64_t voluntary;	/* the waiter thread's voluntary switches */
	uint64_t involuntary;	/* and involuntary ones */
	uint64_t helper_wakeups;
	struct bench_port_counts port;
	bool has_port;		/* the strategy waits through a port */
	uint64_t syscalls;	/* the library's and the bench's, so far */
	bool has_syscalls;	/* false: calls the bench cannot see (CUDA) */
};

/*
 * The system calls the bench's strategies make themselves, counted where
 * each is made: BENCH_SYS(call) adds one and evaluates @call.
 */
extern uint64_t bench_syscall_count;
#define BENCH_SYS(call)							\
	(__atomic_add_fetch(&bench_syscall_count, 1, __ATOMIC_RELAXED), (call))

/* The calling thread's context switches into @c; 0 or -errno. */
int bench_counts_thread(struct bench_counts *c);

/* Port counters per wait; each < 0 when the strategy has no port. */
struct bench_port_per_wait {
	double timer_fires, checks, imminent, claims, lease_expiries, late;
};

struct bench_counts_per_wait {
	struct bench_port_per_wait port;
	double ctx_switches;
	double wakeups;
	double syscalls;	/* < 0: not counted */
};

/* The counts between @a and @b, per wait of @waits (> 0). */
struct bench_counts_per_wait bench_counts_per_wait(const struct bench_counts *a,
						   const struct bench_counts *b,
						   uint64_t waits);

#endif /* GPUAR_BENCH_COUNTS_H */
