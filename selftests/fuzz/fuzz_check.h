/* SPDX-License-Identifier: MIT */
/* Checks shared by the grammar fuzz targets: a failed one aborts. */
#ifndef GPUAR_FUZZ_CHECK_H
#define GPUAR_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

/* The fuzz input as a C string of its own allocation (ASan sees overreads). */
static inline char *fuzz_text(const unsigned char *data, size_t size)
{
	char *text = malloc(size + 1);

	FUZZ_CHECK(text);
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

/* A refusal names a place inside the text and a NUL-terminated phrase. */
static inline void fuzz_check_refusal(const char *text,
				      const struct gpuar_parse_error *err)
{
	FUZZ_CHECK(memchr(err->what, '\0', sizeof(err->what)));
	FUZZ_CHECK(err->what[0] != '\0');
	FUZZ_CHECK(err->offset <= strlen(text));
}

/*
 * @label writes @full bytes; into every smaller buffer it must write a
 * NUL-terminated prefix, return the full length and touch nothing past
 * the size it was given.
 */
#define FUZZ_CHECK_SMALL_BUFFERS(label_fn, obj, full_text)                     \
	do {                                                                   \
		size_t full_ = strlen(full_text), size_;                       \
		char small_[64];                                               \
                                                                               \
		for (size_ = 0;                                                \
		     size_ < sizeof(small_) - 1 && size_ <= full_ + 1;         \
		     size_++) {                                                \
			memset(small_, '#', sizeof(small_));                   \
			FUZZ_CHECK(label_fn(obj, small_, size_) == full_);     \
			FUZZ_CHECK(small_[size_] == '#');                      \
			if (!size_)                                            \
				continue;                                      \
			FUZZ_CHECK(strlen(small_) ==                           \
				   (full_ < size_ - 1 ? full_ : size_ - 1));   \
			FUZZ_CHECK(                                            \
				!strncmp(small_, full_text, strlen(small_)));  \
		}                                                              \
	} while (0)

#endif /* GPUAR_FUZZ_CHECK_H */
