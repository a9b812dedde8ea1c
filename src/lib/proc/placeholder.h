/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host-side placeholders a plan's absent protected paths need: made
 * by a backend before the start, removed by the rf_proc that outlives it
 * (hence below both). */
#pragma once
#include "model/plan.h"
#include "util/error.h"

/* proc/placeholder.c: the read-only placeholders for absent protected paths
 * (plan mounts marked `placeholder`), made before the start and removed
 * after the end; a killed start's are removed by the next one. */
typedef struct rf_placeholders rf_placeholders;
int rf_placeholders_make(const rf_plan *plan, rf_placeholders **out, rf_error **err);
void rf_placeholders_remove(rf_placeholders *ph);
