// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Per-user limits: ports (max_ports) and the check budget of their
 * timers (check_budget), under a system-wide check budget
 * (check_budget_all). Each user (real uid, as RLIMIT_NPROC counts) has a
 * small counted entry while it holds ports; creating a port past
 * max_ports fails with EMFILE. Entries live in a list under one mutex: port creation and
 * release are rare and sleepable.
 */
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>

#include "../core/defaults.h"
#include "params.h"
#include "port.h"

struct gpuar_uid_limit {
	struct list_head node;
	kuid_t uid;
	unsigned int ports;
	/*
	 * Pages the user's ports pin, where the module holds no user_struct
	 * to charge them to (compat.h: free_uid not exported): against
	 * RLIMIT_MEMLOCK as user->locked_vm would be. It lives while the
	 * user has ports, and a port's charges are gone before its
	 * reference is, so no charge outlives it.
	 */
	atomic_long_t locked_pages;
	spinlock_t budget_lock;		/* taken under a port lock only */
	u64 budget_spent_ns;		/* the budget is spent up to here */
};

static LIST_HEAD(gpuar_uid_limits);
static DEFINE_MUTEX(gpuar_uid_limits_lock);

struct gpuar_uid_limit *gpuar_uid_limit_get(void)
{
	kuid_t uid = current_uid();
	struct gpuar_uid_limit *u;

	mutex_lock(&gpuar_uid_limits_lock);
	list_for_each_entry(u, &gpuar_uid_limits, node) {
		if (uid_eq(u->uid, uid))
			goto found;
	}
	/*
	 * Shared by every port of the user, outliving its creator: charging
	 * it to the first creator's memory cgroup would bill one cgroup for
	 * the others, so it is not accounted (it is a few bytes per user).
	 */
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u) {
		u = ERR_PTR(-ENOMEM);
		goto out;
	}
	u->uid = uid;
	spin_lock_init(&u->budget_lock);
	list_add(&u->node, &gpuar_uid_limits);
found:
	if (u->ports >= READ_ONCE(gpuar_max_ports)) {
		if (!u->ports) {
			list_del(&u->node);
			kfree(u);
		}
		u = ERR_PTR(-EMFILE);
		goto out;
	}
	u->ports++;
out:
	mutex_unlock(&gpuar_uid_limits_lock);
	return u;
}

/*
 * Charge @pages pinned pages to the user's own count against @limit (the
 * registering task's RLIMIT_MEMLOCK, in pages): -ENOMEM past it. The
 * count is per user, not per address space, so passing the port's fd on
 * and exiting escapes nothing.
 */
int gpuar_uid_pin_charge(struct gpuar_uid_limit *u, unsigned long pages,
			 unsigned long limit)
{
	long cur = atomic_long_read(&u->locked_pages), next;

	do {
		next = cur + pages;
		if ((unsigned long)next > limit || next < cur)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&u->locked_pages, &cur, next));
	return 0;
}

void gpuar_uid_pin_uncharge(struct gpuar_uid_limit *u, unsigned long pages)
{
	WARN_ON_ONCE(atomic_long_sub_return(pages, &u->locked_pages) < 0);
}

void gpuar_uid_limit_put(struct gpuar_uid_limit *u)
{
	mutex_lock(&gpuar_uid_limits_lock);
	if (!--u->ports) {
		WARN_ON_ONCE(atomic_long_read(&u->locked_pages));
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&gpuar_uid_limits_lock);
}

/*
 * The check budgets of the port timers: each user's (check_budget checks
 * per second, all its ports together) and the whole machine's
 * (check_budget_all, all users together: users are kuids, and one person
 * with a range of subordinate uids is many of them), each kept as the time
 * up to which it is spent (a token bucket in the form of the generic cell
 * rate algorithm): a check costs 1/rate seconds of each, and neither lags
 * the clock by more than GPUAR_CHECK_BURST_MS, which is all the unused
 * budget kept. A check is taken from both or from neither.
 *
 * Lock order: a port's lock, then the user's budget_lock, then
 * gpuar_budget_all.lock; all with interrupts off (the port lock's).
 */
struct gpuar_budget_all {
	spinlock_t lock;		/* taken under a user's budget_lock */
	u64 spent_ns;			/* the budget is spent up to here */
};

static struct gpuar_budget_all gpuar_budget_all = {
	.lock = __SPIN_LOCK_UNLOCKED(gpuar_budget_all.lock),
};

/* One bucket's state at @now: its base, and checks available from it. */
static u64 gpuar_budget_avail(u64 spent_ns, u64 now, u64 cost, u64 *base)
{
	u64 burst = GPUAR_CHECK_BURST_MS * NSEC_PER_MSEC;

	*base = max(spent_ns, now > burst ? now - burst : 0);
	return *base <= now ? div64_u64(now - *base, cost) : 0;
}

/*
 * Take up to @want checks from both budgets, or (@want 0 or none
 * available) reserve one from both: the budgets go into debt by one
 * check, earned at *@next_ns. Returns how many were taken.
 */
static unsigned int gpuar_budget_take_locked(struct gpuar_uid_limit *u,
					     u64 now, unsigned int want,
					     u64 *next_ns)
{
	u64 cost_u = NSEC_PER_SEC / max(1U, READ_ONCE(gpuar_check_budget));
	u64 cost_a = NSEC_PER_SEC / max(1U, READ_ONCE(gpuar_check_budget_all));
	struct gpuar_budget_all *a = &gpuar_budget_all;
	u64 base_u, base_a, avail;
	unsigned int got;

	lockdep_assert_held(&u->budget_lock);
	lockdep_assert_held(&a->lock);
	avail = min(gpuar_budget_avail(u->budget_spent_ns, now, cost_u,
				       &base_u),
		    gpuar_budget_avail(a->spent_ns, now, cost_a, &base_a));
	got = min_t(u64, want, avail);
	u->budget_spent_ns = base_u + max(got, 1U) * cost_u;
	a->spent_ns = base_a + max(got, 1U) * cost_a;
	*next_ns = max(u->budget_spent_ns, a->spent_ns);
	if (got)
		*next_ns = max(base_u + (got + 1) * cost_u,
			       base_a + (got + 1) * cost_a);
	return got;
}

/*
 * Takes up to @want checks at @now (port lock held, so interrupts off)
 * and returns how many it got. Fewer than @want: *@next_ns is when the
 * next one is earned. None: one is reserved for the caller all the same
 * (the budgets go into debt by one check), to be spent at *@next_ns;
 * a port fires at most once per check it is given or reserves, so every
 * firing is paid for and, since a reservation is first in line, ports of
 * one user cannot starve each other of checks.
 */
unsigned int gpuar_uid_budget_take(struct gpuar_uid_limit *u, u64 now,
				   unsigned int want, u64 *next_ns)
{
	unsigned int got;

	spin_lock(&u->budget_lock);
	spin_lock(&gpuar_budget_all.lock);
	got = gpuar_budget_take_locked(u, now, max(want, 1U), next_ns);
	spin_unlock(&gpuar_budget_all.lock);
	spin_unlock(&u->budget_lock);
	return got;
}

/*
 * A port whose firing got fewer checks than it wanted: if the budget is
 * spent at @now, reserve its next firing's check at once (true, *@next_ns
 * when it is earned), so that firing, too, is paid. Otherwise the port
 * would come back at its next wait's due time to find the budget spent,
 * fire for nothing and reserve only then: two firings per check, which
 * made a user's firings per second twice the budget (the checks held).
 */
bool gpuar_uid_budget_hold(struct gpuar_uid_limit *u, u64 now, u64 *next_ns)
{
	u64 cost_u = NSEC_PER_SEC / max(1U, READ_ONCE(gpuar_check_budget));
	u64 cost_a = NSEC_PER_SEC / max(1U, READ_ONCE(gpuar_check_budget_all));
	bool spent;
	u64 base;

	spin_lock(&u->budget_lock);
	spin_lock(&gpuar_budget_all.lock);
	spent = !gpuar_budget_avail(u->budget_spent_ns, now, cost_u, &base) ||
		!gpuar_budget_avail(gpuar_budget_all.spent_ns, now, cost_a,
				    &base);
	if (spent)
		gpuar_budget_take_locked(u, now, 0, next_ns);
	spin_unlock(&gpuar_budget_all.lock);
	spin_unlock(&u->budget_lock);
	return spent;
}
