// SPDX-License-Identifier: MIT
/*
 * Hardware word wait on arm64: WFET where the CPU has FEAT_WFxT (the
 * kernel's HWCAP2_WFXT), else WFE woken by the kernel's event stream
 * (HWCAP_EVTSTRM); found by getauxval() once. Both wait on the exclusive
 * monitor armed by a load-acquire-exclusive of the word: a store to its
 * granule clears the monitor, which wakes the wait.
 *
 * WFET takes a deadline on the virtual counter, so each wait is bounded
 * exactly. WFE has no deadline: it wakes at the latest at the next event
 * stream tick. The kernel sets the stream to 100 us rounded to a power of
 * two of counter ticks (at most 4/3 of it), so WFE is used only for waits
 * whose bound allows a tick (EVTSTRM_MAX_NS) and only while a whole tick
 * is left before the deadline; the rest is polled with YIELD, so a wait
 * never overshoots its deadline. A bound below a tick cannot be kept:
 * gpuar_hw_word_wait() then returns -EOPNOTSUPP, and the caller runs its
 * declared fallback (a timed sleep).
 *
 * Compiled by the aarch64 cross-compile check (make check-arm64-hwwait);
 * not run on this project's x86-64 test machines.
 */
#include "internal.h"

#if defined(__aarch64__)
#include <errno.h>
#include <pthread.h>
#include <sys/auxv.h>

#ifndef HWCAP_EVTSTRM
#define HWCAP_EVTSTRM (1UL << 2)
#endif
#ifndef HWCAP2_WFXT
#define HWCAP2_WFXT (1UL << 31)
#endif

/* The longest event stream period the kernel sets (4/3 x 100 us), rounded up. */
#define EVTSTRM_MAX_NS 150000ULL

enum hw_kind { HW_NONE, HW_WFET, HW_WFE };

static enum hw_kind hw;
static u64 cnt_hz;
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;

static inline u64 cntvct(void)
{
	u64 v;

	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}

static void probe(void)
{
	u64 hz;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
	cnt_hz = hz;
	if ((getauxval(AT_HWCAP2) & HWCAP2_WFXT) && cnt_hz)
		hw = HW_WFET;
	else if (getauxval(AT_HWCAP) & HWCAP_EVTSTRM)
		hw = HW_WFE;
}

GPUAR_EXPORT const char *gpuar_hw_word_wait_kind(void)
{
	pthread_once(&hw_once, probe);
	return hw == HW_WFET ? "wfet" : hw == HW_WFE ? "wfe" : NULL;
}

/* Arm the monitor on @word; true while it still holds @seen. */
static inline bool monitor(const uint64_t *word, u64 seen)
{
	u64 v;

	__asm__ volatile("ldaxr %0, [%1]" : "=r"(v) : "r"(word) : "memory");
	return v == seen;
}

static void wfet_once(const uint64_t *word, u64 seen, u64 ns)
{
	/* ns < 2^64 / cnt_hz for any bound a caller gives (minutes). */
	u64 deadline = cntvct() + (u64)((unsigned __int128)ns * cnt_hz /
					1000000000ULL);

	if (!monitor(word, seen))
		return;
	/* wfet x17, emitted as its encoding for assemblers before v8.7 */
	__asm__ volatile("mov x17, %0\n\t.inst 0xd5031011"
			 : : "r"(deadline) : "x17", "memory");
}

GPUAR_EXPORT int gpuar_hw_word_wait(const uint64_t *word, uint64_t seen,
				    uint64_t until_ns, uint64_t bound_ns)
{
	u64 now;

	if (!word)
		return -EINVAL;
	if (!gpuar_hw_word_wait_kind())
		return -EOPNOTSUPP;
	if (hw == HW_WFE && bound_ns < EVTSTRM_MAX_NS)
		return -EOPNOTSUPP;
	while ((now = gpuar_now_ns()) < until_ns &&
	       __atomic_load_n(word, __ATOMIC_ACQUIRE) == seen) {
		u64 left = until_ns - now;

		if (hw == HW_WFET)
			wfet_once(word, seen, left < bound_ns ? left : bound_ns);
		else if (left >= EVTSTRM_MAX_NS && monitor(word, seen))
			__asm__ volatile("wfe" : : : "memory");
		else
			__asm__ volatile("yield" : : : "memory");
	}
	return 0;
}

#endif /* __aarch64__ */
