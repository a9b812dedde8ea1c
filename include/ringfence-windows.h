/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libringfence on Windows: seed 000's Windows backend (docs/windows.md).
 * The Windows build has ringfence.h's errors, config and guard; instead of
 * its Linux policy, plan and spawn it has these. Ownership as in
 * ringfence.h: what a function returns malloc'd, the caller frees with the
 * matching _free (or free() for strings). */
#pragma once
#include "ringfence.h"

#include <stdbool.h>

typedef struct rf_win_plan rf_win_plan;

typedef struct rf_win_context {
    const char *cwd;     /* the workspace unless the config names one (NULL: the current directory) */
    const char *rf_home; /* the instance root (NULL: instance_root, %RINGFENCE_HOME%, %USERPROFILE%\.ringfence) */
} rf_win_context;

/* The merged configuration and argv (NULL-terminated) into a plan. expose
 * (and picoclaw's isolation.expose_paths) is refused, as seed 000 says: no
 * source -> target view exists on Windows; a network setting that cannot
 * be enforced is refused unless accept_weaker. */
RF_EXPORT rf_win_plan *rf_win_plan_build(const rf_config *cfg, const rf_win_context *ctx, char *const argv[],
                                         rf_error **err);
RF_EXPORT void rf_win_plan_free(rf_win_plan *plan);
/* The plan as JSON (malloc'd), named as seed 000 logs it: "windows
 * isolation access rules". */
RF_EXPORT char *rf_win_plan_to_json(const rf_win_plan *plan);
/* What the user should know before the start (weaker settings accepted,
 * defaults not enforced); owned by the plan, NULL-terminated. */
RF_EXPORT char *const *rf_win_plan_warnings(const rf_win_plan *plan);

/* Run the plan and wait: directories made and labelled, the restricted
 * low-integrity token, the job, the process started suspended, put in the
 * job, resumed. *exit_code: the command's status, or RF_EXIT_* (124 timed
 * out, 126 not executable, 127 not found). < 0 with *err: nothing ran, or
 * waiting failed. The job ends the whole tree before this returns. */
RF_EXPORT int rf_win_run(const rf_win_plan *plan, int *exit_code, rf_error **err);

/* What this host supports, each mechanism tried for real (malloc'd text);
 * *all_ok: every mechanism works. */
RF_EXPORT char *rf_win_doctor_text(bool *all_ok);
