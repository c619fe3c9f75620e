/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * gpuar: GPU completion ports.
 *
 * The kernel ABI of /dev/gpuar. Everything that crosses between the module
 * and userspace is declared here, and only here: the ioctl numbers, their
 * argument structs, the binary wait plan and the completion record.
 *
 * Objects
 *   /dev/gpuar      The device. Opening it gives a device handle; the only
 *                   ioctls on it are GPUAR_IOC_VERSION and
 *                   GPUAR_IOC_PORT_CREATE.
 *   port            An anonymous-inode file: PORT_CREATE's return value
 *                   is its new fd (>= 0), not written to the argument. It owns
 *                   its lines, pending waits, queued records and estimator
 *                   table. Closing the last reference cancels every pending
 *                   wait, drops every fence callback, stops every timer and
 *                   unpins every page.
 *   line            64 bytes, 64-byte aligned, eight __u64 words (slots).
 *                   A device stores a sequence number into a slot behind its
 *                   work; a word wait completes when the slot reaches its
 *                   target in wrapping order: (__s64)(word - target) >= 0.
 *   record          struct gpuar_record, read() from the port. Exactly one
 *                   record ends every accepted wait.
 *
 * ABI v1 (frozen)
 *   Frozen, never to change: the ioctl magic and numbers below (each
 *   encodes its struct's v1 size, GPUAR_*_SIZE_VER1, and never a later
 *   one), the layout of every v1 struct up to its GPUAR_*_SIZE_VER1
 *   bytes, the 64-byte version-1 record, the meaning of every defined
 *   flag, feature, outcome and errno, and these rules. The ABI grows
 *   only in these ways:
 *   - size-prefixed structs: new fields only at the end, after every v1
 *     field (the per-outcome arrays included); the size rules below let
 *     old binaries and old modules keep working with each other;
 *   - fields named pad or reserved, zero today, may take a meaning whose
 *     zero value is the v1 behaviour;
 *   - new flag bits, refused (EINVAL) by a module that does not know them;
 *   - feature bits in struct gpuar_version.features announce anything new
 *     a caller may rely on: test them, never a version number;
 *   - record versions: a port produces the record version its creator
 *     asked for; record_version 0 means version 1, forever, so a binary
 *     that never heard of version 2 never gets it;
 *   - gpuar_version.abi is the oldest ABI the module is compatible with.
 *     It stays 1 for as long as a v1 binary works; a module would raise
 *     it only to break v1 callers. Userspace refuses an abi above the
 *     highest it knows (GPUAR_ABI_VERSION of its header) and checks
 *     features for the optional rest.
 *   The ioctl magic is 0xD4: unassigned in the kernel's
 *   Documentation/userspace-api/ioctl/ioctl-number.rst (Linux 6.1, and
 *   the late-2025 table that assigns 0xBA; the neighbours are 0xCF, cifs,
 *   and 0xDB, mwave) and the ioctl type of no in-tree header. 0xB6, the
 *   first choice, is linux/fpga-dfl.h's.
 *
 * Extensibility
 *   Every ioctl argument starts with a __u32 size that the caller sets to
 *   sizeof() the struct it was compiled with. The kernel reads it with
 *   copy_struct_from_user(): a smaller (older) struct is zero-extended, a
 *   larger (newer) one is accepted only if the bytes the kernel does not
 *   know are zero (else E2BIG); below GPUAR_*_SIZE_VER1 it is EINVAL.
 *   Out-structs are written only as far as the caller's size reaches.
 *   Fields named pad or reserved must be zero (else EINVAL). Batch entries
 *   carry their size in the batch header. The ioctl number must be
 *   exactly the one defined here: a command whose direction or size bits
 *   differ is ENOTTY (the struct's size field, not the number, says how
 *   big the caller's struct is).
 *
 * Address space
 *   A port is bound to the mm of the process that created it. Line
 *   registration, line unregistration, word-wait submission and claims
 *   from another mm (a forked child, a process the fd was passed to) fail
 *   with EPERM. Reading records,
 *   polling, cancelling, fence waits and statistics work from anywhere.
 *
 * Line memory
 *   A line pins the page behind its address at registration and watches
 *   the address (GPUAR_FEATURE_LINE_WATCH). When that page stops being
 *   mapped there (munmap, mremap moving it away, MADV_DONTNEED on private
 *   memory, a new mapping over it, MADV_REMOVE or truncation of its
 *   shmem, the end of the address space at exit or exec), the line dies:
 *   - each word wait pending on it ends at once with an outcome
 *     GPUAR_OUTCOME_CANCELLED record whose status is -EFAULT (a cancel's
 *     is -ECANCELED), value 0, complete_ns the time it died;
 *   - a word-wait batch naming it fails with EFAULT, error_index naming
 *     the entry; a wait committed as the line dies gets the record above;
 *   - it keeps its id and its pin (and the pin's RLIMIT_MEMLOCK charge)
 *     until it is unregistered, which works as for any line, or the port
 *     closes.
 *   A store into whatever is mapped at the address afterwards completes
 *   nothing: register a line there anew. What leaves the page in place
 *   does not end a line: mprotect (PROT_NONE included), fork (a pinned
 *   page is copied for the child; the parent keeps it), soft-dirty
 *   clearing, reclaim, compaction, huge-page splitting. A module built
 *   for a kernel without MMU notifiers (CONFIG_MMU_NOTIFIER) does not
 *   watch, and lacks the feature bit: its lines keep the old page, and
 *   their waits end at their backstop (TIMEOUT, -ETIME). Either way,
 *   unregister a line before giving its memory back.
 *
 * Record order
 *   Records are queued in the order their waits completed, as seen under
 *   the port lock, and read() returns them in that order. No record is
 *   dropped: the queue is bounded only by the port's pending-wait limit,
 *   since a wait keeps its slot until its record has been read.
 *
 * Reading
 *   read() returns whole records (a buffer smaller than one record is
 *   EINVAL), blocks until one is queued (EINTR/restart on a signal), or
 *   fails with EAGAIN under O_NONBLOCK or IOCB_NOWAIT (io_uring). poll and
 *   epoll report EPOLLIN exactly while a record is queued. A reader blocked
 *   in read() is woken just before a predicted word wait completes and
 *   checks the word itself for a bounded time (busy-read); poll, epoll and
 *   io_uring waiters are served by the port's timer checks, so they see at
 *   least the plan's check interval.
 *   A non-blocking read that races another reader of the same port may
 *   fail with EAGAIN although records are queued (the other reader is
 *   taking them); a reader that leaves records behind signals EPOLLIN
 *   again, so an edge-triggered epoll waiter hears of them.
 *
 * Limits
 *   The module's limits and defaults are its parameters, readable by
 *   any user in /sys/module/gpuar/parameters/ (one decimal number each):
 *   max_waits (pending plus unread waits per port, and the largest
 *   batch), max_lines (lines per port), max_points (estimator points
 *   per port, fixed at the port's creation), max_ports (open ports per
 *   user), check_floor_us, poll_interval_us, poll_backstop_us,
 *   checks_per_fire, busy_read_us, wakelat_max_us. Only root changes
 *   them, at any time; a change applies to later requests.
 *
 * Word-wait timing
 *   A flag plan is checked every max(park_ns, the module's check floor),
 *   so park_ns = 0 (park_us=0) means "as often as the floor allows"; a
 *   poll plan at the module's poll interval. While a blocked reader spins
 *   on a wait (busy-read), its loads stand in for those checks, which
 *   resume when its spin ends. Every word wait has a backstop
 *   counted from its submission: backstop_ns of a flag plan, or the
 *   module's default when that is 0 and for poll plans. start_ns (a
 *   resubmit's original start, never in the future) is what the estimator
 *   measures from; a resubmit found done at submission ends EXACT and
 *   trains the estimator with the time since start_ns. A point's sample
 *   window is the largest window of the predicting plans that used it (it
 *   grows, never shrinks, so plans mixed at one point keep its samples).
 *
 * Errors (beyond the extensibility rules above)
 *   ENOTTY   an ioctl the object does not answer, or a number whose
 *            direction or size bits are not the ones defined below
 *   EPERM    line register or unregister, word submit or claim from
 *            another mm
 *   EFAULT   an unreadable argument or entry array, an unmapped or
 *            read-only line address; a word wait on a line that died
 *            (its memory went, see "Line memory")
 *   EINVAL   a line address that is NULL, unaligned, outside user space,
 *            or not anonymous/shmem memory; a slot >= 8; an invalid or
 *            block plan (a margin or sleep above GPUAR_PLAN_SLEEP_NS_MAX
 *            included); start_ns in the future or more than
 *            GPUAR_START_AGE_NS_MAX in the past; an fd that is not a
 *            sync_file; entry_size below the first ABI version or above
 *            the page size; flags a call does not define (claim and
 *            wait-ready take none); a claim on a port created without
 *            GPUAR_PORT_IMMINENT
 *   ETIME    wait-ready: the deadline passed (or was 0) with no record
 *   EINTR    wait-ready: a signal arrived first
 *   EBADF    a fence fd that is negative or not open
 *   ENOENT   an unknown line id (ids start at 1, 0 is never valid); a cancel
 *            or point-stats key that matches nothing (cancelling an
 *            already cancelled wait is ENOENT)
 *   EALREADY cancel lost the race: the wait completed (or its line died),
 *            its record queued
 *   EBUSY    unregistering a line with word waits pending on it
 *   E2BIG    a batch or claim count above the module's max_waits
 *   ENOSPC   the port's limit on waits (pending + unread) or lines
 *            would be exceeded, or a new estimator point finds every
 *            point of a full table held by a pending wait (an idle
 *            point gives way to a new one, least recently used first,
 *            and its samples and statistics are forgotten: its point
 *            stats are then ENOENT)
 *   EMFILE   the calling user already has max_ports ports open
 *   ENOMEM   the line's pin would exceed RLIMIT_MEMLOCK (without
 *            CAP_IPC_LOCK), or memory is short
 *   A failed claim claims nothing (an entry array it cannot write is
 *   EFAULT, and the waits stay raised, unleased).
 *   A failed batch submits nothing; error_index names the first bad entry,
 *   in entry order whatever its fault (unreadable, invalid, unknown line,
 *   bad fence fd), or equals count when the batch as a whole was refused
 *   (EPERM, a bad header, E2BIG, ENOSPC, ENOMEM). A port without room
 *   for the whole batch refuses it (ENOSPC) once its entries are read
 *   and checked, before it allocates a wait for each.
 *   An entry larger than the module's struct with a non-zero byte past
 *   it is E2BIG with error_index naming that entry. When struct
 *   gpuar_submit itself cannot be read or fails the size rules,
 *   error_index is not written.
 */
#ifndef _UAPI_LINUX_GPUAR_H
#define _UAPI_LINUX_GPUAR_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * The ABI this header describes, and the oldest one the module reports as
 * compatible in gpuar_version.abi (see "ABI v1 (frozen)" above).
 */
#define GPUAR_ABI_VERSION 1
#define GPUAR_DEVICE_PATH "/dev/gpuar"

/* -------------------------------------------------------------- lines */

#define GPUAR_LINE_BYTES 64
#define GPUAR_LINE_SLOTS 8

/* ------------------------------------------------------------- plans */

/* How a wait parks between checks. */
enum gpuar_park {
	GPUAR_PARK_BLOCK = 1,	/* the vendor's blocking wait; refused by the kernel */
	GPUAR_PARK_POLL = 2,	/* check at the port's default interval */
	GPUAR_PARK_FLAG = 3,	/* check every park_ns, status query every backstop_ns */
};

/* gpuar_plan.flags */
#define GPUAR_PLAN_PREDICT (1U << 0)	/* sleep on the deadline estimator first */
#define GPUAR_PLAN_FLAGS_ALL GPUAR_PLAN_PREDICT

/* Bounds of the plan grammar, in nanoseconds. */
#define GPUAR_PLAN_WINDOW_MIN 1
#define GPUAR_PLAN_WINDOW_MAX 16
#define GPUAR_PLAN_PARK_NS_MAX 10000000ULL		/* 10 ms */
#define GPUAR_PLAN_BACKSTOP_NS_MAX 1000000000ULL	/* 1 s */
#define GPUAR_PLAN_SLEEP_NS_MAX 1000000000ULL	/* margin, min/max sleep: 1 s */
/*
 * The oldest start_ns a word wait may carry: a resubmit's original start
 * at most this long before the submission (the estimator learns from it).
 */
#define GPUAR_START_AGE_NS_MAX 3600000000000ULL	/* 1 h */

/*
 * The binary wait plan, as the shared core's parser produces it from text
 * such as "flag:park_us=100,backstop_us=1000+predict:margin_us=150,
 * min_sleep_us=20,max_sleep_us=50000,window=8". Times are nanoseconds.
 * Fields a park kind does not use must be zero: block and poll use none of
 * park_ns/backstop_ns; without GPUAR_PLAN_PREDICT, margin_ns, min_sleep_ns,
 * max_sleep_ns and window are zero. block never carries PREDICT.
 */
struct gpuar_plan {
	__u32 park;		/* enum gpuar_park */
	__u32 flags;		/* GPUAR_PLAN_* */
	__aligned_u64 park_ns;
	__aligned_u64 backstop_ns;
	__aligned_u64 margin_ns;
	__aligned_u64 min_sleep_ns;
	__aligned_u64 max_sleep_ns;
	__u32 window;		/* estimator samples, 1..16 */
	__u32 pad;		/* must be zero */
};

/* ------------------------------------------------------------ records */

/*
 * Record versions. A caller asks for the version it was built for
 * (gpuar_port_create.record_version); 0 means version 1, forever.
 */
#define GPUAR_RECORD_VERSION_1 1
#define GPUAR_RECORD_VERSION_MAX GPUAR_RECORD_VERSION_1

enum gpuar_source {
	GPUAR_SOURCE_WORD = 1,
	GPUAR_SOURCE_FENCE = 2,
};

enum gpuar_outcome {
	GPUAR_OUTCOME_IMMEDIATE = 1,	/* done at submission (a first submit) */
	/*
	 * A check saw it pending, a later one done; or a resubmit (start_ns
	 * set) done at submission, which earlier checks saw pending.
	 */
	GPUAR_OUTCOME_EXACT = 2,
	GPUAR_OUTCOME_LATE = 3,		/* first check after the sleep found it done */
	GPUAR_OUTCOME_FENCE = 4,	/* the fence signalled; status is its error */
	GPUAR_OUTCOME_TIMEOUT = 5,	/* backstop expired; status -ETIME */
	/*
	 * Cancelled or port closed, status -ECANCELED; or its line died
	 * (its memory went, see "Line memory"), status -EFAULT.
	 */
	GPUAR_OUTCOME_CANCELLED = 6,
};

/*
 * One past the last defined outcome, for code that loops over outcomes or
 * sizes its own counters. It grows when an outcome is added, so no ABI
 * struct is sized with it: the per-outcome arrays of the statistics have
 * GPUAR_OUTCOME_SLOTS entries, indexed by enum gpuar_outcome, forever;
 * slot 0 and every slot no outcome uses read zero.
 */
#define GPUAR_OUTCOME_COUNT 7
#define GPUAR_OUTCOME_SLOTS 16

/*
 * One completion record, version 1: 64 bytes. Times are CLOCK_MONOTONIC
 * nanoseconds. complete_ns is the time of the check that saw the word done
 * (word waits) or the fence's signal timestamp (fence waits). A fence that
 * had signalled before it was submitted has complete_ns < start_ns (its
 * start is the submission): compute a duration with that in mind.
 */
struct gpuar_record {
	__aligned_u64 user_data;
	__aligned_u64 start_ns;
	__aligned_u64 complete_ns;
	__aligned_u64 slept_ns;	/* time spent in the estimator's sleep */
	__aligned_u64 point;	/* readback point of a word wait, 0 for fences */
	__aligned_u64 value;	/* word value seen, or fence seqno */
	__s32 status;		/* 0, or a negative errno */
	__u32 checks;		/* word checks made */
	__u16 version;		/* GPUAR_RECORD_VERSION_* */
	__u8 source;		/* enum gpuar_source */
	__u8 outcome;		/* enum gpuar_outcome */
	__u32 pad;
};

/* ------------------------------------------------------ device ioctls */

/*
 * gpuar_version.features: what this module does beyond the ABI minimum.
 * New bits are only ever added; test a bit before using what it names.
 */
#define GPUAR_FEATURE_WORD_WAIT (1ULL << 0)
#define GPUAR_FEATURE_FENCE_WAIT (1ULL << 1)
#define GPUAR_FEATURE_BUSY_READ (1ULL << 2)
#define GPUAR_FEATURE_IMMINENT (1ULL << 3)	/* GPUAR_PORT_IMMINENT, CLAIM */
#define GPUAR_FEATURE_WAIT_READY (1ULL << 4)	/* GPUAR_IOC_WAIT_READY */
/* A line whose memory goes dies ("Line memory" above). */
#define GPUAR_FEATURE_LINE_WATCH (1ULL << 5)
/* GPUAR_PORT_IMMINENT_RDBAND: imminence as EPOLLRDBAND (below). */
#define GPUAR_FEATURE_IMMINENT_RDBAND (1ULL << 6)
/* GPUAR_PORT_AREA: records in a ring shared with userspace (below). */
#define GPUAR_FEATURE_AREA (1ULL << 7)

struct gpuar_version {
	__u32 size;
	__u32 abi;		/* out: oldest compatible ABI, 1 */
	__u32 record_max;	/* out: GPUAR_RECORD_VERSION_MAX */
	__u32 pad;
	__aligned_u64 features;	/* out: GPUAR_FEATURE_* */
};

/* gpuar_port_create.flags */
#define GPUAR_PORT_CLOEXEC (1U << 0)
#define GPUAR_PORT_NONBLOCK (1U << 1)
/*
 * Imminent readiness (GPUAR_FEATURE_IMMINENT): at a predicted word wait's
 * early wake the port raises EPOLLPRI until the wait is claimed
 * (GPUAR_IOC_CLAIM). A port created without it never shows EPOLLPRI.
 * Only pollers that ask for EPOLLPRI (or EPOLLRDBAND) are woken by a
 * raise; an EPOLLIN-only epoll or poll() waiter is not.
 *
 * EPOLLPRI has two traps. io_uring's internal poll for a READ (IORING_OP_
 * READ without a multishot buffer, when the read would block) asks for
 * EPOLLPRI whatever the caller wanted, so while a wait is raised and not
 * claimed such a READ finds the port "ready", reads nothing, and after
 * 128 tries is handed to an io-wq worker, which then blocks in read().
 * And a holder in another address space (a forked child, a process the fd
 * was passed to) that polls for EPOLLPRI sees it level-triggered but may
 * not claim, so it cannot clear it. GPUAR_PORT_IMMINENT_RDBAND (with
 * GPUAR_PORT_IMMINENT; GPUAR_FEATURE_IMMINENT_RDBAND) signals imminence
 * with EPOLLRDBAND instead, which io_uring's READ poll does not ask for
 * and its poll and epoll filter by the wake-up's key: only a poller that
 * asked for EPOLLRDBAND hears of it. Such a port never shows EPOLLPRI.
 */
#define GPUAR_PORT_IMMINENT (1U << 2)
#define GPUAR_PORT_IMMINENT_RDBAND (1U << 3)
/* The shared completion area (GPUAR_FEATURE_AREA): see "The area" below. */
#define GPUAR_PORT_AREA (1U << 4)
#define GPUAR_PORT_FLAGS_ALL \
	(GPUAR_PORT_CLOEXEC | GPUAR_PORT_NONBLOCK | GPUAR_PORT_IMMINENT | \
	 GPUAR_PORT_IMMINENT_RDBAND | GPUAR_PORT_AREA)

struct gpuar_port_create {
	__u32 size;
	__u32 flags;
	__u32 record_version;	/* GPUAR_RECORD_VERSION_*; 0 means version 1 */
	/*
	 * With GPUAR_PORT_AREA: the ring's size in records, rounded up to a
	 * power of two, between GPUAR_AREA_RING_MIN and GPUAR_AREA_RING_MAX
	 * (else EINVAL); 0 asks for the module's default, max_waits rounded
	 * up (kept between GPUAR_AREA_RING_MIN and GPUAR_AREA_RING_MAX).
	 * Without the flag it must be 0 (it was pad in ABI v1, and still
	 * reads as pad).
	 */
	union {
		__u32 pad;
		__u32 ring_entries;
	};
};

/* ------------------------------------------------------- port ioctls */

struct gpuar_line_register {
	__u32 size;
	__u32 flags;		/* must be zero */
	__aligned_u64 addr;	/* user address, 64-byte aligned, anon or shmem */
	__u32 id;		/* out: line id for word waits */
	__u32 pad;
};

struct gpuar_line_unregister {
	__u32 size;
	__u32 id;		/* EBUSY while waits on the line are pending */
};

struct gpuar_word_wait {
	__aligned_u64 user_data;
	__aligned_u64 target;
	__aligned_u64 point;	/* estimator key */
	__aligned_u64 start_ns;	/* 0: now; else the original start of a resubmit */
	__u32 line;
	__u32 slot;		/* 0..GPUAR_LINE_SLOTS-1 */
	__u32 flags;		/* must be zero */
	__u32 pad;
	struct gpuar_plan plan;
};

struct gpuar_fence_wait {
	__aligned_u64 user_data;
	__s32 fd;		/* a sync_file */
	__u32 flags;		/* must be zero */
	__aligned_u64 reserved[2];
};

/*
 * Batched submission. entries points at count entries of entry_size bytes
 * each (struct gpuar_word_wait or struct gpuar_fence_wait, possibly of an
 * older or newer size). All or nothing: every entry is validated before
 * any is committed. On failure error_index is the index of the first bad
 * entry (or count if the batch as a whole was refused) and nothing was
 * submitted. Returns the number of waits submitted.
 */
struct gpuar_submit {
	__u32 size;
	__u32 count;
	__u32 entry_size;
	__u32 flags;		/* must be zero */
	__aligned_u64 entries;
	__u32 error_index;	/* out */
	__u32 pad;
};

/*
 * Cancel every pending wait carrying user_data. Each gets a CANCELLED
 * record. Returns the number cancelled. ENOENT when none is pending and
 * none is known; EALREADY when the wait already completed and its record is
 * queued (the cancel lost the race).
 */
struct gpuar_cancel {
	__u32 size;
	__u32 flags;		/* must be zero */
	__aligned_u64 user_data;
};

/*
 * Statistics. The per-outcome array ends each v1 struct and never changes
 * size (GPUAR_OUTCOME_SLOTS); fields added later follow it.
 */
struct gpuar_port_stats {
	__u32 size;
	__u32 pad;
	__aligned_u64 submitted;
	__aligned_u64 checks;
	__aligned_u64 sleeps;
	__aligned_u64 timer_fires;
	__aligned_u64 busy_read_checks;
	__aligned_u64 pending;
	__aligned_u64 queued;		/* records not yet read */
	__aligned_u64 lines;
	__aligned_u64 points;
	__aligned_u64 wakeup_latency_ns;	/* the learned high quantile */
	__aligned_u64 outcomes[GPUAR_OUTCOME_SLOTS];	/* by enum gpuar_outcome */
	/* Since GPUAR_PORT_STATS_SIZE_VER2 (a smaller struct gets the above): */
	__aligned_u64 imminent;		/* waits raised imminent (EPOLLPRI) */
	__aligned_u64 claims;		/* waits handed out by GPUAR_IOC_CLAIM */
	__aligned_u64 lease_expiries;	/* leases (claims, busy reads) run out */
	__aligned_u64 budget_stretched;	/* timer firings the check budget delayed */
};

struct gpuar_point_stats {
	__u32 size;
	__u32 flags;		/* out: GPUAR_POINT_HAS_PREDICTION */
	__aligned_u64 point;	/* in */
	__aligned_u64 samples;	/* out: samples recorded */
	__aligned_u64 predicted_ns;	/* out: prediction, 0 if none */
	__aligned_u64 outcomes[GPUAR_OUTCOME_SLOTS];	/* by enum gpuar_outcome */
};

#define GPUAR_POINT_HAS_PREDICTION (1U << 0)

/*
 * Claiming imminent waits (ports created with GPUAR_PORT_IMMINENT).
 * GPUAR_IOC_CLAIM writes up to count entries of entry_size bytes at
 * entries, one per imminent wait not yet claimed, earliest first, and
 * returns how many it wrote: at most GPUAR_CLAIM_BATCH in one call (claim
 * again for more; EPOLLPRI stays while any is left), and the whole
 * destination for that many is written (zeroed) before anything is
 * claimed, so a faulting one is EFAULT with nothing claimed. Each
 * claimed wait is leased to the caller
 * until lease_end_ns: the port's timer leaves it alone meanwhile (the
 * caller is watching the word in user mode), EPOLLPRI drops once no
 * unclaimed imminent wait is left, and a read() (blocking or not) first
 * checks the claimed waits whose words the caller may have seen reach
 * their targets, so their records come back in that same call. A lease
 * that runs out gives the wait back to the timer. lease_ns asks for a
 * lease length (0: the module's default); the module caps it. A lease
 * runs that long past the wait's predicted completion (the end of its
 * estimator sleep plus the plan's margin), or past the claim if that is
 * later, and never past the backstop: a claim made at an early raise
 * still covers the store (at the backstop the timer ends the wait, as
 * late as its firing comes, a few microseconds on a quiet machine). The
 * claim also checks each wait once: one whose word is already done ends
 * then (its record queued, POLLIN) and is not handed out, and counts
 * against GPUAR_CLAIM_BATCH as one looked at. A read() checks every
 * claimed wait, however many there are. Claiming from another address
 * space than the port's is EPERM (line addresses mean nothing there).
 */
#define GPUAR_CLAIM_BATCH 64	/* the most waits one CLAIM looks at */

struct gpuar_claim_entry {
	__aligned_u64 user_data;
	__aligned_u64 addr;		/* the line's user address, as registered */
	__aligned_u64 target;
	__aligned_u64 lease_end_ns;	/* CLOCK_MONOTONIC */
	__u32 line;			/* line id */
	__u32 slot;
};

struct gpuar_claim {
	__u32 size;
	__u32 flags;		/* must be zero */
	__aligned_u64 entries;	/* user pointer to count entries */
	__u32 count;		/* room at entries, in entries */
	__u32 entry_size;	/* sizeof(struct gpuar_claim_entry) */
	__aligned_u64 lease_ns;	/* requested lease; 0: the module's default */
};

/*
 * Waiting for a record with a deadline (GPUAR_FEATURE_WAIT_READY): block,
 * busy-reading as a blocked read() does, until a record is queued (0), the
 * CLOCK_MONOTONIC deadline_ns passes (ETIME; deadline_ns 0 never blocks) or
 * a signal arrives (EINTR). A deadline_ns past 2^63 - 1 (the clock's
 * range, KTIME_MAX) is no deadline: it blocks until a record or a signal,
 * as a blocking read() does. It reads nothing: read() the records after
 * it. Any holder of the port fd may call it, in any address space: the
 * claimed waits it checks first are only the port's own process's.
 */
struct gpuar_wait_ready {
	__u32 size;
	__u32 flags;		/* must be zero */
	__aligned_u64 deadline_ns;
};

/* ----------------------------------------------------------- the area */

/*
 * The area (ports created with GPUAR_PORT_AREA; GPUAR_FEATURE_AREA): memory
 * the port shares with userspace, so records are reaped with no system
 * call. mmap() the port fd at offset 0, MAP_SHARED, PROT_READ | PROT_WRITE,
 * for struct gpuar_area's bytes (map its first page to learn them; a
 * mapping that is private, past bytes, at another offset, or of a port
 * without the area is EINVAL, ENODEV for the last). Any holder of the fd
 * may map it, in any address space, as any holder may read().
 *
 * The ring holds ring_entries records of record_size bytes (the port's
 * record version) at ring_off, indexed by free-running __u32 counters:
 * the module writes the record for index tail at ring[tail & ring_mask],
 * then advances tail with a store-release; consumers advance head. The
 * module is the only producer; consumers may be many (threads, read()),
 * so a consumer takes the record at head only by a compare-and-swap of
 * head from h to h + 1, and copies it out *before* the swap: the module
 * never rewrites ring[h & ring_mask] while head is h, so a swap that
 * succeeds proves the copy whole. The consumer's loop:
 *
 *   h = load(head)
 *   while (h != load_acquire(tail)):
 *       rec = ring[h & ring_mask]
 *       if cas(head, h, h + 1): take rec, h = h + 1
 *       else: h = the value the failed cas saw
 *   if load_acquire(flags) & GPUAR_AREA_OVERFLOW: read() the port
 *
 * Records enter the ring in completion order. One that finds the ring
 * full (tail - head == ring_entries) waits in the port's queue instead,
 * GPUAR_AREA_OVERFLOW is set while any does, and every later record
 * queues behind it, so order holds: read() returns the ring's records
 * first (taking them by the same swap), then the queue's, and moves what
 * fits of the queue back into the ring. read(), poll and the rest of
 * this header treat a record in the ring as queued: EPOLLIN while
 * tail != head or the queue holds one; a record stops counting against
 * the port's wait limit when it is taken from the ring; a cancel that
 * finds the wait's record in the ring (between head and tail when it
 * looks) answers EALREADY. GPUAR_AREA_OVERFLOW is the reaper's hint, set
 * as a record queues: a consumer that found the ring empty just as one
 * queued may see the flag clear, but poll and a blocking read() see
 * that record, so one that waits there next misses nothing.
 *
 * What the module trusts: nothing. It writes magic .. record_size once
 * and tail and flags as they change, keeps its own copies, and never
 * reads them back. It reads the ring's records only to pass them on
 * (read()) and to answer a cancel (a scribbled record can turn that
 * answer from ENOENT to EALREADY or back, for its own port). The one
 * field it acts on is head, and a head that does not lie within
 * ring_entries behind tail counts as a full ring holding nothing to
 * read: records go to the queue, where read() still finds them, the
 * wait limit counts ring_entries records in the ring, and there is no
 * EPOLLIN for it. Scribbling over the area loses the scribbler its own
 * records, nothing else.
 */
#define GPUAR_AREA_MAGIC 0x72617067	/* "gpar", little-endian */
#define GPUAR_AREA_RING_MIN 8
#define GPUAR_AREA_RING_MAX 65536

/* gpuar_area.flags */
#define GPUAR_AREA_OVERFLOW (1U << 0)	/* records wait in the queue: read() */

struct gpuar_area {
	/* Written once at creation. */
	__u32 magic;		/* GPUAR_AREA_MAGIC */
	__u32 size;		/* sizeof this struct as the module knows it */
	__u32 bytes;		/* the whole area: the length to mmap */
	__u32 ring_off;		/* byte offset of the ring */
	__u32 ring_entries;	/* a power of two */
	__u32 ring_mask;	/* ring_entries - 1 */
	__u32 record_size;	/* bytes per ring entry: the record version's */
	__u32 reserved0[9];
	/* The module's: its own cache line. */
	__u32 tail;		/* the next record's index (store-release) */
	__u32 flags;		/* GPUAR_AREA_* */
	__u32 reserved1[14];
	/* The consumers': its own cache line. */
	__u32 head;		/* the next record to take (compare-and-swap) */
	__u32 reserved2[15];
};

#define GPUAR_AREA_SIZE_VER1	192

/* ------------------------------------------------------------ ioctls */

/*
 * The v1 size of each argument, in bytes: the smallest struct the module
 * accepts, and the size each ioctl number encodes, for as long as the ABI
 * lasts (a struct that grows keeps its number).
 */
#define GPUAR_VERSION_SIZE_VER1		24
#define GPUAR_PORT_CREATE_SIZE_VER1	16
#define GPUAR_LINE_REGISTER_SIZE_VER1	24
#define GPUAR_LINE_UNREGISTER_SIZE_VER1	8
#define GPUAR_SUBMIT_SIZE_VER1		32
#define GPUAR_CANCEL_SIZE_VER1		16
#define GPUAR_PORT_STATS_SIZE_VER1	216
#define GPUAR_PORT_STATS_SIZE_VER2	248	/* imminent .. budget_stretched */
#define GPUAR_POINT_STATS_SIZE_VER1	160
#define GPUAR_WORD_WAIT_SIZE_VER1	104	/* batch entry */
#define GPUAR_FENCE_WAIT_SIZE_VER1	32	/* batch entry */
#define GPUAR_CLAIM_SIZE_VER1		32
#define GPUAR_CLAIM_ENTRY_SIZE_VER1	40	/* claim entry */
#define GPUAR_WAIT_READY_SIZE_VER1	16

#define GPUAR_IOC_MAGIC 0xD4

#define GPUAR_IOC_RW (_IOC_READ | _IOC_WRITE)

#define GPUAR_IOC_VERSION \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x00, GPUAR_VERSION_SIZE_VER1)
#define GPUAR_IOC_PORT_CREATE \
	_IOC(_IOC_WRITE, GPUAR_IOC_MAGIC, 0x01, GPUAR_PORT_CREATE_SIZE_VER1)
#define GPUAR_IOC_LINE_REGISTER \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x10, GPUAR_LINE_REGISTER_SIZE_VER1)
#define GPUAR_IOC_LINE_UNREGISTER \
	_IOC(_IOC_WRITE, GPUAR_IOC_MAGIC, 0x11, GPUAR_LINE_UNREGISTER_SIZE_VER1)
#define GPUAR_IOC_SUBMIT_WORD \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x20, GPUAR_SUBMIT_SIZE_VER1)
#define GPUAR_IOC_SUBMIT_FENCE \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x21, GPUAR_SUBMIT_SIZE_VER1)
#define GPUAR_IOC_CANCEL \
	_IOC(_IOC_WRITE, GPUAR_IOC_MAGIC, 0x22, GPUAR_CANCEL_SIZE_VER1)
#define GPUAR_IOC_CLAIM \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x23, GPUAR_CLAIM_SIZE_VER1)
#define GPUAR_IOC_WAIT_READY \
	_IOC(_IOC_WRITE, GPUAR_IOC_MAGIC, 0x24, GPUAR_WAIT_READY_SIZE_VER1)
#define GPUAR_IOC_PORT_STATS \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x30, GPUAR_PORT_STATS_SIZE_VER1)
#define GPUAR_IOC_POINT_STATS \
	_IOC(GPUAR_IOC_RW, GPUAR_IOC_MAGIC, 0x31, GPUAR_POINT_STATS_SIZE_VER1)

#endif /* _UAPI_LINUX_GPUAR_H */
