// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz's calls on the area (GPUAR_PORT_AREA): creating a port with one
 * (good and bad ring sizes), mapping it (and the mappings the module
 * refuses), reaping its ring by the consumers' swap of head from any
 * thread, beside read(), which takes from the same ring, and scribbling
 * garbage over the header, the ring and head.
 *
 * The oracle's rule for a scribbled port: from the scribble on, its
 * incarnation is out of the exactly-once count (records read from it, by
 * swap or by read(), are not accounted, and its unread waits are not
 * owed at the end), since a scribbled head or ring entry can hand a
 * record out twice, or a garbage one, or none, and the header says that
 * is the scribbler's loss alone. Every other check holds for it (errnos,
 * whole records, no kernel report, no call that never returns), and every
 * other port keeps the whole count: scribbling one port must not cost
 * another anything. What a scribble could leak or corrupt in the kernel,
 * KASAN and kmemleak in the debug guest see.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kfuzz.h"
#include "port_fixture.h"

static const int create_ok[] = { EINVAL, EMFILE, ENOMEM, 0 };

/* What the area's calls did, for the summary (atomic: every thread). */
static struct {
	uint64_t mapped, swapped, overflow_reads, scribbles;
} st;
static const int mmap_ok[] = { EINVAL, ENODEV, ENOMEM, 0 };

/* The ring sizes a port asks for: mostly small (overflow), some bad. */
static __u32 random_entries(void)
{
	static const __u32 sizes[] = { 0, 8, 8, 16, 64, 100, 1024 };

	if (chance(5))
		return chance(50) ? below(GPUAR_AREA_RING_MIN) :
		       GPUAR_AREA_RING_MAX + 1 + below(1000);
	return sizes[below(sizeof(sizes) / sizeof(sizes[0]))];
}

/* A new port fd, or -1 (errno checked here). */
int area_port_create(__u32 flags)
{
	struct gpuar_port_create c;
	int dev = t_dev_open(), fd, err;

	if (dev < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	/* Without the area, a nonzero ring_entries is refused. */
	if ((flags & GPUAR_PORT_AREA) || chance(2))
		c.ring_entries = random_entries();
	fd = ioctl(dev, GPUAR_IOC_PORT_CREATE, &c);
	err = errno;
	close(dev);
	errno = err;
	expect_errno("PORT_CREATE", fd, create_ok);
	if (fd >= 0 && !(flags & GPUAR_PORT_AREA) && c.ring_entries)
		finding("PORT_CREATE took ring_entries without the area", fd,
			0);
	return fd;
}

/*
 * Map port @fd's area as the header says (its first page, then bytes),
 * or NULL; *@len gets the length. Sometimes a mapping the module must
 * refuse first.
 */
struct gpuar_area *area_map(int fd, bool has_area, size_t *len)
{
	struct gpuar_area *a;
	void *m;
	__u32 bytes;

	if (chance(20)) {
		bool priv = chance(50);
		off_t off = chance(50) ? page : 0;

		m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			 priv ? MAP_PRIVATE : MAP_SHARED, fd, off);
		if (m != MAP_FAILED) {
			munmap(m, (size_t)page);
			if (priv || off || !has_area)
				finding("mmap the module must refuse", off,
					priv);
		} else {
			expect_errno("mmap(bad)", -1, mmap_ok);
		}
	}
	a = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED) {
		expect_errno("mmap", -1, mmap_ok);
		if (has_area || errno != ENODEV)
			finding("mmap of a port's first page", -1, errno);
		return NULL;
	}
	if (!has_area) {
		finding("mmap of a port without the area", 0, 0);
		munmap(a, (size_t)page);
		return NULL;
	}
	bytes = a->bytes;
	if (a->magic != GPUAR_AREA_MAGIC || a->size != sizeof(*a) ||
	    a->ring_entries < GPUAR_AREA_RING_MIN ||
	    a->ring_entries > GPUAR_AREA_RING_MAX ||
	    a->ring_mask != a->ring_entries - 1 ||
	    a->record_size != sizeof(struct gpuar_record) ||
	    (__u64)a->ring_off + (__u64)a->ring_entries * a->record_size >
	    bytes)
		finding("the area's header", (long)a->ring_entries, 0);
	munmap(a, (size_t)page);
	a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED) {
		finding("mmap of the whole area", (long)bytes, errno);
		return NULL;
	}
	*len = bytes;
	__atomic_fetch_add(&st.mapped, 1, __ATOMIC_RELAXED);
	return a;
}

/*
 * The consumers' loop: take what the ring holds (up to 16) by the swap
 * of head, copying each record out first, and account them. Then, as the
 * header says, read() when the overflow flag is up.
 */
void op_area_reap(const struct pslot *s)
{
	struct gpuar_record r[16];
	struct gpuar_area *a = s->area;
	const struct gpuar_record *ring;
	__u32 h, mask;
	int n = 0;

	call_done();
	if (!a)
		return;
	/*
	 * The geometry as the page says, read once: a scribbled port's may
	 * be garbage, so it is used only where it stays inside the mapping.
	 */
	mask = __atomic_load_n(&a->ring_mask, __ATOMIC_RELAXED);
	if (__atomic_load_n(&a->ring_off, __ATOMIC_RELAXED) != (__u32)page ||
	    (size_t)page + ((size_t)mask + 1) * sizeof(*ring) > s->area_len)
		return;
	ring = (const struct gpuar_record *)((const char *)a + page);
	h = __atomic_load_n(&a->head, __ATOMIC_RELAXED);
	while (n < 16 && h != __atomic_load_n(&a->tail, __ATOMIC_ACQUIRE)) {
		struct gpuar_record rec = ring[h & mask];

		if (__atomic_compare_exchange_n(&a->head, &h, h + 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			r[n++] = rec;
			h++;
		}
	}
	if (n) {
		records_account(s->inc, r, n);
		__atomic_fetch_add(&st.swapped, (uint64_t)n, __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&a->flags, __ATOMIC_ACQUIRE) &
	    GPUAR_AREA_OVERFLOW) {
		op_read(s);
		__atomic_fetch_add(&st.overflow_reads, 1, __ATOMIC_RELAXED);
	}
}

/*
 * Garbage over the area: a header word (head among them), some of the
 * ring, or head alone, often. The port's incarnation leaves the count
 * first, so a record already being taken elsewhere is not judged.
 */
void op_scribble(const struct pslot *s)
{
	struct gpuar_area *a = s->area;
	__u32 *w;

	call_done();
	/*
	 * Seldom (a fifth of its draws at the least weight): a scribbled
	 * port is out of the exactly-once count until it is closed, and
	 * most area ports should keep it.
	 */
	if (!a || !chance(20))
		return;
	__atomic_fetch_add(&st.scribbles, 1, __ATOMIC_RELAXED);
	port_scribbled(s->inc);
	w = (__u32 *)a;
	switch (below(4)) {
	case 0:
		w[below(sizeof(*a) / 4)] = (__u32)rnd();
		break;
	case 1:
		memset((char *)a + page + 64 * below(8), (int)below(256), 64);
		break;
	default:
		/* Ahead of tail, far behind, or anything. */
		switch (below(3)) {
		case 0:
			__atomic_fetch_add(&a->head, 1 + below(4),
					   __ATOMIC_RELAXED);
			break;
		case 1:
			__atomic_fetch_sub(&a->head, 100000, __ATOMIC_RELAXED);
			break;
		default:
			a->head = (__u32)rnd();
			break;
		}
		break;
	}
}

void area_summary(void)
{
	printf("# kfuzz: area: %llu mapped, %llu records taken by swap, %llu reads for the overflow flag, %llu scribbles\n",
	       (unsigned long long)st.mapped, (unsigned long long)st.swapped,
	       (unsigned long long)st.overflow_reads,
	       (unsigned long long)st.scribbles);
}
