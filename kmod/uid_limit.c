// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Ports per user: the max_ports limit. Each user (real uid, as
 * RLIMIT_NPROC counts) has a small counted entry while it holds ports;
 * creating a port past max_ports fails with EMFILE. Entries live in a list
 * under one mutex: port creation and release are rare and sleepable.
 */
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "params.h"
#include "port.h"

struct gpuar_uid_limit {
	struct list_head node;
	kuid_t uid;
	unsigned int ports;
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
