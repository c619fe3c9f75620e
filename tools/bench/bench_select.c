// SPDX-License-Identifier: MIT
#include "bench_select.h"

#include <stdio.h>
#include <string.h>

#include "bench_options.h"

const char *bench_device_refusal(enum bench_device_kind kind,
				 const struct bench_strategy *st)
{
	if (kind == BENCH_DEVICE_SIM)
		return st->gpu_only ? "waits through the CUDA driver: needs a "
				      "CUDA GPU (--device cuda)" : NULL;
	if (!strcmp(st->family, "oracle"))
		return "needs each job's true completion time, which a real "
		       "device does not know in advance (simulated device only)";
	if (!strcmp(st->family, "fence-vgem"))
		return "needs the simulated device to signal a vgem fence; a GPU "
		       "stream cannot (simulated device only)";
	return NULL;
}

void bench_select_strategies(struct bench_run *run, const char *list)
{
	struct bench_strategy all[BENCH_STRATEGIES_MAX];
	size_t n = bench_strategies(&run->cfg, all, BENCH_STRATEGIES_MAX);
	enum bench_device_kind kind = run->cfg.device;

	run->results = 0;
	for (size_t i = 0; i < n; i++) {
		struct bench_result *r = &run->result[run->results];
		const char *refused;

		if (!bench_selected(list, &all[i]))
			continue;
		memset(r, 0, sizeof(*r));
		r->st = all[i];
		if (kind == BENCH_DEVICE_CUDA && !strcmp(r->st.family, "futex-wake"))
			r->st = bench_strat_cuda_event;
		r->st.plan(&r->st, &run->cfg, r->plan, sizeof(r->plan));
		refused = bench_device_refusal(kind, &r->st);
		if (refused) {
			snprintf(r->reason, sizeof(r->reason), "%s", refused);
			r->skipped = true;
		} else if (r->st.probe &&
			   r->st.probe(&run->cfg, r->reason, sizeof(r->reason))) {
			r->skipped = true;
		}
		run->results++;
	}
}
