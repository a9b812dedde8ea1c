/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Variables in configured paths (seed 003): $WORKSPACE, ${WORKSPACE},
 * $HOME, $USER, $TMPDIR, $RINGFENCE_HOME and a leading "~/". An unknown
 * $NAME is an error, never an empty string; "$$" is a literal "$". */
#pragma once
#include "ringfence.h"

typedef struct rf_vars {
    const char *workspace; /* NULL while the workspace itself is resolved */
    const char *home;
    const char *user;
    const char *tmpdir;
    const char *rf_home;   /* NULL while the instance root is resolved */
} rf_vars;

/* Expand variables in `in`. `what` names the setting in errors. */
char *rf_vars_expand(const rf_vars *v, const char *in, const char *what, rf_error **err);
/* Expand, then require an absolute path and normalise it. */
char *rf_vars_path(const rf_vars *v, const char *in, const char *what, rf_error **err);
