/* SPDX-License-Identifier: MIT */
/*
 * Included ahead of every file sparse checks when a kernel is newer than
 * Debian's sparse (0.6.4, the newest Debian has): 7.x headers use two GNU
 * builtins it cannot parse, and Kbuild would otherwise drop the check
 * (tools/vm/build-modules.sh explains when this is used).
 *
 * __typeof_unqual__ is read as __typeof__: sparse then sees the qualifiers
 * the real one strips, so it can only warn more, never less.
 * __builtin_strlen appears in MODULE_INFO()'s static_assert on string
 * literals, whose length sizeof gives.
 */
#define __typeof_unqual__ __typeof__
#define __builtin_strlen(s) (sizeof(s) - 1)
