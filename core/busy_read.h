/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* Superseded by defaults.h, which every default now lives in. */
#ifndef GPUAR_CORE_BUSY_READ_H
#define GPUAR_CORE_BUSY_READ_H

#include "defaults.h"

#define GPUAR_BUSY_READ_DEFAULT_US GPUAR_DEFAULT_BUSY_READ_US

#endif /* GPUAR_CORE_BUSY_READ_H */
