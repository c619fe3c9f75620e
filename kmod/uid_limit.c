// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Per-user limits: ports (max_ports) and the check budget of their timers
 * (check_budget). Each user (real uid, as RLIMIT_NPROC counts) has a small
 * counted entry while it holds ports; creating a port past max_ports fails
 * with EMFILE. Entries live in a list under one mutex: port creation and
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

void gpuar_uid_limit_put(struct gpuar_uid_limit *u)
{
	mutex_lock(&gpuar_uid_limits_lock);
	if (!--u->ports) {
		list_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&gpuar_uid_limits_lock);
}

/*
 * The check budget of the user's port timers: check_budget checks per
 * second, kept as the time up to which the budget is spent (a token
 * bucket in the form of the generic cell rate algorithm): a check costs
 * 1/check_budget seconds of it, and the budget never lags the clock by
 * more than GPUAR_CHECK_BURST_MS, which is all the unused budget a user
 * keeps.
 *
 * Takes up to @want checks at @now (port lock held, so interrupts off)
 * and returns how many it got. Fewer than @want: *@next_ns is when the
 * next one is earned. None: one is reserved for the caller all the same
 * (the budget goes into debt by one check), to be spent at *@next_ns;
 * a port fires at most once per check it is given or reserves, so every
 * firing is paid for and, since a reservation is first in line, ports of
 * one user cannot starve each other of checks.
 */
unsigned int gpuar_uid_budget_take(struct gpuar_uid_limit *u, u64 now,
				   unsigned int want, u64 *next_ns)
{
	u64 cost = NSEC_PER_SEC / max(1U, READ_ONCE(gpuar_check_budget));
	u64 burst = GPUAR_CHECK_BURST_MS * NSEC_PER_MSEC;
	u64 base, avail;
	unsigned int got = 0;

	spin_lock(&u->budget_lock);
	base = max(u->budget_spent_ns, now > burst ? now - burst : 0);
	if (base <= now) {
		avail = div64_u64(now - base, cost);
		got = min_t(u64, want, avail);
	}
	if (got) {
		base += got * cost;
		*next_ns = base + cost;
	} else {
		base += cost;
		*next_ns = base;
	}
	u->budget_spent_ns = base;
	spin_unlock(&u->budget_lock);
	return got;
}
