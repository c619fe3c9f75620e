/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The shared core's type shim. The core is freestanding C: no libc and no
 * kernel-internal headers, so the same files compile into the module and
 * the library. The only header it includes is the ABI's <linux/gpuar.h>
 * (which brings <linux/types.h> for the __u64-style ABI types); everything
 * else comes from the compiler.
 */
#ifndef GPUAR_CORE_TYPES_H
#define GPUAR_CORE_TYPES_H

#include <linux/gpuar.h>

#ifdef __KERNEL__
#include <linux/types.h>	/* bool, size_t, u64: the kernel's own */
#else
/*
 * The ABI's own types, as in the kernel, so a u64 * may point at a __u64
 * field of an ABI struct (__u64 is unsigned long long on every arch).
 */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef __SIZE_TYPE__ size_t;
#ifndef __cplusplus
#if !defined(__bool_true_false_are_defined)
typedef _Bool bool;
#define true 1
#define false 0
#define __bool_true_false_are_defined 1
#endif
#endif
#ifndef NULL
#define NULL ((void *)0)
#endif
#endif

#define GPUAR_U64_MAX (~(u64)0)
#define GPUAR_NSEC_PER_USEC 1000ULL

/*
 * @a + @b, saturating at GPUAR_U64_MAX: a time plus an interval that would
 * wrap is "never", not a time long past.
 */
static inline u64 gpuar_add_sat(u64 a, u64 b)
{
	return a + b < a ? GPUAR_U64_MAX : a + b;
}

#endif /* GPUAR_CORE_TYPES_H */
