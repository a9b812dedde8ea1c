/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bwrap backend: the plan turned into a bubblewrap invocation.
 *
 *   caller
 *     └─ init (backend/landlock/child.c): new session, child subreaper,
 *        rlimits, a root caller's unprivileged id; reports the status
 *          └─ monitor (child.c here): makes the seccomp memfd and the
 *             status pipe, forks bwrap, reads its --json-status-fd
 *               └─ /usr/bin/bwrap ARGV (argv.c): namespaces, mounts,
 *                  env, seccomp last, then the command
 *
 * argv.c is a pure function of the plan (golden-tested); plan.c decides
 * whether bwrap can run here and what it cannot enforce. Internal. */
#pragma once
#include "model/plan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define RF_BWRAP_PATH "/usr/bin/bwrap"
/* The descriptors bwrap is told about: fixed, so the argv in the plan is
 * the argv that runs. */
#define RF_BWRAP_SECCOMP_FD 3
#define RF_BWRAP_STATUS_FD 4
/* --block-fd: bwrap reads its one byte after every mount, just before the
 * filter and exec; the byte still unread when bwrap is gone means setup
 * failed (its exit status alone cannot tell that from the command's). */
#define RF_BWRAP_BLOCK_FD 5

/* The bwrap argv for plan, argv[0] = RF_BWRAP_PATH (malloc'd strv). When
 * the plan has a filter, `--seccomp RF_BWRAP_SECCOMP_FD`; always
 * `--json-status-fd RF_BWRAP_STATUS_FD`. */
int rf_bwrap_argv(const rf_plan *plan, char ***ret, rf_error **err);
/* Does the plan have a seccomp filter (rf_seccomp_compile gives bytes)? */
bool rf_bwrap_wants_seccomp(const rf_plan *plan);

/* The plan's "bwrap" object: the argv and the descriptors it names. */
json_t *rf_bwrap_plan_json(const rf_plan *plan);

/* plan.c: is bwrap usable here? *why (size bytes) says why not. */
bool rf_bwrap_usable(char *why, size_t size);
/* "bubblewrap 0.8.0", or NULL when absent (malloc'd). */
char *rf_bwrap_version(void);
/* Landlock IPC scoping around bwrap: Landlock on, ABI 6+, bwrap not
 * set-uid (no_new_privs would disable it). */
bool rf_bwrap_scopes_ipc(const rf_plan *plan);
/* What the bwrap backend cannot enforce on any host (also doctor). */
const char *const *rf_bwrap_cannot(size_t *n);
/* Finish a bwrap plan: refuse where bwrap cannot run, a root caller's id,
 * the cannot list (called from rf_plan_host_finish). */
int rf_plan_bwrap_finish(rf_plan *plan, const rf_policy *policy, rf_error **err);

/* spawn.c */
rf_proc *rf_bwrap_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err);
