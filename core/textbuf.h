/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A bounded text writer for the core's userspace-only text (plan labels,
 * parse refusals, coded messages), which has no libc to lean on. It
 * counts every byte it is given, writes what fits, and always leaves
 * room for the terminating NUL, so callers get snprintf's contract:
 * the return is the full length, the buffer holds its truncated prefix.
 */
#ifndef GPUAR_CORE_TEXTBUF_H
#define GPUAR_CORE_TEXTBUF_H

#include "types.h"

struct gpuar_textbuf {
	char *buf;
	size_t size;		/* bytes at buf, NUL included; may be 0 */
	size_t len;		/* bytes given so far, written or not */
};

void gpuar_textbuf_init(struct gpuar_textbuf *tb, char *buf, size_t size);
void gpuar_textbuf_putc(struct gpuar_textbuf *tb, char c);
void gpuar_textbuf_puts(struct gpuar_textbuf *tb, const char *s);
void gpuar_textbuf_putn(struct gpuar_textbuf *tb, const char *s, size_t n);
void gpuar_textbuf_u64(struct gpuar_textbuf *tb, u64 value);
/* NUL-terminate (when size > 0) and return the full length. */
size_t gpuar_textbuf_finish(struct gpuar_textbuf *tb);

#endif /* GPUAR_CORE_TEXTBUF_H */
