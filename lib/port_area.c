// SPDX-License-Identifier: MIT
/*
 * The kernel engine's shared completion area (GPUAR_PORT_AREA): mapped
 * at open where the module has it, checked before it is trusted, taken
 * from before any read(), unmapped at close before the fd goes. A port
 * whose area is missing or does not check out reads as before: the
 * module's read() serves the ring's records too.
 */
#include "area_ring.h"
#include "port.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

u32 gpuar_port_area_test_entries;

/* Map @fd's area: the first page tells its length, then all of it. */
static void *area_map(int fd, size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	size_t bytes;

	if (m == MAP_FAILED)
		return NULL;
	bytes = __atomic_load_n(&((struct gpuar_area *)m)->bytes,
				__ATOMIC_RELAXED);
	*len = page;
	if (bytes <= page)
		return m;
	munmap(m, page);
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	*len = bytes;
	return m;
}

void gpuar_port_area_open(struct gpuar_port *port)
{
	struct gpuar_area_ring *r = malloc(sizeof(*r));
	size_t len = 0;
	void *m = r ? area_map(port->fd, &len) : NULL;

	if (!m || gpuar_area_ring_init(r, m, len) < 0) {
		if (m)
			munmap(m, len);
		free(r);
		return;
	}
	port->area = r;
	port->area_map = m;
	port->area_len = len;
}

void gpuar_port_area_close(struct gpuar_port *port)
{
	if (!port->area)
		return;
	munmap(port->area_map, port->area_len);
	free(port->area);
	port->area = NULL;
}

int gpuar_port_area_take(struct gpuar_port *port, struct gpuar_record *records,
			 u32 max)
{
	u32 n;

	if (!port->area)
		return 0;
	n = gpuar_area_ring_take(port->area, records, max);
	if (n)
		__atomic_add_fetch(&port->area_records, n, __ATOMIC_RELAXED);
	return (int)n;
}

bool gpuar_port_area_need_read(const struct gpuar_port *port)
{
	return port->area && gpuar_area_ring_need_read(port->area);
}

u32 gpuar_port_area_count(const struct gpuar_port *port)
{
	return port->area ? gpuar_area_ring_count(port->area) : 0;
}
