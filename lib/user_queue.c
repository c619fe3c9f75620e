// SPDX-License-Identifier: MIT
/*
 * The user engine's record queue: a ring of max_waits records, and the
 * eventfd in its epoll set that is readable exactly while the ring holds
 * one. Every function runs under the port's lock.
 */
#include "engine_user.h"

#include <unistd.h>

/*
 * The set of waits changed: a spinning reaper, which reads the count
 * without the lock, looks again.
 */
void uport_note_change(struct uport *u)
{
	__atomic_store_n(&u->changes, u->changes + 1, __ATOMIC_RELEASE);
}

void uport_enqueue(struct uport *u, const struct gpuar_record *rec)
{
	u->q[(u->qhead + u->qlen) % u->max_waits] = *rec;
	u->qlen++;
	uport_note_change(u);
	if (rec->outcome < GPUAR_OUTCOME_COUNT)
		u->st.outcomes[rec->outcome]++;
}

/*
 * Keep the eventfd readable exactly while records are queued, or while a
 * sliced claimer holds claims it still watches (claim_held: the loop
 * comes back to resume them). Callers sync once they have taken the
 * records they want: a reaper that takes them in the same hold of the
 * lock makes no eventfd calls.
 */
void uport_sync_eventfd(struct uport *u)
{
	bool want = u->qlen || u->claim_held;
	u64 v = 1;

	if (want && !u->ev_set) {
		if (GPUAR_SYS(write(u->evfd, &v, sizeof(v))) == sizeof(v))
			u->ev_set = true;
	} else if (!want && u->ev_set) {
		if (GPUAR_SYS(read(u->evfd, &v, sizeof(v))) == sizeof(v))
			u->ev_set = false;
	}
}

/* Take up to @max records, oldest first. */
u32 uport_pop(struct uport *u, struct gpuar_record *records, u32 max)
{
	u32 n = 0;

	while (n < max && u->qlen) {
		records[n++] = u->q[u->qhead];
		u->qhead = (u->qhead + 1) % u->max_waits;
		u->qlen--;
	}
	uport_sync_eventfd(u);
	return n;
}

/*
 * A record of @user_data that ended otherwise than cancelled is queued:
 * a cancel that finds no pending wait lost the race to its completion.
 */
bool uport_queued_completion(const struct uport *u, u64 user_data)
{
	u32 i;

	for (i = 0; i < u->qlen; i++) {
		const struct gpuar_record *r =
			&u->q[(u->qhead + i) % u->max_waits];

		if (r->user_data == user_data &&
		    r->outcome != GPUAR_OUTCOME_CANCELLED)
			return true;
	}
	return false;
}
