// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The shared core, compiled into the module from core/ (the same files the
 * library builds): binary plan validation, the deadline estimator and the
 * word-wait state machine. Included rather than listed as objects so
 * Kbuild never builds outside the module's directory.
 */
#include "../core/plan.c"
#include "../core/estimator.c"
#include "../core/outcome.c"
#include "../core/word_state.c"
