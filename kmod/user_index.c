// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Waits by user data, so that a cancel finds the waits of one user data
 * without looking at every other wait of the port.
 *
 * An index is an rbtree keyed by user data, equal keys in the order they
 * joined. Its nodes are the waits' own (struct gpuar_wait.unode), so it
 * never allocates and never fails: it is changed under the port lock in
 * any context (a fence callback in hard IRQ, the timer in softirq), and
 * holds at most the port's waits, which max_waits bounds. A port has two
 * (port.h): its pending waits, and its queued records other than
 * cancellations. Finding the first wait of a user data compares at most
 * the tree's height, 2 * log2(n + 1) waits of n; each further wait of it
 * costs one more comparison.
 *
 * The finders count every wait they compare in *@looked (the cancel
 * tracepoint reports it), so a test can tell this from a scan.
 */
#include <linux/rbtree.h>

#include "port.h"

static bool gpuar_user_index_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct gpuar_wait, unode)->user_data <
	       rb_entry(b, struct gpuar_wait, unode)->user_data;
}

/* Port lock held. After the waits already there with its user data. */
void gpuar_user_index_add(struct rb_root *index, struct gpuar_wait *w)
{
	rb_add(&w->unode, index, gpuar_user_index_less);
}

/* Port lock held. A wait in no index is left alone. */
void gpuar_user_index_del(struct rb_root *index, struct gpuar_wait *w)
{
	if (RB_EMPTY_NODE(&w->unode))
		return;
	rb_erase(&w->unode, index);
	RB_CLEAR_NODE(&w->unode);
}

/* Port lock held. The first wait of @user_data to join, or NULL. */
struct gpuar_wait *gpuar_user_index_first(const struct rb_root *index,
					  u64 user_data, unsigned int *looked)
{
	struct rb_node *n = index->rb_node;
	struct gpuar_wait *found = NULL;

	while (n) {
		struct gpuar_wait *w = rb_entry(n, struct gpuar_wait, unode);

		(*looked)++;
		if (user_data < w->user_data) {
			n = n->rb_left;
		} else if (user_data > w->user_data) {
			n = n->rb_right;
		} else {
			/* An earlier one may sit to the left. */
			found = w;
			n = n->rb_left;
		}
	}
	return found;
}

/*
 * Port lock held. The wait of @w's user data that joined after @w, or
 * NULL. Ask before @w leaves the index.
 */
struct gpuar_wait *gpuar_user_index_next(struct gpuar_wait *w,
					 unsigned int *looked)
{
	struct rb_node *n = rb_next(&w->unode);
	struct gpuar_wait *next;

	if (!n)
		return NULL;
	next = rb_entry(n, struct gpuar_wait, unode);
	(*looked)++;
	return next->user_data == w->user_data ? next : NULL;
}
