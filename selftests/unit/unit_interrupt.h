/* SPDX-License-Identifier: MIT */
/*
 * For the suites that test interrupts: a thread body that sets the
 * interrupt it is given 30 ms after it starts, as a signal handler or a
 * binding's Ctrl-C would while a wait blocks.
 */
#ifndef GPUAR_UNIT_INTERRUPT_H
#define GPUAR_UNIT_INTERRUPT_H

#include <gpuar/gpuar.h>

#include <unistd.h>

static inline void *unit_interrupt_in_30ms(void *intr)
{
	usleep(30000);
	gpuar_interrupt_trigger(intr);
	return NULL;
}

#endif /* GPUAR_UNIT_INTERRUPT_H */
