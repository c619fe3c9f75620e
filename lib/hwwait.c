// SPDX-License-Identifier: MIT
/*
 * Hardware word wait: x86 UMONITOR/UMWAIT (WAITPKG) or AMD
 * MONITORX/MWAITX, found by CPUID once. The instructions are emitted as
 * bytes and only ever executed after CPUID said the CPU has them. arm64
 * (WFET/WFE) is in hwwait_arm64.c; other CPUs have none.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>

#if defined(__x86_64__)
#include <cpuid.h>

enum hw_kind { HW_NONE, HW_UMWAIT, HW_MWAITX };

static enum hw_kind hw;
static double tsc_per_ns;
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

static inline u64 rdtsc(void)
{
	u32 lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

/* TSC ticks per ns, measured once over ~2 ms (the deadlines need it). */
static void calibrate(void)
{
	u64 t0 = gpuar_now_ns(), c0 = rdtsc(), t1, c1;

	do {
		t1 = gpuar_now_ns();
	} while (t1 - t0 < 2000000ULL);
	c1 = rdtsc();
	tsc_per_ns = (double)(c1 - c0) / (double)(t1 - t0);
}

static void probe(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1U << 5)))
		hw = HW_UMWAIT;
	else if (__get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1U << 29)))
		hw = HW_MWAITX;
	if (hw != HW_NONE)
		calibrate();
}

GPUAR_EXPORT const char *gpuar_hw_word_wait_kind(void)
{
	pthread_once(&hw_once, probe);
	return hw == HW_UMWAIT ? "umwait" : hw == HW_MWAITX ? "mwaitx" : NULL;
}

/*
 * Arm the monitor, look once more (a store between the caller's look and
 * the arming would not wake the wait), then wait.
 */
static void umwait_once(const uint64_t *word, u64 seen, u64 tsc_deadline)
{
	/* umonitor %rax */
	__asm__ volatile(".byte 0xf3, 0x0f, 0xae, 0xf0" : : "a"(word) : "memory");
	if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
		return;
	/* umwait %ecx (0: C0.2), deadline in edx:eax */
	__asm__ volatile(".byte 0xf2, 0x0f, 0xae, 0xf1"
			 : : "c"(0), "a"((u32)tsc_deadline),
			   "d"((u32)(tsc_deadline >> 32)) : "memory", "cc");
}

static void mwaitx_once(const uint64_t *word, u64 seen, u64 ticks)
{
	/* monitorx (rax, ecx=0, edx=0) */
	__asm__ volatile(".byte 0x0f, 0x01, 0xfa"
			 : : "a"(word), "c"(0), "d"(0) : "memory");
	if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
		return;
	/* mwaitx (eax=0, ecx=2: timer in ebx) */
	__asm__ volatile(".byte 0x0f, 0x01, 0xfb"
			 : : "a"(0), "c"(2),
			   "b"((u32)(ticks > 0xffffffffULL ? 0xffffffffULL : ticks))
			 : "memory");
}

GPUAR_EXPORT int gpuar_hw_word_wait(const uint64_t *word, uint64_t seen,
				    uint64_t until_ns, uint64_t bound_ns)
{
	u64 now;

	if (!word)
		return -EINVAL;
	if (!gpuar_hw_word_wait_kind())
		return -EOPNOTSUPP;
	while ((now = gpuar_now_ns()) < until_ns &&
	       __atomic_load_n(word, __ATOMIC_ACQUIRE) == seen) {
		u64 left = until_ns - now;
		u64 ticks = (u64)((double)(left < bound_ns ? left : bound_ns) *
				  tsc_per_ns);

		if (hw == HW_UMWAIT)
			umwait_once(word, seen, rdtsc() + ticks);
		else
			mwaitx_once(word, seen, ticks);
	}
	return 0;
}

#elif !defined(__aarch64__)

GPUAR_EXPORT const char *gpuar_hw_word_wait_kind(void)
{
	return NULL;
}

GPUAR_EXPORT int gpuar_hw_word_wait(const uint64_t *word, uint64_t seen,
				    uint64_t until_ns, uint64_t bound_ns)
{
	(void)word;
	(void)seen;
	(void)until_ns;
	(void)bound_ns;
	return -EOPNOTSUPP;
}

#endif
