// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_strategy.h"
#include "bench_word.h"

const char *const bench_strategy_help[] = {
	"spin          load loop on the word (the latency floor, a whole CPU)",
	"sleep-poll    sleep --poll-us, check, repeat",
	"futex-wake    blocked on a futex the device wakes after its store",
	"              (an interrupt-driven blocking sync; the wake counts)",
	"oracle        told the true completion time: sleeps to a margin before",
	"              it, then spins; one entry per --oracle-margins value",
	"user-predict  libgpuar's user engine port under the stated plan",
	"kport-read    the module's port, blocking read() (busy-read)",
	"kport-epoll   the module's port through epoll",
	"kport-uring   the module's port through io_uring reads",
	"fence-vgem    a vgem fence the device signals, waited through the port",
	"reactor-spin  cuda-async's design: one scanner thread over every armed",
	"              slot, spinning 10,000 passes then yielding, parking when",
	"              nothing is armed; it wakes the blocked waiter",
	"cuda-scanner  --device cuda: reactor-spin's scanner thread polling each",
	"              pending stream's event with cuEventQuery, yielding after",
	"              every pass without a completion; it wakes the waiter",
	"cuda-hostfunc --device cuda: cuLaunchHostFunc after each job writes an",
	"              eventfd from the driver's thread; the waiter polls it",
	"cuda-hostfunc-v2  cuLaunchHostFunc_v2 (CUDA 13.2): not declared, its",
	"              signature is not documented in what this build had",
	"lib-reap      libgpuar's kernel port, a plain blocking gpuar_port_reap()",
	"user-imminent libgpuar's user port with GPUAR_PORT_IMMINENT in epoll",
	"kport-epoll-imminent  the module's port with GPUAR_PORT_IMMINENT in",
	"              epoll (EPOLLPRI): libgpuar claims and watches the word",
	"kport-uring-imminent  the same through libgpuar's io_uring host",
	NULL,
};

void bench_note_error(struct bench_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->first_error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ctx->first_error, sizeof(ctx->first_error), fmt, ap);
	va_end(ap);
}

unsigned int bench_scan(struct bench_ctx *ctx, struct bench_done *done,
			unsigned int max)
{
	unsigned int n = 0;
	uint64_t now = 0;

	for (unsigned int i = 0; i < ctx->dev->streams && n < max; i++) {
		uint64_t t = ctx->target[i];

		if (!t || !bench_word_reached(ctx->dev->stream[i].line, t))
			continue;
		if (!now)
			now = bench_now_ns();
		done[n].stream = i;
		done[n].seen_ns = now;
		done[n].complete_ns = 0;
		done[n].error = false;
		ctx->target[i] = 0;
		n++;
	}
	return n;
}

void bench_plan_stated(const struct bench_strategy *st,
		       const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	snprintf(buf, size, "%s", cfg->plan_text);
}

size_t bench_strategies(const struct bench_config *cfg,
			struct bench_strategy *out, size_t max)
{
	static char names[BENCH_MARGINS_MAX][32];
	const struct bench_strategy *const head[] = {
		&bench_strat_spin, &bench_strat_sleep_poll, &bench_strat_futex_wake,
		&bench_strat_reactor_spin, &bench_strat_cuda_scanner,
		&bench_strat_cuda_hostfunc, &bench_strat_cuda_hostfunc_v2,
	};
	const struct bench_strategy *const tail[] = {
		&bench_strat_user_predict, &bench_strat_user_imminent,
		&bench_strat_kport_read, &bench_strat_lib_reap,
		&bench_strat_kport_epoll, &bench_strat_kport_epoll_imminent,
		&bench_strat_kport_uring, &bench_strat_kport_uring_imminent,
		&bench_strat_fence_vgem,
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]) && n < max; i++)
		out[n++] = *head[i];
	for (unsigned int i = 0; i < cfg->margins && n < max; i++) {
		out[n] = bench_strat_oracle;
		snprintf(names[i], sizeof(names[i]), "oracle@%llu",
			 (unsigned long long)cfg->margins_us[i]);
		out[n].name = names[i];
		out[n].param = cfg->margins_us[i] * 1000;
		n++;
	}
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]) && n < max; i++)
		out[n++] = *tail[i];
	return n;
}
