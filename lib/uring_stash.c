// SPDX-License-Identifier: MIT
/*
 * The io_uring host's multishot read buffers and its stash: the ring of
 * provided buffers the kernel fills, and the records delivered but not
 * yet handed out, in order (see uring_host.c).
 */
#include "uring_host.h"

#include <errno.h>
#include <stdlib.h>

static bool kernel_has_multishot_read(struct io_uring *ring)
{
	struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
	bool ok;

	if (!probe)
		return false;
	ok = io_uring_opcode_supported(probe, GPUAR_IORING_OP_READ_MULTISHOT);
	io_uring_free_probe(probe);
	return ok;
}

void uh_ms_setup(struct gpuar_uring_host *h)
{
	struct io_uring_buf_reg reg = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t ring_bytes = MS_BUFS * sizeof(struct io_uring_buf);
	int i;

	if (!kernel_has_multishot_read(&h->ring))
		return;
	if (posix_memalign((void **)&h->br, page, ring_bytes < page ? page : ring_bytes))
		return;
	h->bufs = malloc(MS_BUFS * MS_BUF_BYTES);
	if (!h->bufs)
		goto fail;
	reg.ring_addr = (u64)(uintptr_t)h->br;
	reg.ring_entries = MS_BUFS;
	reg.bgid = MS_BGID;
	if (io_uring_register_buf_ring(&h->ring, &reg, 0) < 0)
		goto fail;
	io_uring_buf_ring_init(h->br);
	for (i = 0; i < MS_BUFS; i++)
		io_uring_buf_ring_add(h->br, (char *)h->bufs + (size_t)i * MS_BUF_BYTES,
				      MS_BUF_BYTES, (unsigned short)i,
				      io_uring_buf_ring_mask(MS_BUFS), i);
	io_uring_buf_ring_advance(h->br, MS_BUFS);
	h->ms_possible = true;
	return;
fail:
	free(h->bufs);
	free(h->br);
	h->bufs = NULL;
	h->br = NULL;
}

void uh_stash_add(struct gpuar_uring_host *h, const struct gpuar_record *r,
		  u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		h->stash[(h->stash_head + h->stash_len) % STASH_RECORDS] = r[i];
		h->stash_len++;
	}
}

/*
 * Room for records that do not come from the multishot read's buffers,
 * so that the stash keeps room for every buffer the kernel holds.
 */
u32 uh_stash_room(const struct gpuar_uring_host *h)
{
	return h->stash_len < STASH_RECYCLE_MAX ? STASH_RECYCLE_MAX - h->stash_len : 0;
}

/* Give held buffers back to the kernel while the stash has room (locked). */
void uh_recycle(struct gpuar_uring_host *h)
{
	u32 n = 0;

	while (h->nheld && h->stash_len <= STASH_RECYCLE_MAX) {
		unsigned short bid = h->held[--h->nheld];

		io_uring_buf_ring_add(h->br, (char *)h->bufs + (size_t)bid * MS_BUF_BYTES,
				      MS_BUF_BYTES, bid,
				      io_uring_buf_ring_mask(MS_BUFS), (int)n++);
	}
	if (n)
		io_uring_buf_ring_advance(h->br, (int)n);
}

u32 uh_unstash(struct gpuar_uring_host *h, struct gpuar_record *out, u32 max)
{
	u32 n = 0;

	pthread_mutex_lock(&h->lock);
	while (n < max && h->stash_len) {
		out[n++] = h->stash[h->stash_head];
		h->stash_head = (h->stash_head + 1) % STASH_RECORDS;
		h->stash_len--;
	}
	uh_recycle(h);
	pthread_mutex_unlock(&h->lock);
	h->st.records += n;
	return n;
}

/* The records of a multishot completion's buffer, or NULL. */
static const struct gpuar_record *ms_records(const struct gpuar_uring_host *h,
					     const struct io_uring_cqe *cqe, u32 *n)
{
	unsigned int bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;

	if (cqe->res <= 0 || !(cqe->flags & IORING_CQE_F_BUFFER) || bid >= MS_BUFS)
		return NULL;
	*n = (u32)cqe->res / sizeof(struct gpuar_record);
	return (const void *)((char *)h->bufs + (size_t)bid * MS_BUF_BYTES);
}

/* A multishot completion: stash its records, give its buffer back (locked). */
static void ms_complete(struct gpuar_uring_host *h, const struct io_uring_cqe *cqe)
{
	const struct gpuar_record *r;
	u32 n;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		h->ms_armed = false;	/* ended (error, ENOBUFS): re-armed later */
	if (cqe->res == -EINVAL || cqe->res == -EOPNOTSUPP) {
		h->ms_possible = false;	/* refused: one-shot reads from now on */
		h->st.fallbacks++;
		return;
	}
	r = ms_records(h, cqe, &n);
	if (!r)
		return;
	uh_stash_add(h, r, n);	/* fits: see STASH_RECYCLE_MAX */
	h->st.reads++;
	h->st.multishot++;
	h->held[h->nheld++] = (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	uh_recycle(h);
}

/*
 * Done with a completion: note what it ends (an op without more to come),
 * stash the multishot read's records, and move the queue's head, under the
 * lock that uh_host_holds() takes.
 */
void uh_cqe_done(struct gpuar_uring_host *h, struct io_uring_cqe *cqe)
{
	bool more = cqe->flags & IORING_CQE_F_MORE;

	pthread_mutex_lock(&h->lock);
	switch (io_uring_cqe_get_data64(cqe)) {
	case TAG_MULTISHOT:
		ms_complete(h, cqe);
		break;
	case TAG_PRI:
		h->pri_armed &= more;
		break;
	case TAG_POLL:
		h->pollin_armed &= more;
		break;
	case TAG_READ:
		h->rd_live = false;
		break;
	}
	io_uring_cqe_seen(&h->ring, cqe);
	pthread_mutex_unlock(&h->lock);
}

static bool completed(const struct gpuar_record *r, u64 user_data)
{
	return r->user_data == user_data && r->outcome != GPUAR_OUTCOME_CANCELLED;
}

/*
 * Whether the host holds a record of @user_data, other than a
 * cancellation, that it has not handed out: in the stash, or delivered by
 * the multishot read on the port's fd and not yet handled. Any thread.
 */
bool uh_host_holds(struct gpuar_uring_host *h, u64 user_data)
{
	const struct gpuar_record *r;
	struct io_uring_cqe *cqe;
	unsigned int head;
	bool found = false;
	u32 i, n;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->stash_len && !found; i++)
		found = completed(&h->stash[(h->stash_head + i) % STASH_RECORDS],
				  user_data);
	io_uring_for_each_cqe(&h->ring, head, cqe) {
		if (found || h->ms_fd != h->port_fd)
			break;
		if (io_uring_cqe_get_data64(cqe) != TAG_MULTISHOT)
			continue;
		r = ms_records(h, cqe, &n);
		for (i = 0; r && i < n && !found; i++)
			found = completed(&r[i], user_data);
	}
	pthread_mutex_unlock(&h->lock);
	return found;
}
