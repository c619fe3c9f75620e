/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * kfuzz's parts, shared by its files (kfuzz.c has the overview):
 *   kfuzz.c           options, the threads, the mix and its pace, the end
 *   kfuzz_oracle.c    what the oracle knows: the waits by user_data, the
 *                     ports' lines, the records read, the kernel's log
 *   kfuzz_ops.c       the calls every thread makes on a port
 *   kfuzz_imminent.c  imminent waits, CLAIM, WAIT_READY, blocking reads
 *   kfuzz_race.c      the racers' own calls: io_uring reads, a dup'd fd,
 *                     a line register that faults against an unregister
 *   kfuzz_area.c      the area: ports with one, its ring reaped by swap,
 *                     scribbling over it
 */
#ifndef GPUAR_SELFTEST_KFUZZ_H
#define GPUAR_SELFTEST_KFUZZ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <liburing.h>
#include <linux/gpuar.h>

#define PORTS 4
#define LINE_PAGES 4		/* pages of lines the device thread stores into */
#define SHM_PAGE (LINE_PAGES - 1)	/* the last of them is shmem */
#define IMM_PAGE LINE_PAGES	/* then one whose words only kfuzz's threads store */
#define MEM_PAGES (LINE_PAGES + 1)
#define MAX_LINES 32		/* per port, of our own bookkeeping */
#define MAX_IDS (1u << 21)	/* user_data values one run hands out */
#define BATCH_MAX 48
#define IMM_BATCH_MAX 200	/* more than one claim may hand out */
#define FENCES 8
#define LINE_IDS 256		/* line ids whose registrations the oracle follows */
#define GENS_KEPT 64		/* registrations of one id it remembers */
#define RACERS_MAX 4
/* The most one CLAIM hands out (the rest stay raised for the next). */
#define CLAIM_CHUNK 64

/* ---------------------------------------------------------- randomness */

/*
 * Each call draws from its own generator, seeded from the run's seed, the
 * thread's number and the call's number in that thread, and the device
 * thread from one of its own: every thread's calls replay from the seed,
 * whatever the kernel answered to the calls before; what they meet in the
 * kernel depends on how the scheduler interleaves the threads.
 */
extern __thread uint64_t rng_state;
uint64_t splitmix(uint64_t *state);
uint64_t rnd(void);
uint32_t below(uint32_t n);
bool chance(unsigned int pct);

/* ------------------------------------------------------------ the ports */

struct kport {
	/*
	 * The fd: written by the main thread only, with use held for
	 * writing; every call on it holds use for reading, so an fd number
	 * is never closed and reused under a call.
	 */
	int fd;			/* -1: none */
	pthread_rwlock_t use;
	/* The rest under the oracle's lock. */
	uint32_t inc;		/* incarnation; inc % PORTS is the slot */
	bool imminent, nonblock;
	/*
	 * The area's mapping (GPUAR_PORT_AREA), NULL without: made and
	 * unmapped by the main thread with use held for writing, like fd.
	 */
	struct gpuar_area *area;
	size_t area_len;
	uint64_t unread;	/* committed waits whose record is not read */
	__u32 lines[MAX_LINES];
	unsigned int nlines;
	/*
	 * By line id, for ids registered in the line pages: how many times
	 * it was registered (its registrations are numbered from 1, and
	 * never renumbered, even across ports in this slot), in which page
	 * its current registration lives (-1: none, or outside the line
	 * pages), and which of the last GENS_KEPT registrations died.
	 */
	uint32_t gen[LINE_IDS];
	int page_of[LINE_IDS];
	uint64_t dead[LINE_IDS];
	/*
	 * Calls that change the port's lines (register, unregister, a page
	 * remapped) bump line_seq at their start and end and are counted in
	 * line_busy meanwhile: a submission that overlapped one cannot tell
	 * which registration its line id named.
	 */
	uint64_t line_seq;
	unsigned int line_busy;
	/*
	 * Held across a call that changes the lines kfuzz knows and its
	 * bookkeeping of the answer, so the bookkeeping follows the
	 * kernel's order (an unregister answered between a register's
	 * answer and its bookkeeping would leave a line kfuzz thinks is
	 * there). Not by the read-only register, which changes none and
	 * must race the unregisters.
	 */
	pthread_mutex_t line_lock;
	__u32 race_hint;	/* the id a faulting register will likely get */
};

extern struct kport ports[PORTS];
extern __u64 *mem;		/* MEM_PAGES pages of lines */
extern long page;
extern int fences[FENCES];	/* read by every thread, changed by main */

/* A port as one call sees it: its fd held for the call. */
struct pslot {
	int p, fd;
	uint32_t inc;
	bool imminent, nonblock;
	struct gpuar_area *area;	/* NULL: none, or not for this call */
	size_t area_len;
};

/* ------------------------------------------------------------ a thread */

struct kctx {
	int tid;			/* 0: the main thread */
	struct io_uring ring;
	bool ring_ok;
	struct {			/* one io_uring read in flight */
		bool on;
		int fd;			/* a dup of the port's, the read's own */
		int cancel_res;		/* what the last cancel of it answered */
		uint32_t inc;
		size_t len;
		struct gpuar_record buf[16];
	} rd;
	timer_t alarm;
	bool alarm_ok;
	int idle_fd;			/* a port of its own that never has waits */
	uint64_t draws;			/* calls drawn so far */
	/* The call it is in (OPS: none) and since when, for the watchdog. */
	unsigned int op;
	__u64 since;
};

/* ----------------------------------------------------------- the oracle */

extern uint64_t waits, dead_records, findings;
extern int stopping;		/* the calls end: threads finish theirs */

void oracle_init(void);
void orc_lock(void);
void orc_unlock(void);
uint64_t ncalls(void);
void call_done(void);
void finding(const char *what, long ret, int err);
void points_check(const struct gpuar_port_stats *st);
void findings_summary(void);
void expect_errno(const char *what, long ret, const int *ok);

/* Waits: user_data reserved before a submission, settled after it. */
struct line_snap {
	uint32_t inc;
	uint64_t seq;
	bool steady;
};
void words_reserve(const struct pslot *s, struct gpuar_word_wait *w, int n,
		   struct line_snap *snap);
void words_settle(const struct pslot *s, const struct gpuar_word_wait *w,
		  int n, int ret, __u32 idx, const struct line_snap *snap);
void fences_reserve(const struct pslot *s, struct gpuar_fence_wait *f, int n);
void fences_settle(const struct pslot *s, const struct gpuar_fence_wait *f,
		   int n, int ret);
void records_account(uint32_t inc, const struct gpuar_record *r, int n);
void port_closed(int p);
void port_opened(int p, int fd, __u32 flags);
void port_scribbled(uint32_t inc);
bool inc_scribbled(uint32_t inc);
__u64 recent_id(void);

/* Lines: each change between lines_begin and lines_end. */
bool lines_begin(int p, __u32 id, uint64_t *seq);
bool lines_end(int p, uint64_t seq);
void lines_lock(int p);
void lines_unlock(int p);
void line_registered(int p, __u32 id, __u64 addr);
bool line_unregistered(int p, __u32 id);
extern __thread int kfuzz_tid;
void line_event(int p, char what, __u32 id, int ret);
void line_vanished(int p, int fd, __u32 id, const char *what);
void page_dropped(unsigned int k);
bool pick_line(int p, int page_want, __u32 *id, __u64 *addr);
__u32 next_line_id(int p);

/* Stores into the imminent page, seen by a claim that checks words. */
struct imm_snap {
	uint64_t gen;
	unsigned int busy;
};
void imm_begin(void);
void imm_end(void);
void imm_snap(struct imm_snap *s);
bool imm_steady(const struct imm_snap *s);
bool in_imm_page(__u64 addr);

/* A CLAIM's answer, entry by entry. */
struct claim_call {
	const struct pslot *s;
	const struct gpuar_claim *c;
	uint64_t read_before;	/* records read when it began */
	__u64 t_after;		/* the clock when it returned */
	struct imm_snap imm;
};
uint64_t records_read(void);
void claim_account(const struct claim_call *cc, int n);

/* The kernel's log: a report there is a finding. */
void kmsg_open(void);
void kmsg_check(void);

/* ----------------------------------------------------------- the calls */

/* kfuzz_ops.c */
void op_register(const struct pslot *s);
void op_unregister(const struct pslot *s);
void op_submit_words(const struct pslot *s);
void op_submit_fences(const struct pslot *s);
void op_cancel(const struct pslot *s);
void op_stats(const struct pslot *s);
void op_read(const struct pslot *s);
void op_poll(const struct pslot *s);
struct gpuar_plan random_plan(void);

/* kfuzz_imminent.c */
void alarm_setup(struct kctx *c);
void op_imm_submit(const struct pslot *s);
void op_imm_store(void);
void op_claim(const struct pslot *s);
void op_wait_ready(struct kctx *c, const struct pslot *s);
void op_read_block(struct kctx *c, const struct pslot *s);
void imminent_summary(void);

/* kfuzz_area.c */
int area_port_create(__u32 flags);
struct gpuar_area *area_map(int fd, bool has_area, size_t *len);
void op_area_reap(const struct pslot *s);
void op_scribble(const struct pslot *s);
void area_summary(void);

/* kfuzz_race.c */
void ro_args_map(void);
void op_register_ro(const struct pslot *s);
void op_unreg_hint(const struct pslot *s);
void op_uring(struct kctx *c, const struct pslot *s);
void uring_finish(struct kctx *c);
void race_summary(void);

#endif /* GPUAR_SELFTEST_KFUZZ_H */
