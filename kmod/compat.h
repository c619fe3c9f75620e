/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Every kernel API difference the module meets across 6.1 .. 7.x, in one
 * place. Where a distribution may backport a change, a version number
 * would lie, so kmod/Makefile compiles small probes (the .c files in kmod/conftest)
 * against the target kernel first and writes conftest.h with a
 * GPUAR_HAVE_* line for each that compiled. An in-tree build (which runs
 * no probes) uses the current API of the tree it is part of.
 *
 * dma_fence differences are shared with the test-fence module and live in
 * compat_fence.h (owned with the selftests); it is included from here.
 */
#ifndef GPUAR_KMOD_COMPAT_H
#define GPUAR_KMOD_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/sched/user.h>
#include <linux/cred.h>
#include <linux/workqueue.h>

#ifdef GPUAR_HAVE_CONFTEST_H
#include "conftest.h"
#else
/* In tree: the tree's own, current API. */
#define GPUAR_HAVE_HRTIMER_SETUP 1
#define GPUAR_HAVE_FREE_UID_EXPORT 1
#define GPUAR_HAVE_SYSTEM_DFL_WQ 1
#define GPUAR_HAVE_VM_FLAGS_SET 1
#endif

#include "compat_fence.h"

/*
 * The shared workqueue for work bound to no CPU: system_dfl_wq since
 * 6.17, whose kernels from 7.2 warn when system_unbound_wq is used.
 */
static inline struct workqueue_struct *gpuar_unbound_wq(void)
{
#ifdef GPUAR_HAVE_SYSTEM_DFL_WQ
	return system_dfl_wq;
#else
	return system_unbound_wq;
#endif
}

/* pin_user_pages() lost its vmas argument in 6.5. */
static inline long gpuar_pin_user_pages(unsigned long start,
					unsigned long nr_pages,
					unsigned int gup_flags,
					struct page **pages)
{
#ifdef GPUAR_HAVE_PIN_USER_PAGES_VMAS
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
#else
	return pin_user_pages(start, nr_pages, gup_flags, pages);
#endif
}

/*
 * One page of @mm, with a reference (mmap lock held): get_user_pages_remote()
 * lost its vmas argument in 6.5 as well.
 */
static inline long gpuar_get_user_page_remote(struct mm_struct *mm,
					      unsigned long addr,
					      unsigned int gup_flags,
					      struct page **page)
{
#ifdef GPUAR_HAVE_GET_USER_PAGES_REMOTE_VMAS
	return get_user_pages_remote(mm, addr, 1, gup_flags, page, NULL, NULL);
#else
	return get_user_pages_remote(mm, addr, 1, gup_flags, page, NULL);
#endif
}

/*
 * Flags of a VMA being mapped (.mmap): vm_flags became read-only in 6.3,
 * set through vm_flags_set() (which asserts the mmap lock held for write).
 */
static inline void gpuar_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#ifdef GPUAR_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* hrtimer_init() is gone after 6.12; hrtimer_setup() came in 6.13. */
static inline void gpuar_hrtimer_setup(struct hrtimer *timer,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       clockid_t clock, enum hrtimer_mode mode)
{
#ifdef GPUAR_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/*
 * The creator's user_struct, whose locked_vm a port charges its pinned
 * folios to. Holding one needs free_uid() to let it go, which not every
 * 6.1 build exports to modules: there the port holds none (NULL) and its
 * pins are charged to the module's own count for the user (uid_limit.c),
 * against the same RLIMIT_MEMLOCK.
 */
static inline struct user_struct *gpuar_user_get(void)
{
#ifdef GPUAR_HAVE_FREE_UID_EXPORT
	return get_uid(current_user());
#else
	return NULL;
#endif
}

static inline void gpuar_user_put(struct user_struct *user)
{
#ifdef GPUAR_HAVE_FREE_UID_EXPORT
	free_uid(user);
#endif
}

#endif /* GPUAR_KMOD_COMPAT_H */
