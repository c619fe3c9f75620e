// SPDX-License-Identifier: MIT
/* One word wait by line and slot, without a struct to fill. */
#include "internal.h"

#include <errno.h>

GPUAR_EXPORT int gpuar_port_await_word(struct gpuar_port *port,
				       const struct gpuar_line *line,
				       uint32_t slot, uint64_t target,
				       uint64_t user_data,
				       const struct gpuar_plan *plan)
{
	struct gpuar_word_wait w = {
		.user_data = user_data,
		.target = target,
		.slot = slot,
	};
	int rc;

	if (!port || !line)
		return -EINVAL;
	w.line = gpuar_line_id(line);
	w.point = GPUAR_POINT_OF_SLOT(w.line, slot);
	w.plan = *gpuar_plan_or_default(plan);
	rc = gpuar_submit_word_waits(port, &w, 1, NULL);
	return rc < 0 ? rc : 0;
}
