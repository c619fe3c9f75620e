/* SPDX-License-Identifier: MIT */
/* The machine a run measured: kernel, CPUs, virtualisation, clocksource. */
#ifndef GPUAR_BENCH_ENV_H
#define GPUAR_BENCH_ENV_H

#include "bench_result.h"

void bench_env_read(struct bench_env *env, const struct bench_config *cfg);

/*
 * The virtualisation kind from what the guest can see: "kvm" when the
 * kvm-clock clocksource is offered, "tcg" for a QEMU machine without it,
 * "hypervisor" for another hypervisor, "none" on bare metal. Pure, for
 * tests: @clocksources is available_clocksource, @dmi_vendor sys_vendor,
 * @hypervisor_flag whether /proc/cpuinfo lists the hypervisor flag.
 */
const char *bench_env_virt(const char *clocksources, const char *dmi_vendor,
			   bool hypervisor_flag);

#endif /* GPUAR_BENCH_ENV_H */
