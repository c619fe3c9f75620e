// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Bounded text writing for the core's userspace-only text. */
#include "textbuf.h"

void gpuar_textbuf_init(struct gpuar_textbuf *tb, char *buf, size_t size)
{
	tb->buf = buf;
	tb->size = buf ? size : 0;
	tb->len = 0;
}

void gpuar_textbuf_putc(struct gpuar_textbuf *tb, char c)
{
	if (tb->len + 1 < tb->size)
		tb->buf[tb->len] = c;
	tb->len++;
}

void gpuar_textbuf_putn(struct gpuar_textbuf *tb, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		gpuar_textbuf_putc(tb, s[i]);
}

void gpuar_textbuf_puts(struct gpuar_textbuf *tb, const char *s)
{
	while (*s)
		gpuar_textbuf_putc(tb, *s++);
}

void gpuar_textbuf_u64(struct gpuar_textbuf *tb, u64 value)
{
	char digits[20];
	int n = 0;

	do {
		digits[n++] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	while (n)
		gpuar_textbuf_putc(tb, digits[--n]);
}

size_t gpuar_textbuf_finish(struct gpuar_textbuf *tb)
{
	if (tb->size)
		tb->buf[tb->len < tb->size ? tb->len : tb->size - 1] = '\0';
	return tb->len;
}
