/* SPDX-License-Identifier: MIT */
/*
 * libgpuar: GPU completion ports.
 *
 * A completion port is a file descriptor that turns readable when GPU work
 * completes and yields fixed-size completion records (struct gpuar_record,
 * from <linux/gpuar.h>). Two engines implement the same port:
 *
 *   kernel  the gpuar module's port (/dev/gpuar): the module sleeps on the
 *           deadline estimator, checks the word from a timer, and queues the
 *           record; the fd is exactly readable when a record is queued.
 *   user    a port run by this library in the caller's process, with the
 *           same validation, records and outcomes. See "The user engine's
 *           fd" below for how it works with event loops.
 *
 * Conventions (as liburing): functions return 0 or a count on success and a
 * negative errno on failure; they do not set errno. Functions that take a
 * `struct gpuar_error *diag` also fill it (when non-NULL) with a coded error
 * or warning (enum gpuar_code): callers branch on diag->code, never on the
 * message text. diag->code is GPUAR_OK when there is nothing to report.
 * gpuar(7) says which calls take a diag and why. A NULL object (or text,
 * or out pointer a call must write) is refused with -EINVAL, never
 * dereferenced; calls without a status return their neutral value (NULL,
 * 0, false, or the value named with them) and closes ignore NULL.
 *
 * Names say the path: *_blocking blocks the calling thread on one wait
 * (no port); *port* goes through a completion port, whose fd an event
 * loop polls. Quick start: gpuar_port_open (NULL options),
 * gpuar_line_alloc, gpuar_port_await_word (NULL plan: the default),
 * gpuar_port_reap, gpuar_port_close.
 *
 * Thread-safety is stated per object: a port is safe to use from several
 * threads at once (it has its own lock); waiters are safe for concurrent
 * gpuar_wait() calls; an executor belongs to the thread that runs it.
 *
 * Times are CLOCK_MONOTONIC nanoseconds unless said otherwise. A timeout
 * or deadline that is negative (int64_t) or UINT64_MAX (uint64_t) means
 * forever; a sum past the clock's range saturates to forever.
 *
 * Threads the library starts (a GPUAR_PORT_WATCHER port's, a soft
 * producer's) block every signal, so process signals go to the caller's
 * threads. Nothing in the library is async-signal-safe. A blocking
 * gpuar_reap() returns -EINTR when a signal interrupts it.
 *
 * Fork. Every fd the library makes is close-on-exec (a child that execs
 * holds none; see GPUAR_PORT_INHERIT). A child that does not exec shares
 * the parent's open files, so the library keeps it away from them: in
 * the child, every call on a port or io_uring host opened before the
 * fork fails with -EPERM and changes nothing, line
 * pages are not mapped at all (MADV_DONTFORK: the device keeps writing
 * the parent's page), and gpuar_port_close() only frees the child's
 * copies of the port's memory and fds: the parent's waits, records,
 * lines and watcher thread are untouched whatever the child does. A
 * child opens its own ports. (The CUDA and HIP drivers are not usable
 * in a forked child either.)
 */
#ifndef GPUAR_GPUAR_H
#define GPUAR_GPUAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/gpuar.h>
#include <gpuar/codes.h>	/* enum gpuar_code: the coded error numbers */

/*
 * Renamed functions keep their old names, exported and working, until
 * 1.0; a program compiled against the old name gets a warning naming the
 * new one (define GPUAR_DISABLE_DEPRECATION_WARNINGS to silence it).
 */
#ifndef GPUAR_DEPRECATED_FOR
#if defined(__GNUC__) && !defined(GPUAR_DISABLE_DEPRECATION_WARNINGS)
#define GPUAR_DEPRECATED_FOR(f) __attribute__((deprecated("renamed " #f)))
#else
#define GPUAR_DEPRECATED_FOR(f)
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GPUAR_LIB_VERSION_MAJOR 0
#define GPUAR_LIB_VERSION_MINOR 1
#define GPUAR_LIB_VERSION_PATCH 0

/* The library's version string ("0.1.0"). Thread-safe. */
const char *gpuar_version(void);

/* ------------------------------------------------------------ errors */

/* The coded error numbers (enum gpuar_code) are in <gpuar/codes.h>. */

#define GPUAR_MESSAGE_MAX 256

/* A coded error or warning: the code, the errno it maps to, and the text. */
struct gpuar_error {
	uint32_t code;		/* enum gpuar_code; GPUAR_OK: nothing to report */
	int32_t sys_errno;	/* the positive errno the call returned negated, or 0 */
	char message[GPUAR_MESSAGE_MAX];	/* "name[code]: message" */
};

/* The registry's name for @code ("stalled"), or NULL if unassigned. Thread-safe. */
const char *gpuar_code_name(uint32_t code);

/* True when @code is a warning (the call went ahead). Thread-safe. */
bool gpuar_code_is_warning(uint32_t code);

/* CLOCK_MONOTONIC now, in ns. Thread-safe. */
uint64_t gpuar_now_ns(void);

/* ------------------------------------------------------ plans, bands */

/*
 * The default plan: what a NULL plan means to gpuar_port_await_word,
 * gpuar_cuda_port_await, gpuar_hip_port_await (and their _event twins),
 * gpuar_wait_blocking and the vendor queues, and what the text "default"
 * parses to. It predicts: the first sleep is on the deadline estimator, to
 * 100 us before the predicted end (a margin that kept spin-like latency
 * even under emulation), never shorter than a wake-up costs (20 us) nor
 * longer than the backstop; then a check every 100 us (an event loop's
 * latency at worst, about 10,000 timer checks a second while late); the
 * vendor's status is asked every second (the longest backstop a plan may
 * have, the module's default); the estimator keeps the last 8 waits of a
 * point.
 */
#define GPUAR_PLAN_DEFAULT_TEXT \
	"flag:park_us=100,backstop_us=1000000+predict:margin_us=100," \
	"min_sleep_us=20,max_sleep_us=1000000,window=8"

/*
 * Parse a wait plan ("default", "block", "poll",
 * "flag:park_us=100,backstop_us=1000", optionally
 * "+predict:margin_us=..,min_sleep_us=..,max_sleep_us=..,window=..").
 * "default" is GPUAR_PLAN_DEFAULT_TEXT (gpuar_plan_to_text writes it out
 * in full). Parse once, keep the binary plan. Errors: -EINVAL with
 * GPUAR_E_INVALID_PLAN naming the text and the first thing wrong, or
 * GPUAR_E_INVALID_ARGUMENT for a NULL @text or @plan. Thread-safe.
 */
int gpuar_plan_from_text(const char *text, struct gpuar_plan *plan,
			 struct gpuar_error *diag);

/*
 * Write @plan back as text (parse -> label round-trips). Returns the length
 * the full label needs, as snprintf; @buf always NUL-terminated when
 * @size > 0. Thread-safe.
 */
size_t gpuar_plan_to_text(const struct gpuar_plan *plan, char *buf,
			  size_t size);

/*
 * Experimental: the gpuar_bands_* and gpuar_rows_* functions, the
 * benchmark's way to pick a plan by row count, are at the symbol version
 * GPUAR_EXPERIMENTAL_0, outside the frozen ABI; a release may change
 * them (docs/stability.md). The band text grammar is kept either way.
 */
#define GPUAR_WAIT_BANDS_MAX 4

/* Plans by row count: band i applies from from_rows[i] up to the next edge. */
struct gpuar_wait_bands {
	uint32_t count;				/* 1..GPUAR_WAIT_BANDS_MAX */
	uint32_t pad;
	uint64_t from_rows[GPUAR_WAIT_BANDS_MAX];	/* [0] == 0, increasing */
	struct gpuar_plan plan[GPUAR_WAIT_BANDS_MAX];
};

/*
 * Parse bands ("<plan>;rows>=<n>:<plan>;..."). Errors: -EINVAL with
 * GPUAR_E_INVALID_BANDS. Thread-safe.
 */
int gpuar_bands_from_text(const char *text, struct gpuar_wait_bands *bands,
			  struct gpuar_error *diag);

/* Write @bands back as text; as gpuar_plan_to_text. Thread-safe. */
size_t gpuar_bands_to_text(const struct gpuar_wait_bands *bands, char *buf,
			   size_t size);

/* The one plan whose band holds @rows. Never NULL for parsed bands. Thread-safe. */
const struct gpuar_plan *gpuar_bands_for_rows(const struct gpuar_wait_bands *bands,
					      uint64_t rows);

/*
 * A published row count: a launcher updates it once per step, waiters read
 * it to pick their band. Reads and writes are atomic (release/acquire);
 * any number of threads may read while one publishes.
 */
struct gpuar_rows {
	uint64_t rows;
};

void gpuar_rows_publish(struct gpuar_rows *rows, uint64_t count);
uint64_t gpuar_rows_read(const struct gpuar_rows *rows);
/* gpuar_bands_for_rows(bands, gpuar_rows_read(rows)). */
const struct gpuar_plan *gpuar_bands_current(const struct gpuar_wait_bands *bands,
					     const struct gpuar_rows *rows);

/* ------------------------------------------------------------- ports */

enum gpuar_engine {
	GPUAR_ENGINE_AUTO = 0,		/* kernel when /dev/gpuar opens, else user */
	GPUAR_ENGINE_KERNEL = 1,
	GPUAR_ENGINE_USER = 2,
};

/*
 * gpuar_port_options.flags: GPUAR_PORT_CLOEXEC and GPUAR_PORT_NONBLOCK from
 * <linux/gpuar.h> (the port fd's O_CLOEXEC and O_NONBLOCK; NONBLOCK only
 * matters to whoever read(2)s a kernel port directly: gpuar_reap waits in
 * poll and never blocks past its timeout), and the ones below.
 *
 * Every fd the library makes is close-on-exec, as liburing's and libdrm's
 * are: a program that opens a port and starts a child (fork and exec,
 * Python's subprocess) leaves the child no gpuar fd, so closing the port
 * in the parent cancels its waits and unpins its lines. CLOEXEC is
 * therefore the default and may be left out; GPUAR_PORT_INHERIT keeps the
 * port fd (only that one) open across exec instead.
 */
#define GPUAR_PORT_STRICT (1U << 16)	/* AUTO: refuse instead of falling back */
/*
 * User engine: run the engine on a watcher thread, so the port fd is
 * readable exactly while a record is queued (no spurious readiness, no
 * gpuar_port_process() needed), at the cost of one thread per port and a
 * thread wake-up per completion. Ignored by the kernel engine, whose fd is
 * exact already.
 */
#define GPUAR_PORT_WATCHER (1U << 17)
/* The port fd survives exec (not with GPUAR_PORT_CLOEXEC: -EINVAL). */
#define GPUAR_PORT_INHERIT (1U << 18)
/*
 * Kernel engine: leave the module's shared completion area alone and
 * read() every record, as with a module before GPUAR_FEATURE_AREA (for
 * comparisons: gpuar-bench's throughput mode). Without it a port on a
 * module that has the area maps it (GPUAR_PORT_AREA, the module's
 * default ring size) and gpuar_port_reap() takes records from its ring
 * with no system call, reading the port only when the ring is empty and
 * the caller waits, or when records overflowed into the module's queue;
 * a header that does not check out (magic, sizes, geometry, record size)
 * leaves the port reading as before. gpuar_port_lib_stats() says which.
 * Ignored by the user engine. (GPUAR_PORT_AREA from <linux/gpuar.h> is
 * the library's to ask the module for: given here, it is ignored.)
 */
#define GPUAR_PORT_NO_AREA (1U << 19)
/*
 * GPUAR_PORT_IMMINENT (from <linux/gpuar.h>): imminent readiness, for
 * programs that wait in epoll, poll, libuv or io_uring and want a GPU
 * completion at about a spin's latency. At a predicted flag wait's early
 * wake (its predicted completion less the plan's margin and the port's
 * measured wake-up latency) the port turns ready: the kernel engine's fd
 * raises EPOLLPRI (poll for POLLIN | POLLPRI), the user engine's fd turns
 * readable. gpuar_port_process() and gpuar_reap() then claim the imminent
 * waits and watch their words in the calling thread (the CPU's hardware
 * word wait where it has one, else a load loop) until a store or the end
 * of the claim's lease (the port's busy_read_us, 1 ms by default, as the
 * module's busy_read_us is; counted from the wait's predicted
 * completion),
 * and the records come from the reap that follows. A loop that calls
 * gpuar_reap(port, records, max, 0) at any readiness of the fd needs
 * nothing else: it takes queued records without claiming, and claims
 * only when none is queued. The cost: one extra
 * wake-up per predicted wait, and up to a lease of the caller's CPU per
 * wait whose work runs late. The kernel engine needs a module with
 * GPUAR_FEATURE_IMMINENT: without it the port opens without imminent
 * readiness and the warning GPUAR_W_FEATURE_FALLBACK (STRICT: refused,
 * -EOPNOTSUPP with GPUAR_E_FEATURE_UNAVAILABLE); so does a user engine
 * port with GPUAR_PORT_WATCHER, whose thread runs the engine.
 * gpuar_port_imminent() says whether it runs.
 */

/*
 * Options structs (this one, struct gpuar_exec_options, struct
 * gpuar_waiter_options) grow at the end, as the kernel's ioctl arguments
 * do. size is 0 or sizeof() the struct the caller was compiled with: 0
 * means the 1.0 layout, so a designated initializer that leaves it out
 * keeps working. A larger (newer) struct is accepted while the options
 * this library does not know are zero (else -E2BIG); a non-zero size
 * below the 1.0 layout, or a non-zero reserved field, is -EINVAL. Each
 * refusal is GPUAR_E_INVALID_ARGUMENT naming the field.
 */
struct gpuar_port_options {
	uint32_t size;			/* 0 or sizeof(struct gpuar_port_options) */
	uint32_t engine;		/* enum gpuar_engine */
	uint32_t flags;			/* GPUAR_PORT_* */
	/*
	 * Every number below is 0 (the default) or within the bounds the
	 * module puts on its parameter of the same name (given with each);
	 * outside them the open is -EINVAL with
	 * GPUAR_E_INVALID_ARGUMENT naming the option.
	 */
	uint32_t max_waits;		/* pending + unread waits (4096; 1..1M) */
	const char *device_path;	/* NULL: GPUAR_DEVICE_PATH */
	/*
	 * User engine only, defaults (0) as the module's parameters of the
	 * same names: the module's are set when it is loaded.
	 */
	uint64_t poll_interval_ns;	/* check interval of "poll" plans
					 * (50 us; 1 us..10 ms) */
	uint64_t poll_backstop_ns;	/* backstop of poll plans and flag plans
					 * with backstop_us=0 (1 s; 1 us..1 s) */
	/* Limits, user engine only, as the module's parameters too. */
	uint32_t max_lines;		/* (64; 1..65536) */
	uint32_t max_points;		/* estimator points (64; 1..4096); a
					 * full table gives its least recently
					 * used idle point to a new one */
	/*
	 * Busy-read (user engine; the kernel engine's budget is the module's
	 * busy_read_us parameter): the most time one blocking gpuar_reap()
	 * call spins on the words of its waits, in us (1000; at most
	 * GPUAR_BUSY_READ_MAX_US, GPUAR_BUSY_READ_OFF disables it). As the
	 * module's read(): a reaper that finds no record and no hardware
	 * word wait to park in checks the word of a flag wait whose
	 * predicted sleep is over itself, in a load loop, until the store;
	 * once the budget is spent that call sleeps on the fd until the
	 * next check. While a reaper blocks, its wake-up comes the port's
	 * measured wake-up latency (wakeup_latency_ns) before the estimator's
	 * sleep ends, so the spin begins by then, the plan's margin before
	 * the predicted completion. Unused with GPUAR_PORT_WATCHER (the
	 * watcher thread runs the engine) and by non-blocking reaps. On both
	 * engines it is also the lease of the imminent waits a port claims
	 * (GPUAR_PORT_IMMINENT); the kernel engine's, when 0 or
	 * GPUAR_BUSY_READ_OFF, is the module's busy_read_us parameter (its
	 * lease_us where that is 0).
	 */
	uint32_t busy_read_us;
	/*
	 * Claim slice (GPUAR_PORT_IMMINENT): the most time one
	 * gpuar_port_process() or zero-timeout gpuar_port_reap() call
	 * watches its claimed words, in us (at most GPUAR_BUSY_READ_MAX_US),
	 * so an event loop that awaits GPU work beside other fds serves them
	 * between slices. The claim outlives the call: the next call
	 * resumes watching the same waits without claiming again, until a
	 * store or the lease's end, and meanwhile the user engine's fd
	 * stays readable, so a loop comes back to it after its other fds.
	 * 0: the default, GPUAR_CLAIM_SLICE_DEFAULT_US on the user engine
	 * and the whole lease on the kernel engine (whose EPOLLPRI the
	 * module lowers at the claim, so a slice there needs a loop that
	 * calls again while gpuar_port_next_check_ns() is due);
	 * GPUAR_CLAIM_SLICE_OFF: one call watches for the whole lease (the
	 * 0.1 behaviour). Blocking reaps always watch within their timeout.
	 */
	uint32_t claim_slice_us;
	uint32_t reserved[12];		/* must be zero */
};

#define GPUAR_BUSY_READ_MAX_US 100000U	/* as the module's parameter */
#define GPUAR_BUSY_READ_OFF UINT32_MAX
#define GPUAR_CLAIM_SLICE_DEFAULT_US 20U
#define GPUAR_CLAIM_SLICE_OFF UINT32_MAX

struct gpuar_port;
struct gpuar_line;

/*
 * Open a port. @opts may be NULL (auto engine, no flags, defaults).
 *
 * Engine choice: KERNEL opens @device_path; USER builds a user engine port;
 * AUTO tries the kernel and falls back to the user engine with the warning
 * GPUAR_W_ENGINE_FALLBACK in *@diag (return 0). With GPUAR_PORT_STRICT an
 * AUTO request whose kernel engine is missing is refused; a KERNEL request
 * whose device is missing is always refused (an explicit engine is
 * honoured or refused, never swapped): the open's negated errno (-ENOENT
 * for a missing device node) with GPUAR_E_ENGINE_UNAVAILABLE.
 * gpuar_port_engine() reports what runs.
 *
 * Errors: -EINVAL (unknown engine or flag bits), -ENODEV/-EACCES/... (kernel
 * engine unavailable), -ENOMEM, -EMFILE. Thread-safe.
 */
int gpuar_port_open(struct gpuar_port **port,
		    const struct gpuar_port_options *opts,
		    struct gpuar_error *diag);

/*
 * Close the port: every pending wait is cancelled without a record, every
 * line unmapped, the fd closed. A line a vendor backend kept because its
 * device may still store there (gpuar_cuda_line_free, gpuar_hip_line_free
 * after -EIO or -ETIMEDOUT) is no longer the port's: it is neither
 * unmapped nor freed, and its page stays mapped, its address range
 * reserved, for the life of the process. The caller must ensure no other
 * thread is using the port. NULL is ignored.
 *
 * Teardown order: free what points into the port first (vendor lines,
 * the io_uring host, a soft producer storing into its lines). A vendor
 * line still allocated when its port closes keeps its page (the device
 * may still store there), its awaits are dropped, and it refuses new
 * stores and waits (-EBADF) until gpuar_cuda_line_free/gpuar_hip_line_free
 * frees it, unmapping the page once the device is done with it. A soft
 * producer's stores into a closed port's lines are not guarded.
 */
void gpuar_port_close(struct gpuar_port *port);

/*
 * The engine that runs (KERNEL or USER, never AUTO); AUTO for a NULL
 * port. Thread-safe.
 */
enum gpuar_engine gpuar_port_engine(const struct gpuar_port *port);

/* "kernel" or "user". Thread-safe. */
const char *gpuar_engine_name(enum gpuar_engine engine);

/*
 * The port's pollable fd (POLLIN). Owned by the port: do not close or read
 * it. For the kernel engine it is the module's port, readable exactly when
 * a record is queued; read() on it returns records (what gpuar_reap does).
 *
 * The user engine's fd. Nothing makes an fd readable at a GPU store by
 * itself, so the user engine's fd is an epoll fd over (a) an eventfd that
 * is readable while a record is queued, (b) a timerfd armed (absolute,
 * CLOCK_MONOTONIC, hrtimer-backed, so no timer slack) at the next word check
 * any pending wait needs, and (c) the sync_file of every pending fence
 * wait. It turns readable when a record is ready *or the engine must run*:
 * the caller's loop then calls gpuar_port_process() (or gpuar_reap(), which
 * processes first). Readiness may therefore be spurious: after a check
 * that found the work still pending there is no record, and the fd is
 * re-armed for the next check. Level-triggered epoll, poll, libuv's
 * uv_poll and io_uring's POLL_ADD all work; with EPOLLET, call
 * gpuar_port_process() until it returns 0 after each wake-up.
 *
 * -EINVAL for a NULL port. Thread-safe.
 */
int gpuar_port_fd(const struct gpuar_port *port);

/*
 * Run the user engine: make every word check that is due, complete the
 * fence waits whose fence signalled, re-arm the timer. Returns the number
 * of records now queued (>= 0). For the kernel engine it only reports the
 * queued count (the module runs itself). On a port with imminent
 * readiness, when nothing is queued, it also claims the imminent waits
 * and watches their words until one is stored, the lease ends, or the
 * port's claim slice is over (claim_slice_us: the claims are kept, the
 * user engine's fd stays readable, and the next call resumes them; the
 * fd may turn ready once more after their record, for the call that
 * lets them go); those records count too and come from the next
 * gpuar_reap(). Errors: negative errno of a failing system call.
 * Thread-safe.
 */
int gpuar_port_process(struct gpuar_port *port);

/*
 * The next time (CLOCK_MONOTONIC ns) the user engine must run, or
 * UINT64_MAX when no word wait is pending (and for a NULL port). 0 for
 * the kernel engine. Thread-safe.
 */
uint64_t gpuar_port_next_check_ns(struct gpuar_port *port);

/*
 * Allocate a line: an ordinary anonymous page (mmap, one line per page, so
 * no other allocation shares it) whose first 64 bytes are the line's eight
 * u64 slots, zeroed. The kernel engine pins it (LINE_REGISTER); a vendor may
 * register the same page for the device (cuMemHostRegister,
 * hipHostRegister). Neither engine reads past the first 64 bytes: the rest
 * of the page belongs to the backend that registered it (the CUDA and HIP
 * backends keep the fence words of reverse waits there). The page must stay
 * mapped until the line is freed: on the kernel engine a line whose page is
 * unmapped or dropped (munmap, MADV_DONTNEED) dies, its pending waits end
 * with a CANCELLED record of status -EFAULT and new ones are refused with
 * -EFAULT (free it all the same); the user engine reads the words through
 * the mapping. Errors: -ENOMEM, -ENOSPC (port's line limit), the
 * kernel's errno (e.g. -ENOMEM over RLIMIT_MEMLOCK). Thread-safe.
 */
int gpuar_line_alloc(struct gpuar_port *port, struct gpuar_line **line);

/*
 * Free a line. Errors: -EBUSY while waits on it are pending (nothing
 * freed), -EINVAL if @line is not this port's. Thread-safe.
 */
int gpuar_line_free(struct gpuar_port *port, struct gpuar_line *line);

/* The line's eight slots (64-byte aligned, page aligned). Thread-safe. */
uint64_t *gpuar_line_words(const struct gpuar_line *line);

/* The id word waits name the line by (gpuar_word_wait.line). Thread-safe. */
uint32_t gpuar_line_id(const struct gpuar_line *line);

/*
 * Submit @count word waits (struct gpuar_word_wait from <linux/gpuar.h>:
 * line = gpuar_line_id(), slot, target, point, user_data, plan, start_ns 0
 * or the original start of a resubmission). All or nothing: on failure
 * nothing was submitted and *@error_index (if non-NULL) is the first bad
 * entry, or @count when the batch as a whole was refused.
 * Returns @count on success.
 *
 * Both engines check and time a wait the same way: a flag plan every
 * max(park_ns, check floor), a poll plan at the poll interval, a predicted
 * sleep first; every wait has a backstop counted from its submission (the
 * flag plan's backstop_ns, else the default poll backstop) after which a
 * check that finds it pending ends it with a TIMEOUT record (status
 * -ETIME): ask the vendor's status, and resubmit with the original
 * start_ns if the work is merely late.
 *
 * Errors (the module's, which the user engine mirrors): -EINVAL (slot >= 8,
 * flags/pad set, a plan failing validation, a block plan: block is the
 * vendor's blocking wait, use gpuar_wait; start_ns in the future), -ENOENT
 * (unknown line id), -E2BIG (@count above the wait limit), -ENOSPC (wait
 * or point limit), -EFAULT (@waits NULL; kernel: a line whose page went,
 * see gpuar_line_alloc), -EPERM (kernel: another mm).
 * Thread-safe.
 */
int gpuar_submit_word_waits(struct gpuar_port *port,
			    const struct gpuar_word_wait *waits, uint32_t count,
			    uint32_t *error_index);

/*
 * One word wait, without filling a struct gpuar_word_wait: the wait for
 * @slot of @line to reach @target (in wrapping order), whose record
 * carries @user_data, under @plan (NULL: the default plan,
 * GPUAR_PLAN_DEFAULT_TEXT), at the estimator point of its line and slot
 * (GPUAR_POINT_OF_SLOT(gpuar_line_id(line), slot): waits on one slot learn
 * together, apart from any point a caller picks below 2^63). Returns 0, or
 * the errors of gpuar_submit_word_waits; -EINVAL for a NULL @port or
 * @line. Thread-safe.
 */
#define GPUAR_POINT_OF_SLOT(line_id, slot) \
	((1ULL << 63) | ((uint64_t)(line_id) << 3) | ((uint64_t)(slot) & 7))
int gpuar_port_await_word(struct gpuar_port *port,
			  const struct gpuar_line *line, uint32_t slot,
			  uint64_t target, uint64_t user_data,
			  const struct gpuar_plan *plan);

/*
 * Submit @count fence waits (a sync_file fd each; the port takes its own
 * reference, the caller may close its fd afterwards). The record carries
 * the fence's error status and its signal time. All or nothing, as word
 * waits. Errors: -EBADF (not an fd), -EINVAL (not a sync_file, flags or
 * reserved set), -ENOSPC, -E2BIG (@count above the wait limit).
 * The user engine's fence records carry value 0 (a sync_file does not
 * expose its seqno to userspace); the kernel engine's carry the seqno.
 * Thread-safe.
 */
int gpuar_submit_fence_waits(struct gpuar_port *port,
			     const struct gpuar_fence_wait *waits,
			     uint32_t count, uint32_t *error_index);

/*
 * Cancel every pending wait carrying @user_data; each gets a CANCELLED
 * record (status -ECANCELED). Returns the number cancelled. Errors:
 * -EALREADY when a wait with @user_data already completed and its record
 * is queued (the cancel lost the race), -ENOENT when none is pending (an
 * already cancelled wait included).
 * Thread-safe.
 */
int gpuar_cancel(struct gpuar_port *port, uint64_t user_data);

/* True when the port runs imminent readiness (GPUAR_PORT_IMMINENT). Thread-safe. */
bool gpuar_port_imminent(const struct gpuar_port *port);

/*
 * Claim up to @max imminent waits of a port that runs imminent readiness,
 * for a caller that watches the words itself (gpuar_port_process and
 * gpuar_reap do this for everyone else): struct gpuar_claim_entry from
 * <linux/gpuar.h> (user data, line id and address, slot, target, lease
 * end), earliest first. Each is leased for @lease_ns (0: the port's
 * busy-read budget; the module caps it) past its predicted completion,
 * or past the claim if that is later, never past its backstop; a wait
 * whose word is already done at the claim ends then (its record is
 * queued) and is not handed out. The port's timer leaves it alone
 * until the lease ends, and the next reap or process checks it at once if
 * its word moved. A wait claimed once is not offered again: past its
 * lease the timer checks it. Returns how many (0: none is imminent).
 * Errors: -EINVAL (@port or @entries NULL, @max 0, @lease_ns above
 * 100 ms) with GPUAR_E_INVALID_ARGUMENT; -EOPNOTSUPP with
 * GPUAR_E_FEATURE_UNAVAILABLE when the port does not run it; the
 * module's errno. Thread-safe.
 */
int gpuar_port_claim(struct gpuar_port *port, struct gpuar_claim_entry *entries,
		     uint32_t max, uint64_t lease_ns, struct gpuar_error *diag);

/*
 * Reap up to @max records, in completion order. @timeout_ns < 0 blocks
 * until at least one record is there, 0 never blocks, > 0 blocks at most
 * that long. Returns the number of records (>= 1). Errors: -EAGAIN
 * (timeout 0, none ready), -ETIME (timeout expired), -EINTR, -EINVAL
 * (@max 0). The user engine runs while the caller waits. Thread-safe;
 * each record goes to exactly one reaper.
 *
 * Blocking (@timeout_ns != 0), the user engine busy-reads as the module's
 * read() does: the caller sleeps on the port's fd until a flag wait's
 * predicted sleep is nearly over (woken the port's measured wake-up
 * latency early), then checks that wait's word itself in a load loop,
 * so it sees the store at about a spin's latency; one call spins at most
 * the port's busy_read_us (struct gpuar_port_options) in all and then
 * sleeps until the next check. The checks the caller makes this way are
 * counted in gpuar_port_stats' busy_read_checks. A port with a watcher
 * thread does not spin; on a CPU with a hardware word wait (umwait,
 * mwaitx) the caller parks in that instead, within the same busy_read_us
 * budget (a parked CPU stays busy to the OS), and then sleeps on the fd.
 * The kernel engine blocks in the module's read()
 * for an infinite timeout and in its GPUAR_IOC_WAIT_READY for a finite
 * one (a module without GPUAR_FEATURE_WAIT_READY: in poll, with no
 * busy-read), both of which busy-read the same way. On a port with
 * imminent readiness a reap that finds no record claims and watches the
 * imminent waits (see GPUAR_PORT_IMMINENT) within the timeout, or for one
 * lease with a zero timeout (that watch is what the port opted into).
 */
int gpuar_port_reap(struct gpuar_port *port, struct gpuar_record *records,
		    uint32_t max, int64_t timeout_ns);
/* gpuar_port_reap's 1.0 name, until 1.0. */
int gpuar_reap(struct gpuar_port *port, struct gpuar_record *records,
	       uint32_t max, int64_t timeout_ns)
	GPUAR_DEPRECATED_FOR(gpuar_port_reap);

/* -------------------------------------------------------- interrupts */

/*
 * An interrupt ends blocking waits on request: a binding's Ctrl-C, a
 * shutdown. It is an eventfd: gpuar_interrupt_trigger() sets it (from
 * any thread, or a signal handler: it is one write(2), async-signal-
 * safe), and every wait given it returns -EINTR at once while it is set,
 * or as soon as it is set while waiting, until gpuar_interrupt_reset().
 * Its fd (gpuar_interrupt_fd(), close-on-exec, owned by the interrupt) is
 * readable while it is set, for the caller's own event loop.
 * new: 0 or -ENOMEM, eventfd's errno; trigger: 0, -EINVAL.
 * All thread-safe.
 */
struct gpuar_interrupt;

int gpuar_interrupt_new(struct gpuar_interrupt **intr);
void gpuar_interrupt_free(struct gpuar_interrupt *intr);
int gpuar_interrupt_trigger(struct gpuar_interrupt *intr);
void gpuar_interrupt_reset(struct gpuar_interrupt *intr);
bool gpuar_interrupt_triggered(const struct gpuar_interrupt *intr);
int gpuar_interrupt_fd(const struct gpuar_interrupt *intr);

/*
 * gpuar_port_reap() that also returns -EINTR while @intr (NULL: none) is set,
 * on entry or while it waits (both engines: the wait polls the
 * interrupt's fd beside the port's). A user-engine reaper's hardware
 * park and busy-read spin are short (a check interval, busy_read_us) and
 * the interrupt is seen between them.
 */
int gpuar_port_reap_interruptible(struct gpuar_port *port,
				  struct gpuar_record *records, uint32_t max,
				  int64_t timeout_ns,
				  const struct gpuar_interrupt *intr);
/* gpuar_port_reap_interruptible's 1.0 name, until 1.0. */
int gpuar_reap_interruptible(struct gpuar_port *port,
			     struct gpuar_record *records, uint32_t max,
			     int64_t timeout_ns,
			     const struct gpuar_interrupt *intr)
	GPUAR_DEPRECATED_FOR(gpuar_port_reap_interruptible);

/*
 * Port and per-point statistics (struct gpuar_port_stats and
 * struct gpuar_point_stats from <linux/gpuar.h>; set ->point before the
 * point call). Set ->size to sizeof() the struct (0 means its v1 size,
 * GPUAR_*_STATS_SIZE_VER1): the library writes what the caller's size has
 * room for, zeroes fields it does not know, and leaves ->size as it was.
 * Errors: -ENOENT for a point never used (or forgotten: a full table gives
 * its least recently used idle point to a new one), -EINVAL for a size
 * below v1.
 * Thread-safe.
 */
int gpuar_port_stats(struct gpuar_port *port, struct gpuar_port_stats *stats);
int gpuar_point_stats(struct gpuar_port *port, struct gpuar_point_stats *stats);

/*
 * What the library itself counts for a port (the module's counters are
 * gpuar_port_stats'). size as for the options structs: 0 or sizeof();
 * the library writes what the caller's size has room for.
 *
 * syscalls: the system calls the library made for the port in calls on
 * it (gpuar_port_reap, submits, cancels, process, claims, statistics, an
 * io_uring host's reads and waits for it): each ioctl, read, preadv2,
 * write, poll, ppoll, epoll_wait, epoll_ctl, timerfd_settime, prctl and
 * io_uring_enter (a submit, or a completion wait that found none ready).
 * Not counted: a watcher thread's (GPUAR_PORT_WATCHER), the open and
 * close, and memory mappings (lines). A program's own waits on the port's
 * fd (its epoll loop) are its own to count.
 */
#define GPUAR_LIB_STATS_AREA (1U << 0)	/* records come from the shared area */

struct gpuar_port_lib_stats {
	uint32_t size;		/* 0 or sizeof(struct gpuar_port_lib_stats) */
	uint32_t flags;		/* out: GPUAR_LIB_STATS_* */
	uint64_t syscalls;	/* system calls, as above */
	uint64_t area_records;	/* records taken from the area, no call made */
	uint64_t reserved[5];	/* zeroed */
};

/* Fill *@stats (see above). 0, or -EINVAL (NULL, a size below 1.1's). Thread-safe. */
int gpuar_port_lib_stats(struct gpuar_port *port,
			 struct gpuar_port_lib_stats *stats);

/* "immediate", "exact", "late", "fence", "timeout", "cancelled" or "?". */
const char *gpuar_outcome_name(uint32_t outcome);

#ifdef __cplusplus
}
#endif

#include <gpuar/source.h>
#include <gpuar/wait.h>
#include <gpuar/exec.h>
#include <gpuar/soft.h>
#include <gpuar/drm.h>

#endif /* GPUAR_GPUAR_H */
