// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The area (GPUAR_PORT_AREA): the port's completion records in a ring
 * shared with userspace, reaped there with no system call. The header's
 * section "The area" is the contract; this file is its mechanics, knowing
 * nothing of waits: record.c decides which record goes in (the producer,
 * under port->lock) and keeps the queue behind it.
 *
 * One vmalloc_user() allocation: the page of struct gpuar_area, then the
 * ring, rounded up to whole pages, mapped by mmap() at offset 0 and
 * freed at release (a mapping holds the file, so release runs after the
 * last munmap). The module keeps its own copies of everything it writes
 * there (port->ring_tail, ->area_flags, the geometry) and never reads
 * them back; the one field it reads is head, which anyone holding the fd
 * may write anything to. A head that is not within ring_entries behind
 * the module's tail counts as a full ring to the producer (records go
 * to the queue, where read() finds them) and as an empty one to readers
 * and pollers (nothing in the ring can be told apart from garbage).
 *
 *   shared page          ring (ring_entries x record_size)
 *   +---------------+    +------+------+------+------+-- - -
 *   | magic .. mask |    | rec  | rec  | rec  |      |
 *   | tail  flags   |    +------+------+------+------+-- - -
 *   | head          |       ^head         ^tail (module's, store-release)
 *   +---------------+
 */
#include <linux/mm.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "params.h"
#include "port.h"

/*
 * A read()'s swaps of head that may fail (a consumer in userspace took
 * the record first) before it stops taking from the ring: each failure
 * is another consumer's success, so the bound only keeps one read() from
 * spinning for as long as userspace races it.
 */
#define GPUAR_AREA_CAS_TRIES 64

/* The ring's size for a port that asked for @want (0: the default). */
static int gpuar_area_entries(u32 want, u32 *entries)
{
	if (!want)
		want = clamp_t(u32, READ_ONCE(gpuar_max_waits),
			       GPUAR_AREA_RING_MIN, GPUAR_AREA_RING_MAX);
	if (want < GPUAR_AREA_RING_MIN || want > GPUAR_AREA_RING_MAX)
		return -EINVAL;
	*entries = roundup_pow_of_two(want);
	return 0;
}

/* Port creation, process context: the area of @entries_wanted records. */
int gpuar_area_create(struct gpuar_port *port, u32 entries_wanted)
{
	u32 entries, ring_bytes;
	struct gpuar_area *a;
	size_t bytes;
	int ret;

	BUILD_BUG_ON(sizeof(struct gpuar_area) != GPUAR_AREA_SIZE_VER1);
	BUILD_BUG_ON(sizeof(struct gpuar_area) > PAGE_SIZE);
	ret = gpuar_area_entries(entries_wanted, &entries);
	if (ret)
		return ret;
	ring_bytes = entries * sizeof(struct gpuar_record);
	bytes = PAGE_SIZE + PAGE_ALIGN(ring_bytes);
	a = vmalloc_user(bytes);	/* zeroed, VM_USERMAP */
	if (!a)
		return -ENOMEM;
	a->magic = GPUAR_AREA_MAGIC;
	a->size = sizeof(*a);
	a->bytes = bytes;
	a->ring_off = PAGE_SIZE;
	a->ring_entries = entries;
	a->ring_mask = entries - 1;
	a->record_size = sizeof(struct gpuar_record);
	port->area = a;
	port->ring = (struct gpuar_record *)((char *)a + PAGE_SIZE);
	port->area_bytes = bytes;
	port->ring_entries = entries;
	return 0;
}

/* Release: nothing maps the area any more (a mapping holds the file). */
void gpuar_area_free(struct gpuar_port *port)
{
	vfree(port->area);
	port->area = NULL;
	port->ring = NULL;
}

/*
 * mmap() of the port: the whole area or a prefix of it, at offset 0,
 * shared. A private mapping would copy the page on the first write, and
 * the consumer's swaps of head would then go to its copy: the module
 * would never see them, so it is refused rather than left to fail slowly.
 * VM_DONTEXPAND: mremap() cannot grow the mapping past what was checked.
 */
int gpuar_area_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct gpuar_port *port = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;

	if (!port->area)
		return -ENODEV;
	if (vma->vm_pgoff || !(vma->vm_flags & VM_SHARED) ||
	    len > port->area_bytes)
		return -EINVAL;
	gpuar_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return remap_vmalloc_range(vma, port->area, 0);
}

/*
 * Records in the ring by the consumers' head: tail - head when head is
 * within ring_entries behind the module's tail, else U32_MAX (garbage).
 * Any context; lockless callers get an answer as of their look.
 */
static u32 gpuar_area_count(struct gpuar_port *port, u32 tail)
{
	u32 used = tail - READ_ONCE(port->area->head);

	return used <= port->ring_entries ? used : U32_MAX;
}

/* For the wait limit and the statistics: garbage counts as a full ring. */
u32 gpuar_area_used_locked(struct gpuar_port *port)
{
	u32 used;

	lockdep_assert_held(&port->lock);
	if (!port->area)
		return 0;
	used = gpuar_area_count(port, port->ring_tail);
	return used == U32_MAX ? port->ring_entries : used;
}

/*
 * Is a record in the ring for a reader to take? Any context, no lock:
 * the tail is the module's (acquire, pairing with the producer's
 * release), so a yes means the record is there to read.
 */
bool gpuar_area_ready(struct gpuar_port *port)
{
	u32 used;

	if (!port->area)
		return false;
	/* Pairs with the producer's release: the slot is written. */
	used = gpuar_area_count(port, smp_load_acquire(&port->ring_tail));
	return used && used != U32_MAX;
}

/*
 * The producer, port->lock held, any context: put @rec at the tail if the
 * ring has room by the head read now; false when it has none (or head is
 * garbage), and the caller queues the record instead. The head is read
 * with acquire: a consumer's copy of the slot comes before its swap, and
 * this write of the slot after our read of that swap.
 */
bool gpuar_area_push_locked(struct gpuar_port *port,
			    const struct gpuar_record *rec)
{
	u32 tail = port->ring_tail;

	lockdep_assert_held(&port->lock);
	/* Pairs with the consumer's swap: its copy is done before we write. */
	if (tail - smp_load_acquire(&port->area->head) >= port->ring_entries)
		return false;
	port->ring[tail & (port->ring_entries - 1)] = *rec;
	/* The slot before the tail, for read() (ring_tail) ... */
	smp_store_release(&port->ring_tail, tail + 1);
	/* ... and for userspace (the shared tail, its load-acquire). */
	smp_store_release(&port->area->tail, tail + 1);
	return true;
}

/* port->lock held: GPUAR_AREA_OVERFLOW on or off, written only on change. */
void gpuar_area_overflow_locked(struct gpuar_port *port, bool on)
{
	u32 flags = on ? port->area_flags | GPUAR_AREA_OVERFLOW :
			 port->area_flags & ~GPUAR_AREA_OVERFLOW;

	lockdep_assert_held(&port->lock);
	if (flags == port->area_flags)
		return;
	port->area_flags = flags;
	/* After the ring's slots and tail, for userspace's load-acquire. */
	smp_store_release(&port->area->flags, flags);
}

/*
 * read(): take records from the ring into @to, oldest first, by the
 * consumers' protocol: copy ring[h] out (straight to the user), then
 * swap head from h to h + 1; a failed swap means another consumer took
 * it, so the copy is taken back (iov_iter_revert) and the loop goes on
 * from the head the swap saw. A fault copying out loses nothing: the swap
 * is not made. read_mutex held (the module's own consumers take turns;
 * userspace's race us through the swap). Returns bytes moved, or -EFAULT
 * if nothing could be.
 */
ssize_t gpuar_area_take(struct gpuar_port *port, struct iov_iter *to)
{
	const size_t rsize = sizeof(struct gpuar_record);
	u32 mask = port->ring_entries - 1;
	unsigned int tries = GPUAR_AREA_CAS_TRIES;
	ssize_t done = 0;
	u32 h, seen, tail;

	lockdep_assert_held(&port->read_mutex);
	/* Pairs with the producer's release: slots before tail are written. */
	tail = smp_load_acquire(&port->ring_tail);
	h = READ_ONCE(port->area->head);
	while (iov_iter_count(to) >= rsize && tries) {
		size_t copied;

		/* Empty, or garbage in head: nothing to take here. */
		if (h == tail || tail - h > port->ring_entries)
			break;
		copied = copy_to_iter(&port->ring[h & mask], rsize, to);
		if (copied < rsize) {
			iov_iter_revert(to, copied);
			return done ?: -EFAULT;
		}
		seen = cmpxchg(&port->area->head, h, h + 1);
		if (seen == h) {
			done += rsize;
			h++;
			continue;
		}
		iov_iter_revert(to, rsize);
		h = seen;
		tries--;
		/* Records that arrived meanwhile (the producer's release). */
		tail = smp_load_acquire(&port->ring_tail);
	}
	return done;
}

/*
 * Cancel: is a record of @user_data (not a cancellation) in the ring
 * between head and tail as we look? No lock: the ring lives as long as
 * the port and a cancel runs in an ioctl; the records it reads may be
 * rewritten meanwhile, which only changes what "as we look" means (the
 * answer is as racy as any cancel against a completion). At most
 * ring_entries (65536) records: a cancel that found no pending wait of
 * its user data, in process context with interrupts on and a preemption
 * point every GPUAR_COMMIT_CHUNK records, so the scan is as long as the
 * read() of a full ring, and only its caller waits for it. A garbage head
 * scans the whole ring: its records may be anyone's to take.
 */
bool gpuar_area_holds(struct gpuar_port *port, u64 user_data)
{
	u32 mask = port->ring_entries - 1;
	u32 tail, n, i;

	if (!port->area)
		return false;
	/* Pairs with the producer's release: slots before tail are written. */
	tail = smp_load_acquire(&port->ring_tail);
	n = gpuar_area_count(port, tail);
	if (n == U32_MAX)
		n = min(tail, port->ring_entries);
	for (i = 1; i <= n; i++) {
		const struct gpuar_record *r = &port->ring[(tail - i) & mask];

		if (READ_ONCE(r->user_data) == user_data &&
		    (READ_ONCE(r->outcome) != GPUAR_OUTCOME_CANCELLED ||
		     READ_ONCE(r->status) != -ECANCELED))
			return true;
		if (!(i % GPUAR_COMMIT_CHUNK))
			cond_resched();
	}
	return false;
}

/* fdinfo and debugfs: the area as the module sees it. */
void gpuar_area_show(struct seq_file *m, struct gpuar_port *port)
{
	u32 tail, flags;
	u64 overflows;

	if (!port->area)
		return;
	spin_lock_irq(&port->lock);
	tail = port->ring_tail;
	flags = port->area_flags;
	overflows = port->cnt.area_overflows;
	spin_unlock_irq(&port->lock);
	seq_printf(m, "area_ring_entries:\t%u\n", port->ring_entries);
	seq_printf(m, "area_tail:\t%u\n", tail);
	/* As read: userspace may have written anything there. */
	seq_printf(m, "area_head:\t%u\n", READ_ONCE(port->area->head));
	seq_printf(m, "area_overflow:\t%u\n", !!(flags & GPUAR_AREA_OVERFLOW));
	seq_printf(m, "area_overflows:\t%llu\n", overflows);
}
