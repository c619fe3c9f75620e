// SPDX-License-Identifier: MIT
/*
 * Caller-sized structs: the library's options and statistics grow as the
 * kernel's ioctl arguments do. A caller sets size to sizeof() the struct it
 * was compiled with, or leaves it 0, which means the 1.0 layout; a newer
 * caller's larger struct is accepted while the bytes this library does not
 * know are zero, since zero is every option's default. Reserved fields
 * must be zero, so a later release can give them a meaning.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* No struct of ours comes near this: a larger size is a garbage field. */
#define SIZED_MAX 4096

static int sized_refuse(struct gpuar_error *diag, int err, const char *type,
			const char *field, const char *why)
{
	char name[64];
	const char *args[2] = { name, why };

	snprintf(name, sizeof(name), "%s.%s", type, field);
	return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, err, args, 2);
}

/* The caller's size, checked: 0 becomes @v1_size. */
static int sized_size(u32 size, size_t v1_size, const char *type,
		      struct gpuar_error *diag, size_t *out)
{
	if (!size)
		size = (u32)v1_size;
	if (size < v1_size)
		return sized_refuse(diag, EINVAL, type, "size",
				    "below the 1.0 layout (set 0 or sizeof)");
	if (size > SIZED_MAX)
		return sized_refuse(diag, E2BIG, type, "size",
				    "larger than any struct of this library");
	*out = size;
	return 0;
}

static int sized_in(void *dst, size_t known, size_t v1_size, const void *src,
		    const char *type, struct gpuar_error *diag)
{
	const unsigned char *tail = (const unsigned char *)src + known;
	size_t size = 0, i;
	u32 usize;
	int ret;

	memcpy(&usize, src, sizeof(usize));
	ret = sized_size(usize, v1_size, type, diag, &size);
	if (ret)
		return ret;
	for (i = 0; known + i < size; i++)
		if (tail[i])
			return sized_refuse(diag, E2BIG, type, "size",
					    "a newer struct with options this library does not know");
	memset(dst, 0, known);
	memcpy(dst, src, size < known ? size : known);
	return 0;
}

static int sized_reserved(const uint32_t *reserved, size_t n,
			  const char *type, struct gpuar_error *diag)
{
	char field[32];
	size_t i;

	for (i = 0; i < n; i++) {
		if (reserved[i]) {
			snprintf(field, sizeof(field), "reserved[%zu]", i);
			return sized_refuse(diag, EINVAL, type, field,
					    "must be zero");
		}
	}
	return 0;
}

int gpuar_options_in(void *dst, size_t known, size_t v1_size, const void *src,
		     const uint32_t *reserved, size_t nreserved,
		     const char *type, struct gpuar_error *diag)
{
	int ret = sized_in(dst, known, v1_size, src, type, diag);

	return ret ? ret : sized_reserved(reserved, nreserved, type, diag);
}

int gpuar_sized_out(void *dst, const void *src, size_t known, size_t v1_size)
{
	size_t size = 0;
	u32 usize;

	memcpy(&usize, dst, sizeof(usize));
	if (sized_size(usize, v1_size, "", NULL, &size))
		return usize > SIZED_MAX ? -E2BIG : -EINVAL;
	memcpy(dst, src, size < known ? size : known);
	if (size > known)
		memset((unsigned char *)dst + known, 0, size - known);
	memcpy(dst, &usize, sizeof(usize));
	return 0;
}
