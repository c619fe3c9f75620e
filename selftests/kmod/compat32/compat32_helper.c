// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A 32-bit (i386) caller of the module, built -m32 -static and embedded in
 * compat32_test: it goes through the module's compat_ioctl path for every
 * kind of ioctl argument (a size-prefixed struct in and out, a batch whose
 * entries pointer is a 32-bit address carried in a __u64) and reads a
 * record. The ABI structs have one layout on i386 and x86_64, so the same
 * header serves both. Exit status 0: all good; 1: a check failed (printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/gpuar.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "compat32: %s:%d: %s (errno %d)\n", \
				__FILE__, __LINE__, #cond, errno);	\
			return 1;					\
		}							\
	} while (0)

int main(void)
{
	struct gpuar_port_create pc = { .size = sizeof(pc),
					.flags = GPUAR_PORT_CLOEXEC };
	struct gpuar_version v = { .size = sizeof(v) };
	struct gpuar_line_register lr = { .size = sizeof(lr) };
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_cancel c = { .size = sizeof(c), .user_data = 99 };
	struct gpuar_word_wait w;
	struct gpuar_submit s;
	struct gpuar_record r;
	volatile uint64_t *line;
	int dev, port;

	_Static_assert(sizeof(void *) == 4, "build this with -m32");

	dev = open(GPUAR_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	CHECK(dev >= 0);
	CHECK(ioctl(dev, GPUAR_IOC_VERSION, &v) == 0);
	CHECK(v.abi == GPUAR_ABI_VERSION);
	port = ioctl(dev, GPUAR_IOC_PORT_CREATE, &pc);
	CHECK(port >= 0);

	line = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(line != MAP_FAILED);
	line[0] = 5;		/* the "device" already stored 5 */
	lr.addr = (uintptr_t)line;
	CHECK(ioctl(port, GPUAR_IOC_LINE_REGISTER, &lr) == 0);

	memset(&w, 0, sizeof(w));
	w.user_data = 0x32;
	w.target = 5;
	w.point = 1;
	w.line = lr.id;
	w.plan.park = GPUAR_PARK_POLL;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.count = 1;
	s.entry_size = sizeof(w);
	s.entries = (uintptr_t)&w;
	CHECK(ioctl(port, GPUAR_IOC_SUBMIT_WORD, &s) == 1);

	CHECK(read(port, &r, sizeof(r)) == sizeof(r));
	CHECK(r.user_data == 0x32);
	CHECK(r.outcome == GPUAR_OUTCOME_IMMEDIATE);
	CHECK(r.status == 0 && r.value == 5);

	/* A bad entry is named by index through the 32-bit path too. */
	w.slot = GPUAR_LINE_SLOTS;
	s.error_index = 7;
	CHECK(ioctl(port, GPUAR_IOC_SUBMIT_WORD, &s) == -1 && errno == EINVAL);
	CHECK(s.error_index == 0);

	CHECK(ioctl(port, GPUAR_IOC_CANCEL, &c) == -1 && errno == ENOENT);
	CHECK(ioctl(port, GPUAR_IOC_PORT_STATS, &st) == 0);
	CHECK(st.submitted == 1 && st.lines == 1);
	CHECK(st.outcomes[GPUAR_OUTCOME_IMMEDIATE] == 1);

	close(port);
	close(dev);
	return 0;
}
