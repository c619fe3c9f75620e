/* SPDX-License-Identifier: MIT */
/*
 * The coded error numbers: the one definition, shared by the library's
 * public API (<gpuar/gpuar.h>) and the shared core's registry
 * (core/codes.h, which holds each code's name, severity and message).
 *
 * Stable and append-only: a number is never reused or renumbered, and a
 * retired code keeps its entry. Callers branch on the number, never on the
 * message text. This header includes nothing, so the freestanding core can
 * include it too.
 */
#ifndef GPUAR_CODES_H
#define GPUAR_CODES_H

enum gpuar_code {
	GPUAR_OK = 0,
	GPUAR_E_INVALID_PLAN = 1,
	GPUAR_W_PARK_FALLBACK = 2,
	GPUAR_W_EXECUTOR_FALLBACK = 3,
	GPUAR_E_EXECUTOR_REFUSED = 4,
	GPUAR_E_INVALID_EXECUTOR = 5,
	GPUAR_E_PENDED_INLINE = 6,
	GPUAR_E_STALLED = 7,
	GPUAR_E_BACKEND = 8,
	/* appended after the reference numbering: */
	GPUAR_E_INVALID_BANDS = 9,
	GPUAR_E_ENGINE_UNAVAILABLE = 10,
	GPUAR_W_ENGINE_FALLBACK = 11,
	GPUAR_E_SYSTEM = 12,
	GPUAR_E_INVALID_ARGUMENT = 13,
	GPUAR_E_FEATURE_UNAVAILABLE = 14,
	GPUAR_W_FEATURE_FALLBACK = 15,
	/*
	 * One past the last assigned number (grows as codes are appended:
	 * size tables with it, never store it).
	 */
	GPUAR_CODE_NEXT
};

#endif /* GPUAR_CODES_H */
