// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * LINE_REGISTER and LINE_UNREGISTER: which memory a line may live in, and
 * what each refusal says.
 *
 *   64-byte aligned, anonymous or shmem ..... accepted, distinct ids
 *   NULL, unaligned, kernel address ......... EINVAL
 *   unmapped address ........................ EFAULT
 *   read-only mapping ....................... EFAULT (a write pin cannot fault it in)
 *   file-backed (ramfs) mapping ............. EINVAL (the module's own check,
 *                                             so every kernel answers alike)
 *   flags or pad non-zero ................... EINVAL
 *   unregister unknown / twice .............. ENOENT
 *   unregister with waits pending ........... EBUSY
 *   unregister from a forked child .......... EPERM (the lines are the
 *                                             parent's address space's)
 *   register whose id cannot be copied out,
 *   raced by an unregister of that id ....... EFAULT, the line gone once,
 *                                             nothing freed twice (K3-2)
 *
 * A line's memory going away (the line dies: its pending wait ends at once
 * with a CANCELLED record of status -EFAULT, a later submission naming it
 * is EFAULT, it still unregisters, and its pin is returned then):
 *
 *   munmap .................................. dies
 *   munmap, a new mapping there, the target
 *   stored into it .......................... dies (no false completion)
 *   MADV_DONTNEED, the target stored after .. dies
 *   mremap away, the target stored into the
 *   moved page .............................. dies (the line is its address)
 *   mprotect read-only, none, and back ...... lives: the store completes
 *   fork without MADV_DONTFORK .............. lives: the child's store to
 *                                             its copy completes nothing,
 *                                             the parent's completes
 *   MADV_DONTNEED on shmem .................. lives: the page comes back
 *   MADV_PAGEOUT over 60 shmem lines ........ all live, looked at by 1 to
 *                                             4 verify works of the port,
 *                                             not one per line (K3-11)
 *   VmPin ................................... back where it was once the
 *                                             dead line is unregistered
 */
#include <pthread.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "port_harness.h"

static int register_addr(int port, __u64 addr)
{
	struct gpuar_line_register r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = addr;
	return ioctl(port, GPUAR_IOC_LINE_REGISTER, &r);
}

TEST_F(port, lines_in_one_page_get_distinct_ids)
{
	__u32 a, b;

	ASSERT_EQ(0, line_register(self->port, line_at(self->lines, 1), &a));
	ASSERT_EQ(0, line_register(self->port, line_at(self->lines, 63), &b));
	EXPECT_NE(self->line, a);
	EXPECT_NE(self->line, b);
	EXPECT_NE(a, b);
}

/* Ids start at 1: line 0 never names a line. */
TEST_F(port, line_id_zero_is_never_a_line)
{
	EXPECT_LE(1U, self->line);
	EXPECT_EQ(-1, submit_word(self->port, word_wait(0, 0, 1, 1, 1,
							plan_poll())));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, line_unregister(self->port, 0));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(port, null_unaligned_and_kernel_addresses_einval)
{
	char *base = (char *)self->lines;

	EXPECT_EQ(-1, register_addr(self->port, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, register_addr(self->port, (__u64)(uintptr_t)(base + 8)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, register_addr(self->port, (__u64)(uintptr_t)(base + 32)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, register_addr(self->port, 0xffff888000000000ULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, register_addr(self->port, ~63ULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(port, unmapped_address_efault)
{
	__u64 *gone = lines_map(1);

	ASSERT_NE(NULL, gone);
	lines_unmap(gone, 1);
	EXPECT_EQ(-1, line_register(self->port, gone, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(port, read_only_mapping_efault)
{
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-1, line_register(self->port, ro, NULL));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, 4096);
}

/*
 * A file that is neither anonymous nor shmem: on ramfs, mounted for the
 * test (the initramfs root and /tmp may well be tmpfs, which is shmem).
 */
struct ramfs_file {
	char dir[32];
	int fd;
	int mounted;
};

static int ramfs_file_open(struct ramfs_file *rf)
{
	char path[64];

	strcpy(rf->dir, "/tmp/gpuar-ramfs-XXXXXX");
	rf->fd = -1;
	rf->mounted = 0;
	if (!mkdtemp(rf->dir))
		return -1;
	if (mount("gpuar-test", rf->dir, "ramfs", 0, NULL))
		return -1;
	rf->mounted = 1;
	snprintf(path, sizeof(path), "%s/line", rf->dir);
	rf->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (rf->fd < 0 || ftruncate(rf->fd, 4096))
		return -1;
	return 0;
}

static void ramfs_file_close(struct ramfs_file *rf)
{
	if (rf->fd >= 0)
		close(rf->fd);
	if (rf->mounted)
		umount2(rf->dir, MNT_DETACH);
	rmdir(rf->dir);
}

TEST_F(port, file_backed_mapping_einval)
{
	struct ramfs_file rf;
	struct statfs sfs;
	void *shared, *priv;

	ASSERT_EQ(0, ramfs_file_open(&rf)) {
		TH_LOG("ramfs file: %s", strerror(errno));
		ramfs_file_close(&rf);
	}
	ASSERT_EQ(0, fstatfs(rf.fd, &sfs));
	ASSERT_EQ(RAMFS_MAGIC, (long)sfs.f_type);
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rf.fd, 0);
	priv = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, rf.fd, 0);
	ASSERT_NE(MAP_FAILED, shared);
	ASSERT_NE(MAP_FAILED, priv);
	memset(shared, 0, 64);

	EXPECT_EQ(-1, line_register(self->port, shared, NULL));
	EXPECT_EQ(EINVAL, errno);
	/* Private but file-backed: not anonymous memory either. */
	EXPECT_EQ(-1, line_register(self->port, priv, NULL));
	EXPECT_EQ(EINVAL, errno);
	munmap(shared, 4096);
	munmap(priv, 4096);
	ramfs_file_close(&rf);
}

TEST_F(port, shmem_mappings_accepted)
{
	void *shared_anon, *memfd_map;
	int mfd = (int)syscall(SYS_memfd_create, "gpuar-line", 0);
	__u32 a, b;

	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, 4096));
	memfd_map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd,
			 0);
	shared_anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, memfd_map);
	ASSERT_NE(MAP_FAILED, shared_anon);

	EXPECT_EQ(0, line_register(self->port, memfd_map, &a));
	EXPECT_EQ(0, line_register(self->port, shared_anon, &b));
	close(mfd);
}

/*
 * A fresh page of anonymous memory, private or shared (@share: MAP_PRIVATE
 * or MAP_SHARED, which is shmem), its first line registered as *@id; NULL
 * if not.
 */
static __u64 *line_page(int port, int share, __u32 *id)
{
	__u64 *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   share | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return NULL;
	if (line_register(port, page, id)) {
		munmap(page, 4096);
		return NULL;
	}
	return page;
}

/* A line in shmem works: the device's store there completes the wait. */
TEST_F(port, shmem_line_completes_wait)
{
	struct gpuar_record r;
	__u64 *line;
	__u32 id;

	line = line_page(self->port, MAP_SHARED, &id);
	ASSERT_NE(NULL, line);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(id, 2, 9, 1, 5, plan_poll())));
	EXPECT_TRUE(port_quiet(self->port, 20));
	word_store(&line[2], 9);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(5ULL, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(9ULL, r.value);
}

/* A never-written page: the pin must be a write pin, not the zero page. */
TEST_F(port, untouched_page_sees_later_store)
{
	struct gpuar_record r;
	__u64 *fresh;
	__u32 id;

	fresh = line_page(self->port, MAP_PRIVATE, &id);
	ASSERT_NE(NULL, fresh);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(id, 0, 1, 1, 6, plan_poll())));
	EXPECT_TRUE(port_quiet(self->port, 20));
	word_store(fresh, 1);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(6ULL, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	munmap(fresh, 4096);
}

TEST_F(port, flags_and_pad_nonzero_einval)
{
	struct gpuar_line_register r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (__u64)(uintptr_t)line_at(self->lines, 2);
	r.flags = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, &r));
	EXPECT_EQ(EINVAL, errno);
	r.flags = 0;
	r.pad = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, &r));
	EXPECT_EQ(EINVAL, errno);
	r.pad = 0;
	EXPECT_EQ(0, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, &r));
}

TEST_F(port, bad_argument_pointer_efault)
{
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_UNREGISTER, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(port, unregister_unknown_and_twice_enoent)
{
	EXPECT_EQ(-1, line_unregister(self->port, self->line + 1000));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, line_unregister(self->port, self->line));
	EXPECT_EQ(-1, line_unregister(self->port, self->line));
	EXPECT_EQ(ENOENT, errno);
	/* Its id no longer names a line for word waits either. */
	EXPECT_EQ(-1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
							plan_poll())));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(port, unregister_with_pending_wait_ebusy)
{
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 8,
						       plan_poll())));
	EXPECT_EQ(-1, line_unregister(self->port, self->line));
	EXPECT_EQ(EBUSY, errno);

	word_store(self->lines, 1);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(8ULL, r.user_data);
	EXPECT_EQ(0, line_unregister(self->port, self->line));
}

TEST_F(port, register_after_unregister)
{
	__u32 id;

	ASSERT_EQ(0, line_unregister(self->port, self->line));
	ASSERT_EQ(0, line_register(self->port, self->lines, &id));
	word_store(self->lines, 4);
	EXPECT_EQ(1, submit_word(self->port, word_wait(id, 0, 4, 1, 1,
						       plan_poll())));
}

TEST_F(port, stats_count_lines)
{
	struct gpuar_port_stats st;
	__u32 id;

	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(1ULL, st.lines);
	ASSERT_EQ(0, line_register(self->port, line_at(self->lines, 5), &id));
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(2ULL, st.lines);
	ASSERT_EQ(0, line_unregister(self->port, id));
	ASSERT_EQ(0, line_unregister(self->port, self->line));
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(0ULL, st.lines);
}

/*
 * A forked child shares the port fd but not the address space the lines
 * pin: it may not take the parent's idle lines away, as it may not submit
 * on them.
 */
TEST_F(port, unregister_from_forked_child_eperm)
{
	struct gpuar_port_stats st;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (line_unregister(self->port, self->line) != -1)
			_exit(1);
		_exit(errno == EPERM ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(1ULL, st.lines);
	EXPECT_EQ(0, line_unregister(self->port, self->line));
}

/* A wait for slot 0 of line @id to reach 1: checked every 100 us, 1 s backstop. */
static int wait_for_one(int port, __u32 id, __u64 user_data)
{
	return submit_word(port, word_wait(id, 0, 1, 1, user_data,
					   plan_flag(PLAN_PARK_NS,
						     PLAN_BACKSTOP_NS)));
}

/*
 * Line @id died while wait @user_data was pending on it: that wait's
 * record says so (not a completion, not its backstop's timeout), a new
 * wait naming the line is refused, and the line still unregisters.
 */
static void expect_line_died(struct __test_metadata *_metadata, int port,
			     __u32 id, __u64 user_data)
{
	struct gpuar_word_wait w = word_wait(id, 0, 1, 1, user_data + 1,
					     plan_poll());
	struct gpuar_record r;
	__u32 idx = 99;

	ASSERT_ONE_RECORD(port, r);
	EXPECT_EQ(user_data, r.user_data);
	EXPECT_EQ(GPUAR_SOURCE_WORD, r.source);
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r.outcome) {
		TH_LOG("outcome %u, status %d: not the dead line's record",
		       r.outcome, r.status);
	}
	EXPECT_EQ(-EFAULT, r.status);
	EXPECT_EQ(0ULL, r.value);
	EXPECT_EQ(-1, submit_words(port, &w, 1, &idx));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(0U, idx);
	EXPECT_TRUE(port_quiet(port, 20));
	EXPECT_EQ(0, line_unregister(port, id));
}

/* The line of @word lives: a store of 1 there completes wait @user_data. */
static void expect_line_lives(struct __test_metadata *_metadata, int port,
			      __u64 *word, __u64 user_data)
{
	struct gpuar_record r;

	EXPECT_TRUE(port_quiet(port, 50));
	word_store(word, 1);
	ASSERT_ONE_RECORD(port, r);
	EXPECT_EQ(user_data, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(1ULL, r.value);
}

/* An unregister of one id, over and over, until told to stop. */
struct unregisterer {
	int port;
	__u32 id;
	int stop;
	long unregistered;
};

static void *unregister_loop(void *arg)
{
	struct unregisterer *u = arg;

	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE))
		if (!line_unregister(u->port, u->id))
			u->unregistered++;
	return NULL;
}

/*
 * A register whose argument is on a read-only page reads it, registers
 * the line, and fails to copy the id out (EFAULT), so it takes the line
 * back. Another thread unregistering that id (ids are the lowest free, so
 * predictable) in between must neither have the line freed under the
 * take-back (a use-after-free the debug kernel's KASAN reports, K3-2) nor
 * have it taken back twice: every round leaves the port with its one
 * fixture line, and each line goes exactly once.
 */
TEST_F_TIMEOUT(port, register_fault_raced_by_unregister, 120)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct unregisterer u = { .port = self->port };
	struct gpuar_line_register *ro;
	struct gpuar_port_stats st;
	pthread_t t;
	int i, efault = 0;

	ro = mmap(NULL, page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	ro->size = sizeof(*ro);
	ro->addr = (__u64)(uintptr_t)line_at(self->lines, 1);
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	/* The fixture's line has the lowest id: the next one is this. */
	u.id = self->line + 1;
	ASSERT_EQ(0, pthread_create(&t, NULL, unregister_loop, &u));
	for (i = 0; i < 4000; i++) {
		if (ioctl(self->port, GPUAR_IOC_LINE_REGISTER, ro) == -1 &&
		    errno == EFAULT)
			efault++;
	}
	__atomic_store_n(&u.stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(4000, efault);
	TH_LOG("%ld of 4000 lines unregistered by the other thread first",
	       u.unregistered);
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(1ULL, st.lines);
	EXPECT_EQ(-1, line_unregister(self->port, u.id));
	EXPECT_EQ(ENOENT, errno);
	munmap(ro, page);
}

TEST_F(port, version_announces_line_watch)
{
	struct gpuar_version v;
	int dev = t_dev_open();

	ASSERT_LE(0, dev);
	ASSERT_EQ(0, t_version(dev, &v));
	EXPECT_TRUE(v.features & GPUAR_FEATURE_LINE_WATCH);
	close(dev);
}

TEST_F(port, munmap_ends_pending_wait_at_once)
{
	__u64 *page;
	__u32 id;

	page = line_page(self->port, MAP_PRIVATE, &id);
	ASSERT_NE(NULL, page);
	ASSERT_EQ(1, wait_for_one(self->port, id, 30));
	EXPECT_TRUE(port_quiet(self->port, 20));
	lines_unmap(page, 1);
	expect_line_died(_metadata, self->port, id, 30);
}

/* The new page at the old address is not the line's: its store completes nothing. */
TEST_F(port, mapping_over_line_does_not_complete)
{
	__u64 *page, *again;
	__u32 id;

	page = line_page(self->port, MAP_PRIVATE, &id);
	ASSERT_NE(NULL, page);
	ASSERT_EQ(1, wait_for_one(self->port, id, 31));
	lines_unmap(page, 1);
	again = mmap(page, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ((void *)page, (void *)again);
	word_store(again, 1);
	expect_line_died(_metadata, self->port, id, 31);
	lines_unmap(again, 1);
}

TEST_F(port, madv_dontneed_ends_pending_wait)
{
	__u64 *page;
	__u32 id;

	page = line_page(self->port, MAP_PRIVATE, &id);
	ASSERT_NE(NULL, page);
	ASSERT_EQ(1, wait_for_one(self->port, id, 32));
	ASSERT_EQ(0, madvise(page, 4096, MADV_DONTNEED));
	word_store(page, 1);	/* into the fresh page the fault gives */
	expect_line_died(_metadata, self->port, id, 32);
	lines_unmap(page, 1);
}

/* The pinned page itself, moved: the line was its address, now unmapped. */
TEST_F(port, mremap_away_ends_pending_wait)
{
	__u64 *page, *moved;
	void *to;
	__u32 id;

	page = line_page(self->port, MAP_PRIVATE, &id);
	ASSERT_NE(NULL, page);
	to = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, to);
	ASSERT_EQ(1, wait_for_one(self->port, id, 33));
	moved = mremap(page, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	ASSERT_EQ(to, (void *)moved);
	word_store(moved, 1);
	expect_line_died(_metadata, self->port, id, 33);
	lines_unmap(moved, 1);
}

TEST_F(port, mprotect_keeps_line)
{
	ASSERT_EQ(1, wait_for_one(self->port, self->line, 34));
	ASSERT_EQ(0, mprotect(self->lines, 4096, PROT_READ));
	ASSERT_EQ(0, mprotect(self->lines, 4096, PROT_NONE));
	EXPECT_TRUE(port_quiet(self->port, 20));
	ASSERT_EQ(0, mprotect(self->lines, 4096, PROT_READ | PROT_WRITE));
	expect_line_lives(_metadata, self->port, self->lines, 34);
}

/*
 * The fixture's line is registered raw, without MADV_DONTFORK: fork
 * write-protects the parent's private pages, and a pinned one is copied
 * for the child instead. The parent's line lives; the child's store goes
 * to its copy.
 */
TEST_F(port, fork_keeps_line)
{
	int status;
	pid_t pid;

	ASSERT_EQ(1, wait_for_one(self->port, self->line, 35));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		word_store(self->lines, 1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	expect_line_lives(_metadata, self->port, self->lines, 35);
}

/* Shared memory's page stays in its file: a fault maps it back. */
TEST_F(port, shmem_dontneed_keeps_line)
{
	__u64 *shared;
	__u32 id;

	shared = line_page(self->port, MAP_SHARED, &id);
	ASSERT_NE(NULL, shared);
	ASSERT_EQ(1, wait_for_one(self->port, id, 36));
	ASSERT_EQ(0, madvise(shared, 4096, MADV_DONTNEED));
	expect_line_lives(_metadata, self->port, shared, 36);
	munmap(shared, 4096);
}

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

/*
 * MADV_PAGEOUT over a page of a port's shmem lines: reclaim unmaps it
 * (the pin keeps the page, and a fault maps it back), an invalidation the
 * watch cannot judge, so every line is looked at once it is over. One
 * verify work per port does that (two or so, if it ran while the
 * callbacks still came), not one per line (K3-11). In one page, the
 * callbacks come in one invalidation. Counts from fdinfo, never times.
 */
TEST_F(port, pageout_verifies_lines_in_one_work_per_port)
{
	enum { LINES = 60 };
	size_t len = 4096;
	long long queued = 0, looks = 0;
	__u64 *shared, *last;
	__u32 id[LINES];
	int i, tries;

	if (t_param("max_lines") < 1 + LINES)
		SKIP(return, "max_lines below %d", 1 + LINES);
	shared = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	memset(shared, 0, len);
	for (i = 0; i < LINES; i++)
		ASSERT_EQ(0, line_register(self->port, line_at(shared, i),
					   &id[i]));
	ASSERT_EQ(0, t_fdinfo(self->port, "verify_queued"));
	if (madvise(shared, len, MADV_PAGEOUT)) {
		munmap(shared, len);
		SKIP(return, "MADV_PAGEOUT: %s", strerror(errno));
	}
	for (tries = 0; tries < 500 && looks < LINES; tries++) {
		looks = t_fdinfo(self->port, "verify_looks");
		if (looks < LINES)
			sleep_ms(10);
	}
	queued = t_fdinfo(self->port, "verify_queued");
	TH_LOG("%d lines paged out: %lld verify works queued, %lld looks",
	       LINES, queued, looks);
	if (!looks && !queued) {
		munmap(shared, len);
		SKIP(return, "reclaim left the pinned pages mapped");
	}
	EXPECT_LE(LINES, looks);
	EXPECT_LE(1, queued);
	EXPECT_GE(4, queued);
	/* The pages stayed: every line lives. */
	last = line_at(shared, LINES - 1);
	ASSERT_EQ(1, wait_for_one(self->port, id[LINES - 1], 38));
	expect_line_lives(_metadata, self->port, last, 38);
	munmap(shared, len);
}

TEST_F(port, dead_line_pin_returned_at_unregister)
{
	long before = vm_pin_kb(), page_kb = sysconf(_SC_PAGESIZE) / 1024;
	__u64 *page;
	__u32 id;

	ASSERT_LE(0, before);
	page = line_page(self->port, MAP_PRIVATE, &id);
	ASSERT_NE(NULL, page);
	EXPECT_EQ(before + page_kb, vm_pin_kb());
	ASSERT_EQ(1, wait_for_one(self->port, id, 37));
	lines_unmap(page, 1);
	expect_line_died(_metadata, self->port, id, 37);
	EXPECT_EQ(before, vm_pin_kb());
}

TEST_HARNESS_MAIN
