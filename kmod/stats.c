// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Observability: the statistics ioctls, /proc/<pid>/fdinfo/<fd> of a port
 * (which works under kernel lockdown, unlike debugfs) and what debugfs
 * gpuar/ports shows of each port and its points (port.c walks the ports).
 */
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/seq_file.h>

#include "../core/outcome.h"
#include "port.h"
#include "uarg.h"

static void gpuar_port_stats_fill(struct gpuar_port *port,
				  struct gpuar_port_stats *st)
{
	const struct gpuar_port_counters *c = &port->cnt;

	spin_lock_irq(&port->lock);
	st->submitted = c->submitted;
	memcpy(st->outcomes, c->outcomes, sizeof(c->outcomes));
	st->checks = c->checks;
	st->sleeps = c->sleeps;
	st->timer_fires = c->timer_fires;
	st->busy_read_checks = c->busy_read_checks;
	st->imminent = c->imminent;
	st->claims = c->claims;
	st->lease_expiries = c->lease_expiries;
	st->budget_stretched = c->budget_stretched;
	st->pending = port->npending;
	/* Unread: a record in the area's ring is as queued as any. */
	st->queued = port->nqueued + gpuar_area_used_locked(port);
	st->points = port->points.used;
	st->wakeup_latency_ns = gpuar_wakelat_quantile(&port->wakelat);
	spin_unlock_irq(&port->lock);
	st->lines = READ_ONCE(port->nlines);
}

long gpuar_port_stats_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_port_stats st;
	u32 usize, size;
	int ret;

	ret = gpuar_uarg_in(&st, sizeof(st), GPUAR_PORT_STATS_SIZE_VER1, uarg,
			    &usize);
	if (ret)
		return ret;
	if (st.pad)
		return -EINVAL;
	size = st.size;
	memset(&st, 0, sizeof(st));
	st.size = size;
	gpuar_port_stats_fill(port, &st);
	return gpuar_uarg_out(&st, sizeof(st), uarg, usize);
}

long gpuar_point_stats_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_point_stats ps;
	struct gpuar_est_entry *pe;
	u64 predicted;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&ps, sizeof(ps), GPUAR_POINT_STATS_SIZE_VER1, uarg,
			    &usize);
	if (ret)
		return ret;
	if (ps.flags)
		return -EINVAL;

	/*
	 * Which points exist changes only under both locks: the mutex alone
	 * finds the entry, in a probe of a few index slots with interrupts
	 * on, and the spinlock is taken only to copy what the timer updates.
	 */
	mutex_lock(&port->mutex);
	pe = gpuar_est_table_find(&port->points, ps.point);
	if (pe) {
		spin_lock_irq(&port->lock);
		ps.samples = pe->est.samples;
		ps.predicted_ns = 0;
		if (gpuar_est_predict(&pe->est, &predicted)) {
			ps.flags = GPUAR_POINT_HAS_PREDICTION;
			ps.predicted_ns = predicted;
		}
		memcpy(ps.outcomes, pe->outcomes, sizeof(ps.outcomes));
		spin_unlock_irq(&port->lock);
	}
	mutex_unlock(&port->mutex);
	if (!pe)
		return -ENOENT;
	return gpuar_uarg_out(&ps, sizeof(ps), uarg, usize);
}

/*
 * What the port's table and line watch cost, for tests and for whoever
 * wonders where a port's CPU went; not in the ABI's statistics.
 */
static void gpuar_port_show_costs(struct seq_file *m, struct gpuar_port *port)
{
	/*
	 * Racy on purpose: a counter, written under port->mutex only, which
	 * is not taken here (a control path may hold it for long).
	 */
	u64 visits = data_race(READ_ONCE(port->points.visits));
	u64 queued, looks;

	spin_lock_irq(&port->lock);
	queued = port->cnt.verify_queued;
	looks = port->cnt.verify_looks;
	spin_unlock_irq(&port->lock);
	seq_printf(m, "point_visits:\t%llu\n", visits);
	seq_printf(m, "verify_queued:\t%llu\n", queued);
	seq_printf(m, "verify_looks:\t%llu\n", looks);
	/*
	 * Where the port's pinned pages are charged: the creator's
	 * user_struct (locked_vm), or the module's own count for the user
	 * where the kernel does not export free_uid (compat.h).
	 */
	seq_printf(m, "pin_charge:\t%s\n", port->user ? "user" : "module");
	gpuar_area_show(m, port);
}

void gpuar_port_show(struct seq_file *m, struct gpuar_port *port)
{
	struct gpuar_port_stats st = {};
	int i;

	gpuar_port_stats_fill(port, &st);
	seq_printf(m, "port_id:\t%llu\n", port->id);
	seq_printf(m, "record_version:\t%u\n", port->record_version);
	/* 0 when the creator is outside the reader's pid namespace. */
	seq_printf(m, "creator:\t%d\n", pid_vnr(port->creator));
	seq_printf(m, "pending:\t%llu\n", st.pending);
	seq_printf(m, "queued:\t%llu\n", st.queued);
	seq_printf(m, "lines:\t%llu\n", st.lines);
	seq_printf(m, "points:\t%llu\n", st.points);
	seq_printf(m, "submitted:\t%llu\n", st.submitted);
	for (i = 1; i < GPUAR_OUTCOME_COUNT; i++)
		seq_printf(m, "%s:\t%llu\n", gpuar_outcome_str(i),
			   st.outcomes[i]);
	seq_printf(m, "checks:\t%llu\n", st.checks);
	seq_printf(m, "sleeps:\t%llu\n", st.sleeps);
	seq_printf(m, "timer_fires:\t%llu\n", st.timer_fires);
	seq_printf(m, "busy_read_checks:\t%llu\n", st.busy_read_checks);
	seq_printf(m, "wakeup_latency_ns:\t%llu\n", st.wakeup_latency_ns);
	gpuar_port_show_costs(m, port);
}

void gpuar_port_show_fdinfo(struct seq_file *m, struct file *file)
{
	gpuar_port_show(m, file->private_data);
}

/*
 * One line per point: key, samples, prediction, outcomes. Each entry is
 * read under the port spinlock alone (the entries live as long as the
 * port and never move; whether one is used changes under the lock too):
 * never port->mutex, which a control path may hold for long, while the
 * port list's lock is held (debugfs walks every port).
 */
void gpuar_port_show_points(struct seq_file *m, struct gpuar_port *port)
{
	u32 i;

	for (i = 0; i < port->points.limit; i++) {
		struct gpuar_est_entry *pe = &port->points.entries[i];
		u64 outcomes[GPUAR_OUTCOME_COUNT];
		u64 point, samples, predicted = 0;
		bool has;
		int k;

		spin_lock_irq(&port->lock);
		if (i >= port->points.used || !pe->used) {
			spin_unlock_irq(&port->lock);
			continue;
		}
		point = pe->point;
		samples = pe->est.samples;
		has = gpuar_est_predict(&pe->est, &predicted);
		memcpy(outcomes, pe->outcomes, sizeof(outcomes));
		spin_unlock_irq(&port->lock);
		seq_printf(m, "point 0x%llx samples=%llu predicted_ns=%llu",
			   point, samples, has ? predicted : 0);
		for (k = 1; k < GPUAR_OUTCOME_COUNT; k++)
			seq_printf(m, " %s=%llu", gpuar_outcome_str(k),
				   outcomes[k]);
		seq_putc(m, '\n');
	}
}
