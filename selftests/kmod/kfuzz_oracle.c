// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * kfuzz's oracle: what it knows of every wait it submitted (by user_data),
 * of every port's lines, of the records read, and what the kernel's own
 * log says. Every thread calls in; one lock keeps it, never held across a
 * call into the module.
 *
 * A wait's user_data is reserved before its submission (SUBMITTING) and
 * settled after it: COMMITTED when the batch was accepted, FREE again when
 * not. Another thread may read its record in between (EARLY, then READ at
 * the settlement; a record of a batch that failed is a finding). Every
 * record names a COMMITTED or SUBMITTING wait of the port it was read
 * from, once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfuzz.h"
#include "port_fixture.h"

enum { ID_FREE, ID_COMMITTED, ID_READ, ID_SUBMITTING, ID_EARLY };

#define WI_PREDICT 1	/* a word wait that predicts: may be raised, claimed */
#define WI_IMM 2	/* its word is in the imminent page, its line known */
#define WI_DEAD_EARLY 4	/* read early, with a dead line's record */

/* Registration followed (gen << 8 | line id); 0 for a fence; or: */
#define WAIT_LINE_ANY UINT32_MAX

struct wait_info {
	__u64 target;
	__u64 addr;		/* its line's address, 0 when not known */
	__u64 backstop_end;	/* the latest a lease of it may end; 0: unknown */
	__u64 lease_end;	/* the lease of the claim that handed it out */
	uint64_t read_at;	/* records read before its own, and its own */
	uint32_t inc;		/* its port's incarnation */
	uint32_t line;		/* the registration followed, see above */
	uint32_t line_id;
	uint8_t state, slot, flags;
};

struct kport ports[PORTS];
uint64_t waits, dead_records, findings;
int stopping;

static pthread_mutex_t orc = PTHREAD_MUTEX_INITIALIZER;
static struct wait_info *ids;
static uint64_t next_id = 1, calls, nread;
static __u64 addr_of[PORTS][LINE_IDS];
static uint64_t imm_gen;
static unsigned int imm_busy;
static int kmsg = -1;

void orc_lock(void)
{
	pthread_mutex_lock(&orc);
}

void orc_unlock(void)
{
	pthread_mutex_unlock(&orc);
}

/* The module's max_points when kfuzz began (-1: unreadable). */
static long long max_points;

void oracle_init(void)
{
	int p;

	max_points = t_param("max_points");
	ids = calloc(MAX_IDS, sizeof(*ids));
	if (!ids) {
		printf("not ok 1 kfuzz # setup\n");
		exit(1);
	}
	for (p = 0; p < PORTS; p++) {
		ports[p].fd = -1;
		ports[p].inc = (uint32_t)p;
		pthread_mutex_init(&ports[p].line_lock, NULL);
		memset(ports[p].page_of, -1, sizeof(ports[p].page_of));
	}
}

/*
 * A port's table holds at most max_points points however many come and
 * go, evicted or refused (kfuzz never changes the parameter, and a port
 * keeps the value it was created with).
 */
void points_check(const struct gpuar_port_stats *st)
{
	if (max_points > 0 && st->points > (unsigned long long)max_points)
		finding("a port with more points than max_points",
			(long)st->points, 0);
}

uint64_t ncalls(void)
{
	return __atomic_load_n(&calls, __ATOMIC_RELAXED);
}

void call_done(void)
{
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
}

/*
 * Findings by kind (@what, a literal): the first FINDING_SHOWN of each
 * are printed with their call number, the rest counted.
 */
#define FINDING_KINDS 32
#define FINDING_SHOWN 3
static struct {
	const char *what;
	uint64_t n, first_call;
} kinds[FINDING_KINDS];
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

void finding(const char *what, long ret, int err)
{
	uint64_t call = ncalls(), n = 0;
	unsigned int k;

	__atomic_add_fetch(&findings, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&kinds_lock);
	for (k = 0; k < FINDING_KINDS && kinds[k].what &&
		    strcmp(kinds[k].what, what); k++)
		;
	if (k < FINDING_KINDS) {
		if (!kinds[k].what) {
			kinds[k].what = what;
			kinds[k].first_call = call;
		}
		n = ++kinds[k].n;
	}
	pthread_mutex_unlock(&kinds_lock);
	if (n <= FINDING_SHOWN) {
		printf("# kfuzz finding at call %llu: %s (ret %ld, %s)\n",
		       (unsigned long long)call, what, ret, strerror(err));
		fflush(stdout);
	}
}

void findings_summary(void)
{
	unsigned int k;

	pthread_mutex_lock(&kinds_lock);
	for (k = 0; k < FINDING_KINDS && kinds[k].what; k++)
		printf("# kfuzz: %llu x %s (first at call %llu)\n",
		       (unsigned long long)kinds[k].n, kinds[k].what,
		       (unsigned long long)kinds[k].first_call);
	pthread_mutex_unlock(&kinds_lock);
}

/* The call returned @ret; 0 or an errno in @ok (0-terminated) is fine. */
void expect_errno(const char *what, long ret, const int *ok)
{
	int err = errno;

	call_done();
	if (ret >= 0)
		return;
	for (; *ok; ok++)
		if (*ok == err)
			return;
	finding(what, ret, err);
}

/* ---------------------------------------------------------------- waits */

/*
 * The next user_data for a wait of port incarnation @inc. The values
 * wrap at MAX_IDS, skipping 0 and any whose record is yet to come.
 */
static __u64 fresh_id(uint32_t inc)
{
	struct wait_info *wi;
	__u64 id;

	do
		id = next_id++ % MAX_IDS;
	while (!id || (ids[id].state != ID_FREE && ids[id].state != ID_READ));
	wi = &ids[id];
	memset(wi, 0, sizeof(*wi));
	wi->state = ID_SUBMITTING;
	wi->inc = inc;
	return id;
}

/* A user_data handed out lately (cancel's pick). */
__u64 recent_id(void)
{
	__u64 id;

	orc_lock();
	id = next_id > 1 ? (next_id - 1 - below(64)) % MAX_IDS : 0;
	orc_unlock();
	return id;
}

static bool port_live(uint32_t inc)
{
	return ports[inc % PORTS].inc == inc;
}

/*
 * The last line events of each port slot, printed with a finding about
 * lines: call, thread, incarnation, what (R register, r read-only
 * register, U unregister, u racer's unregister, M page remapped, O port
 * opened, C closed), id (M: the page), answer (-errno; R: the page).
 */
#define EVENTS 128
static struct line_event {
	uint64_t call;
	uint32_t inc, id;
	int tid, ret;
	char what;
} events[PORTS][EVENTS];
static unsigned int nevents[PORTS];
__thread int kfuzz_tid;

void line_event(int p, char what, __u32 id, int ret)
{
	struct line_event *e;

	orc_lock();
	e = &events[p][nevents[p]++ % EVENTS];
	e->call = ncalls();
	e->inc = ports[p].inc;
	e->tid = kfuzz_tid;
	e->what = what;
	e->id = id;
	e->ret = ret;
	orc_unlock();
}

static void event_print(const struct line_event *e)
{
	printf("#   call %llu thread %d incarnation %u %c id %u -> %d\n",
	       (unsigned long long)e->call, e->tid, e->inc, e->what, e->id,
	       e->ret);
}

/* Line @id of port @p vanished: what kfuzz did to it, what fdinfo says. */
void line_vanished(int p, int fd, __u32 id, const char *what)
{
	static int told;
	unsigned int i, n;
	char path[64], buf[512];
	FILE *f;

	if (__atomic_fetch_add(&told, 1, __ATOMIC_RELAXED) < 2) {
		orc_lock();
		n = nevents[p];
		printf("# kfuzz: line %u of port %d (incarnation %u, %u lines known) vanished; its events:\n",
		       id, p, ports[p].inc, ports[p].nlines);
		printf("#   known:");
		for (i = 0; i < ports[p].nlines; i++)
			printf(" %u", ports[p].lines[i]);
		printf("\n");
		for (i = n > EVENTS ? n - EVENTS : 0; i < n; i++)
			event_print(&events[p][i % EVENTS]);
		orc_unlock();
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "lines:", 6) || !strncmp(buf, "port_id", 7))
				printf("#   fdinfo %s", buf);
		if (f)
			fclose(f);
	}
	finding(what, id, ENOENT);
}

/* Did kfuzz register line @id on @kp (and not unregister it)? */
static bool known_locked(const struct kport *kp, __u32 id)
{
	unsigned int i;

	for (i = 0; i < kp->nlines; i++)
		if (kp->lines[i] == id)
			return true;
	return false;
}

void words_reserve(const struct pslot *s, struct gpuar_word_wait *w, int n,
		   struct line_snap *snap)
{
	const struct kport *kp = &ports[s->p];
	int i;

	orc_lock();
	snap->inc = s->inc;
	snap->seq = kp->line_seq;
	snap->steady = !kp->line_busy && kp->inc == s->inc;
	for (i = 0; i < n; i++) {
		struct wait_info *wi;
		__u32 line = w[i].line;

		w[i].user_data = fresh_id(s->inc);
		wi = &ids[w[i].user_data];
		wi->target = w[i].target;
		wi->slot = (uint8_t)w[i].slot;
		wi->line_id = line;
		if (w[i].plan.flags & GPUAR_PLAN_PREDICT)
			wi->flags |= WI_PREDICT;
		if (snap->steady && line < LINE_IDS && kp->page_of[line] >= 0) {
			wi->addr = addr_of[s->p][line];
			if (kp->page_of[line] == IMM_PAGE)
				wi->flags |= WI_IMM;
		}
	}
	orc_unlock();
}

/* What the oracle knew of a dead line's record it did not expect. */
static void dead_line_finding(__u64 id)
{
	static unsigned int told;
	const struct wait_info *wi = &ids[id];
	const struct kport *kp = &ports[wi->inc % PORTS];
	uint32_t line = wi->line & 0xff, gen = wi->line >> 8;

	if (++told <= 3)
		printf("# kfuzz: wait %llu: port %u (incarnation %u), line %u registration %u at %#llx (mem %p); now registration %u in page %d, dead %#llx\n",
		       (unsigned long long)id, wi->inc % PORTS, wi->inc, line,
		       gen, (unsigned long long)wi->addr, (void *)mem,
		       kp->gen[line], kp->page_of[line],
		       (unsigned long long)kp->dead[line]);
	if (told == 1) {
		unsigned int i, n = nevents[wi->inc % PORTS];

		for (i = n > EVENTS ? n - EVENTS : 0; i < n; i++) {
			const struct line_event *e =
				&events[wi->inc % PORTS][i % EVENTS];

			if (e->id == line || e->what == 'M' ||
			    e->what == 'C' || e->what == 'O')
				event_print(e);
		}
	}
	finding("dead line's record, its line alive", (long)id, 0);
}

/* May wait @id end with a dead line's record? Oracle lock held. */
static bool may_see_dead_line(__u64 id)
{
	const struct wait_info *wi = &ids[id];
	const struct kport *kp = &ports[wi->inc % PORTS];
	uint32_t line = wi->line & 0xff, gen = wi->line >> 8;

	if (wi->line == WAIT_LINE_ANY || !port_live(wi->inc))
		return true;
	if (!wi->line)
		return false;	/* a fence wait */
	if (((kp->gen[line] - gen) & 0xffffff) >= GENS_KEPT)
		return true;	/* too old to tell */
	return kp->dead[line] & (1ULL << (gen % GENS_KEPT));
}

/*
 * Wait @id's submission on @s ended: committed or not. A record read
 * meanwhile (EARLY) is checked now that the wait is known.
 */
static void settle_one(const struct pslot *s, __u64 id, bool committed)
{
	struct wait_info *wi = &ids[id];

	if (!committed) {
		if (wi->state == ID_EARLY)
			finding("record of a wait whose batch failed", (long)id,
				0);
		wi->state = ID_FREE;
		return;
	}
	if (wi->state == ID_EARLY) {
		wi->state = ID_READ;
		if ((wi->flags & WI_DEAD_EARLY) && !may_see_dead_line(id))
			dead_line_finding(id);
		return;
	}
	wi->state = ID_COMMITTED;
	if (port_live(s->inc))
		ports[s->p].unread++;
}

/*
 * A word batch on @s answered @ret (entries @w, index @idx when it
 * failed). A line kfuzz registered, named by a batch during which no
 * line changed, is there: ENOENT for it is a finding.
 */
void words_settle(const struct pslot *s, const struct gpuar_word_wait *w,
		  int n, int ret, __u32 idx, const struct line_snap *snap)
{
	const struct kport *kp = &ports[s->p];
	int err = errno;
	__u64 after = mono_ns();
	bool steady, bad;
	int i;

	orc_lock();
	steady = snap->steady && kp->line_seq == snap->seq &&
		 kp->inc == s->inc;
	bad = ret < 0 && err == ENOENT && steady && idx < (__u32)n &&
	      known_locked(kp, w[idx].line);
	for (i = 0; ret == n && i < n; i++) {
		struct wait_info *wi = &ids[w[i].user_data];
		__u32 line = w[i].line;

		wi->backstop_end = after + (w[i].plan.backstop_ns ?:
					    GPUAR_PLAN_BACKSTOP_NS_MAX);
		if (!steady) {
			wi->line = WAIT_LINE_ANY;
			wi->addr = 0;
			wi->flags &= ~WI_IMM;
		} else if (line >= LINE_IDS || kp->page_of[line] < 0) {
			wi->line = WAIT_LINE_ANY;
		} else {
			wi->line = kp->gen[line] << 8 | line;
		}
	}
	for (i = 0; i < n; i++)
		settle_one(s, w[i].user_data, ret == n);
	if (ret == n)
		waits += (uint64_t)n;
	orc_unlock();
	if (bad)
		line_vanished(s->p, s->fd, w[idx].line,
			      "a line kfuzz registered is gone (SUBMIT_WORD ENOENT)");
}

void fences_reserve(const struct pslot *s, struct gpuar_fence_wait *f, int n)
{
	int i;

	orc_lock();
	for (i = 0; i < n; i++)
		f[i].user_data = fresh_id(s->inc);
	orc_unlock();
}

void fences_settle(const struct pslot *s, const struct gpuar_fence_wait *f,
		   int n, int ret)
{
	int i;

	orc_lock();
	for (i = 0; i < n; i++) {
		ids[f[i].user_data].line = 0;	/* a fence: no line */
		settle_one(s, f[i].user_data, ret == n);
	}
	if (ret == n)
		waits += (uint64_t)n;
	orc_unlock();
}

/* @n records read from a file of port incarnation @inc. */
void records_account(uint32_t inc, const struct gpuar_record *r, int n)
{
	int i;

	orc_lock();
	/* A scribbled port's records are the scribbler's (kfuzz_area.c). */
	if (inc_scribbled(inc))
		n = 0;
	for (i = 0; i < n; i++) {
		__u64 id = r[i].user_data;
		struct wait_info *wi = id < MAX_IDS ? &ids[id] : NULL;
		bool dead = r[i].outcome == GPUAR_OUTCOME_CANCELLED &&
			    r[i].status == -EFAULT;

		if (!wi || wi->inc != inc ||
		    (wi->state != ID_COMMITTED && wi->state != ID_SUBMITTING)) {
			finding(wi && wi->inc == inc &&
				(wi->state == ID_READ || wi->state == ID_EARLY) ?
				"record read twice" : "record of no wait",
				(long)id, 0);
			continue;
		}
		wi->read_at = ++nread;
		if (dead)
			dead_records++;
		if (wi->state == ID_SUBMITTING) {
			wi->state = ID_EARLY;
			if (dead)
				wi->flags |= WI_DEAD_EARLY;
			continue;
		}
		wi->state = ID_READ;
		if (port_live(inc))
			ports[inc % PORTS].unread--;
		if (dead && !may_see_dead_line(id))
			dead_line_finding(id);
	}
	orc_unlock();
}

uint64_t records_read(void)
{
	uint64_t n;

	orc_lock();
	n = nread;
	orc_unlock();
	return n;
}

/*
 * Port @p's fd was closed: what was committed and unread is gone, and the
 * incarnation with it (a dup or an io_uring read that outlives the fd
 * reads records of a port no longer followed: no line of it is known).
 */
void port_closed(int p)
{
	struct kport *kp = &ports[p];
	int i;

	orc_lock();
	kp->inc += PORTS;
	kp->unread = 0;
	kp->nlines = 0;
	for (i = 0; i < LINE_IDS; i++)
		kp->page_of[i] = -1;
	orc_unlock();
}

/*
 * Incarnations whose area was scribbled over, by a bit each (the
 * incarnation's low bits: one that wraps onto another's only escapes
 * some checks). Out of the exactly-once count from the scribble on.
 */
#define SCRIBBLED_BITS (1u << 22)
static uint8_t scribbled[SCRIBBLED_BITS / 8];

void port_scribbled(uint32_t inc)
{
	uint32_t b = inc % SCRIBBLED_BITS;

	orc_lock();
	scribbled[b / 8] |= (uint8_t)(1u << (b % 8));
	orc_unlock();
}

/* Oracle lock held. */
bool inc_scribbled(uint32_t inc)
{
	uint32_t b = inc % SCRIBBLED_BITS;

	return scribbled[b / 8] & (1u << (b % 8));
}

void port_opened(int p, int fd, __u32 flags)
{
	struct kport *kp = &ports[p];

	orc_lock();
	kp->inc += PORTS;
	kp->imminent = flags & GPUAR_PORT_IMMINENT;
	kp->nonblock = flags & GPUAR_PORT_NONBLOCK;
	kp->nlines = 0;
	kp->unread = 0;
	orc_unlock();
	kp->fd = fd;
}

/* ---------------------------------------------------------------- lines */

void lines_lock(int p)
{
	pthread_mutex_lock(&ports[p].line_lock);
}

void lines_unlock(int p)
{
	pthread_mutex_unlock(&ports[p].line_lock);
}

/*
 * A call that may change port @p's lines begins. True when it is the only
 * one, and line @id (0: none) is one kfuzz registered there; *@seq
 * (if given) then says when, for lines_end().
 */
bool lines_begin(int p, __u32 id, uint64_t *seq)
{
	struct kport *kp = &ports[p];
	bool alone;

	orc_lock();
	alone = !kp->line_busy++ && (!id || known_locked(kp, id));
	kp->line_seq++;
	if (seq)
		*seq = kp->line_seq;
	orc_unlock();
	return alone;
}

/*
 * The call ends. True when no other began or ended since its
 * lines_begin() said *@seq: its answer is about the lines kfuzz knows.
 */
bool lines_end(int p, uint64_t seq)
{
	struct kport *kp = &ports[p];
	bool alone;

	orc_lock();
	alone = kp->line_seq == seq;
	kp->line_busy--;
	kp->line_seq++;
	orc_unlock();
	return alone;
}

void line_registered(int p, __u32 id, __u64 addr)
{
	struct kport *kp = &ports[p];
	uint64_t off = addr - (uint64_t)(uintptr_t)mem;

	orc_lock();
	if (kp->nlines < MAX_LINES)
		kp->lines[kp->nlines++] = id;
	if (id < LINE_IDS) {
		kp->gen[id]++;
		kp->dead[id] &= ~(1ULL << (kp->gen[id] % GENS_KEPT));
		kp->page_of[id] = off < MEM_PAGES * (uint64_t)page ?
				  (int)(off / (uint64_t)page) : -1;
		addr_of[p][id] = addr;
	}
	orc_unlock();
}

/* Line @id of port @p is gone: true if kfuzz had seen it registered. */
bool line_unregistered(int p, __u32 id)
{
	struct kport *kp = &ports[p];
	bool known = false;
	unsigned int i;

	orc_lock();
	if (id < LINE_IDS)
		kp->page_of[id] = -1;
	for (i = 0; i < kp->nlines && !known; i++)
		if (kp->lines[i] == id) {
			kp->lines[i] = kp->lines[--kp->nlines];
			known = true;
		}
	orc_unlock();
	return known;
}

/* Page @k of the lines is replaced: every line registered in it dies. */
void page_dropped(unsigned int k)
{
	__u32 id;
	int p;

	orc_lock();
	for (p = 0; p < PORTS; p++)
		for (id = 0; id < LINE_IDS; id++)
			if (ports[p].page_of[id] == (int)k)
				ports[p].dead[id] |=
					1ULL << (ports[p].gen[id] % GENS_KEPT);
	orc_unlock();
}

/*
 * One of port @p's lines (in page @page_want, or anywhere when it is
 * negative), with its address: false when it has none.
 */
bool pick_line(int p, int page_want, __u32 *id, __u64 *addr)
{
	const struct kport *kp = &ports[p];
	__u32 cand[MAX_LINES];
	unsigned int i, n = 0;

	orc_lock();
	for (i = 0; i < kp->nlines; i++) {
		__u32 l = kp->lines[i];

		if (page_want < 0 ||
		    (l < LINE_IDS && kp->page_of[l] == page_want))
			cand[n++] = l;
	}
	if (n) {
		*id = cand[below(n)];
		*addr = *id < LINE_IDS && kp->page_of[*id] >= 0 ?
			addr_of[p][*id] : 0;
	}
	orc_unlock();
	return n;
}

/* The id a registration on port @p would likely get: the lowest free. */
__u32 next_line_id(int p)
{
	const struct kport *kp = &ports[p];
	__u32 id;
	unsigned int i;

	orc_lock();
	for (id = 1;; id++) {
		for (i = 0; i < kp->nlines && kp->lines[i] != id; i++)
			;
		if (i == kp->nlines)
			break;
	}
	orc_unlock();
	return id;
}

/* ------------------------------------------------------ the imminent page */

void imm_begin(void)
{
	__atomic_add_fetch(&imm_busy, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&imm_gen, 1, __ATOMIC_SEQ_CST);
}

void imm_end(void)
{
	__atomic_add_fetch(&imm_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&imm_busy, 1, __ATOMIC_SEQ_CST);
}

void imm_snap(struct imm_snap *s)
{
	s->gen = __atomic_load_n(&imm_gen, __ATOMIC_SEQ_CST);
	s->busy = __atomic_load_n(&imm_busy, __ATOMIC_SEQ_CST);
}

/* No store into the imminent page since @s was taken, nor then. */
bool imm_steady(const struct imm_snap *s)
{
	return !s->busy &&
	       __atomic_load_n(&imm_gen, __ATOMIC_SEQ_CST) == s->gen;
}

bool in_imm_page(__u64 addr)
{
	__u64 base = (__u64)(uintptr_t)mem + IMM_PAGE * (__u64)page;

	return addr >= base && addr < base + (__u64)page;
}

/* ---------------------------------------------------------------- claims */

/*
 * The @n entries a CLAIM on cc->s wrote: each a wait of that port,
 * committed (or being committed) and not ended before the claim began, a
 * wait that predicts (only those are raised), described as it was
 * submitted, leased no later than its backstop, not handed out before
 * with a lease still running, and, where its word is one that only
 * kfuzz's threads store, none stored during the claim and its line's
 * page was never dropped, not done.
 */
void claim_account(const struct claim_call *cc, int n)
{
	const char *at = (const char *)(uintptr_t)cc->c->entries;
	size_t esize = cc->c->entry_size;
	int i;

	orc_lock();
	for (i = 0; i < n; i++, at += esize) {
		struct gpuar_claim_entry e;
		struct wait_info *wi;
		size_t k;

		memcpy(&e, at, sizeof(e));
		for (k = sizeof(e); k < esize && !at[k]; k++)
			;
		if (k < esize)
			finding("CLAIM left an entry's tail unzeroed", (long)k,
				0);
		wi = e.user_data < MAX_IDS ? &ids[e.user_data] : NULL;
		if (!wi || wi->inc != cc->s->inc || wi->state == ID_FREE) {
			finding("CLAIM handed out a wait not of this port",
				(long)e.user_data, 0);
			continue;
		}
		if ((wi->state == ID_READ || wi->state == ID_EARLY) &&
		    wi->read_at <= cc->read_before)
			finding("CLAIM handed out a wait that had ended",
				(long)e.user_data, 0);
		if (!(wi->flags & WI_PREDICT))
			finding("CLAIM handed out a wait that is never raised",
				(long)e.user_data, 0);
		if (e.line != wi->line_id || e.slot != wi->slot ||
		    e.target != wi->target || (wi->addr && e.addr != wi->addr))
			finding("CLAIM entry is not the wait submitted",
				(long)e.user_data, 0);
		if (wi->backstop_end && e.lease_end_ns > wi->backstop_end)
			finding("CLAIM leased a wait past its backstop",
				(long)e.user_data, 0);
		if (wi->lease_end > cc->t_after)
			finding("CLAIM handed out a wait again within its lease",
				(long)e.user_data, 0);
		wi->lease_end = e.lease_end_ns;
		/*
		 * Not where its line's page was dropped: the line dies when
		 * the line watch's verify work runs, and until then the
		 * module reads the page it pinned while kfuzz's stores land
		 * in the new one (a claim handed out such waits on 7.x).
		 */
		if ((wi->flags & WI_IMM) && e.slot < GPUAR_LINE_SLOTS &&
		    in_imm_page(e.addr) && imm_steady(&cc->imm) &&
		    !may_see_dead_line(e.user_data)) {
			__u64 word = __atomic_load_n((__u64 *)(uintptr_t)e.addr +
						     e.slot, __ATOMIC_ACQUIRE);

			if ((__s64)(word - e.target) >= 0)
				finding("CLAIM handed out a wait whose word was done",
					(long)e.user_data, 0);
		}
	}
	orc_unlock();
}

/* ------------------------------------------------------ the kernel's log */

/*
 * /dev/kmsg from the end, when there is one to read: the kernel's
 * reports (those the VM runner fails a run on) are findings, with the
 * call count at which kfuzz saw them. Not there (no permission): silent.
 */
void kmsg_open(void)
{
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg < 0)
		printf("# kfuzz: no /dev/kmsg (%s): the kernel's log is not watched\n",
		       strerror(errno));
	else
		lseek(kmsg, 0, SEEK_END);
}

static const char *const kernel_reports[] = {
	"BUG:", "WARNING:", "Oops", "general protection", "Kernel panic",
	"kernel BUG at", "possible circular locking",
	"possible recursive locking", "inconsistent lock state",
	"sleeping function called from invalid context", "refcount_t:",
	"KASAN", "UBSAN", "blocked for more than", "soft lockup",
	"hard LOCKUP", "detected stall", "self-detected stall",
};

void kmsg_check(void)
{
	static unsigned int said;
	char buf[1024];
	unsigned int i;
	ssize_t n;

	if (kmsg < 0)
		return;
	for (;;) {
		const char *msg;

		n = read(kmsg, buf, sizeof(buf) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten meanwhile: go on */
		if (n <= 0)
			return;
		buf[n] = 0;
		msg = strchr(buf, ';');
		msg = msg ? msg + 1 : buf;
		buf[strcspn(buf, "\n")] = 0;
		for (i = 0; i < sizeof(kernel_reports) / sizeof(*kernel_reports);
		     i++)
			if (strstr(msg, kernel_reports[i]))
				break;
		if (i == sizeof(kernel_reports) / sizeof(*kernel_reports))
			continue;
		if (++said <= 16)
			printf("# kfuzz: the kernel said: %s\n", msg);
		finding("a report in the kernel's log", 0, 0);
	}
}
