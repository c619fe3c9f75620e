/* SPDX-License-Identifier: MIT */
/*
 * What the CUDA and HIP backends (<gpuar/cuda.h>, <gpuar/hip.h>) share:
 * device-registered line pages and the completion a backend reaps.
 *
 * A vendor line is a gpuar line (an ordinary anonymous page from
 * gpuar_line_alloc, pinned by the module under the kernel engine) that the
 * vendor has also registered for its device. Each of its eight slots
 * carries a sequence number: recording on a stream enqueues the store of
 * the slot's next number behind the stream's work, and that number is the
 * target a wait completes at. A slot belongs to one stream at a time: a
 * second stream may take it over only once every store the first enqueued
 * has landed (stores from two streams into one word could land out of
 * order and move the word backwards).
 */
#ifndef GPUAR_VENDOR_H
#define GPUAR_VENDOR_H

#include <stdbool.h>
#include <stdint.h>
#include <gpuar/gpuar.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpuar_vendor_line;

/*
 * One reaped completion: the port's record, plus the vendor's status when
 * the backend resolved it. A record whose wait hit its backstop (outcome
 * TIMEOUT) is never handed out as such: the backend asks the stream (the
 * error authority); pending or finished work is resubmitted with the
 * original start time, and a failed stream turns the record into an error
 * record: record.status = -EIO, vendor_status = the vendor's code (e.g.
 * 719 for CUDA_ERROR_LAUNCH_FAILED), vendor_name its name; a reset that
 * destroyed the line's registration is -EIO too. A stream found idle with
 * the word still short of its target at two looks in a row lost the
 * store: record.status = -ENODATA, vendor_status 0. A resubmitted
 * wait that its first check then finds done is reported EXACT (an earlier
 * check saw it pending), with the checks of every submission counted.
 */
struct gpuar_vendor_completion {
	struct gpuar_record record;
	int32_t vendor_status;	/* 0, or the CUresult / hipError_t */
	uint32_t pad;
	const char *vendor_name;	/* static string; NULL when vendor_status is 0 */
};

/*
 * Resolve a record the caller read from the port itself (gpuar_reap,
 * read() of the port's fd, an io_uring read): if it belongs to an await of
 * any CUDA or HIP backend handle, do what that backend's reap would do —
 * a backstop TIMEOUT is resolved by asking the stream (late work is
 * resubmitted, a failed stream becomes an error record), and the await
 * is forgotten, so its line can be freed. Records of other waits are
 * copied into *@out unchanged. Returns 1 when *@out is a completion to
 * hand out, 0 when the wait was resubmitted (nothing to hand out: its
 * record comes later), or -EINVAL. The awaits of every handle on one port
 * share one registry: a port with one handle per GPU may be reaped through
 * any of them, or through this call. A record finds its await by
 * user_data (hashed) and point; closing the port forgets the awaits still
 * unreaped on it, so no port opened later meets them (their lines stay
 * unfreeable, -EBUSY: their port is gone). Thread-safe.
 */
int gpuar_vendor_resolve(struct gpuar_port *port,
			 const struct gpuar_record *rec,
			 struct gpuar_vendor_completion *out,
			 struct gpuar_error *diag);

/* The line's eight slots (host address, page aligned). Thread-safe. */
uint64_t *gpuar_vendor_line_words(const struct gpuar_vendor_line *line);

/* The address the device stores to; it may differ from the host address. */
uint64_t gpuar_vendor_line_device_address(const struct gpuar_vendor_line *line);

/* The underlying gpuar line (for gpuar_line_id and raw word waits). */
struct gpuar_line *gpuar_vendor_line_gpuar(const struct gpuar_vendor_line *line);

/*
 * The last sequence number recorded into @slot (the target of its latest
 * record). Thread-safe.
 */
uint64_t gpuar_vendor_line_sequence(const struct gpuar_vendor_line *line,
				    uint32_t slot);

/*
 * Start @slot's sequence at @value: the word is set to @value and the next
 * record stores @value + 1 (wrapping past UINT64_MAX to 0 is fine: waits
 * compare in wrapping order). For resuming a counter and for testing the
 * wrap-around. Errors: -EINVAL (slot), -EBUSY (stores into the slot are
 * still outstanding). Thread-safe.
 */
int gpuar_vendor_line_set_sequence(struct gpuar_vendor_line *line,
				   uint32_t slot, uint64_t value);

/*
 * A completion source for the wait driver (gpuar_wait) over the work
 * enqueued so far on a stream: initialising it records the slot's next
 * sequence number behind that work (so it takes the slot, as a record
 * does), and every plan's check is the word reaching it — work enqueued
 * later, by this or another thread, does not hold the wait. Parking waits
 * on the word; the status query is the stream's (the error authority);
 * block is the vendor's stream synchronize. Initialise with
 * gpuar_cuda_source_init / gpuar_hip_source_init; the struct is the
 * source's storage. One waiting thread per source; with a per-thread
 * default-stream handle, the thread that initialised it.
 */
struct gpuar_vendor_source {
	struct gpuar_src source;
	struct gpuar_vendor_line *line;
	void *stream;
	uint32_t slot;
	bool armed;		/* true once initialised (recorded) */
	uint64_t target;	/* the number recorded at initialisation */
	struct gpuar_error diag;	/* the last source error, coded */
};

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_VENDOR_H */
