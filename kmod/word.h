/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What the word_*.c files call in each other, below what the rest of the
 * module calls (port.h). Calls go one way, down this list of files:
 * word_wait.c (submit) and word_timer.c, then word_imminent.c, then
 * word_check.c, then word_queue.c. Every function named *_locked runs
 * with port->lock held, in any context.
 */
#ifndef GPUAR_WORD_H
#define GPUAR_WORD_H

#include <linux/types.h>

struct gpuar_port;
struct gpuar_wait;

/* word_queue.c: the timer queue, the busy queue, the imminent lists */
u64 gpuar_check_floor_ns(void);
void gpuar_word_enqueue_locked(struct gpuar_port *port, struct gpuar_wait *w);
void gpuar_word_unqueue_locked(struct gpuar_port *port, struct gpuar_wait *w);
void gpuar_word_move_locked(struct gpuar_port *port, struct gpuar_wait *w);
void gpuar_word_requeue_locked(struct gpuar_port *port, struct gpuar_wait *w);
void gpuar_word_retarget_locked(struct gpuar_port *port);
void gpuar_word_arm_locked(struct gpuar_port *port, u64 when, u64 slack);
u64 gpuar_word_slack(const struct gpuar_wait *w);
void gpuar_word_busyq_add_locked(struct gpuar_port *port,
				 struct gpuar_wait *w);
void gpuar_word_busyq_del_locked(struct gpuar_port *port,
				 struct gpuar_wait *w);
void gpuar_word_imminent_del_locked(struct gpuar_port *port,
				    struct gpuar_wait *w);

/* word_check.c: one look at the word; @raise: the look at a raise */
bool gpuar_word_look_locked(struct gpuar_port *port, struct gpuar_wait *w,
			    u64 now, bool by_reader, bool raise);

/* word_imminent.c */
void gpuar_word_raise_locked(struct gpuar_port *port, struct gpuar_wait *w);

#endif /* GPUAR_WORD_H */
