/* SPDX-License-Identifier: MIT */
/* gpuar-stat's outputs: a table, or JSON (schema gpuar-stat/1). */
#ifndef GPUAR_STAT_OUTPUT_H
#define GPUAR_STAT_OUTPUT_H

#include <stdio.h>

#include "stat_model.h"

void stat_print_table(FILE *f, const struct stat_snapshot *s);
void stat_print_json(FILE *f, const struct stat_snapshot *s);

#endif /* GPUAR_STAT_OUTPUT_H */
