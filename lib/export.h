/* SPDX-License-Identifier: MIT */
/*
 * The library is built with -fvisibility=hidden: only what is marked
 * GPUAR_EXPORT (the functions the installed headers declare) is in the
 * shared library's dynamic symbol table; check-lib-symbols holds the two
 * to each other. Internal functions shared between the library's files
 * stay out of it, so programs cannot come to depend on them.
 */
#ifndef GPUAR_LIB_EXPORT_H
#define GPUAR_LIB_EXPORT_H

#define GPUAR_EXPORT __attribute__((visibility("default")))

#endif /* GPUAR_LIB_EXPORT_H */
