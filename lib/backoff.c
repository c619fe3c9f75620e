// SPDX-License-Identifier: MIT
/*
 * A wait far past its prediction backs off. A flag plan parks a late
 * wait at a short interval (the default's 100 us: an event loop's
 * latency), which is right for work that runs a little late and wrong
 * for work that never finishes: at 100 us the user engine's checks cost
 * a tenth of a core or more, and a backstop that resubmits the wait
 * (the vendor awaits) kept that up for ever. So once a wait is a default
 * backstop (1 s) past its start, each check that finds it pending
 * doubles its interval up to 10 ms: about 100 checks a second, well
 * under 1% of a core, and a store that finally lands is seen at most
 * 10 ms (plus a timer's wake-up) late. Such a wait teaches the
 * estimator nothing.
 */
#include "backoff.h"
#include "defaults.h"

struct gpuar_est *gpuar_backoff_est(const struct gpuar_word_state *ws,
				    struct gpuar_est *est, u64 now)
{
	return gpuar_backoff_due(ws->start_ns, now) ? NULL : est;
}

bool gpuar_backoff_step(struct gpuar_word_state *ws, u64 now)
{
	u64 iv = ws->interval_ns;

	if (ws->phase != GPUAR_WORD_PARK || !gpuar_backoff_due(ws->start_ns, now))
		return false;
	if (iv < GPUAR_BACKOFF_CAP_NS)
		iv = iv * 2 < GPUAR_BACKOFF_CAP_NS ? iv * 2 : GPUAR_BACKOFF_CAP_NS;
	ws->interval_ns = iv;
	ws->next_ns = gpuar_add_sat(now, iv);
	if (ws->next_ns > ws->backstop_at_ns)
		ws->next_ns = ws->backstop_at_ns;
	return true;
}

u64 gpuar_backoff_park_ns(u64 park_ns, u32 k)
{
	u64 iv = park_ns ? park_ns :
		 (u64)GPUAR_DEFAULT_CHECK_FLOOR_US * GPUAR_NSEC_PER_USEC;

	if (iv >= GPUAR_BACKOFF_CAP_NS)
		return park_ns;
	while (k-- && iv < GPUAR_BACKOFF_CAP_NS)
		iv *= 2;
	return iv < GPUAR_BACKOFF_CAP_NS ? iv : GPUAR_BACKOFF_CAP_NS;
}
