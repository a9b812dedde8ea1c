/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building a plan from a resolved policy (plan/): the steps rf_plan_build
 * takes, shared by its files and by the few above the planner that build
 * a plan of their own (exec, mcp, doctor). Never included by a backend:
 * a backend reads the plan through model/plan.h. */
#pragma once
#include "model/plan.h"

#include <stdbool.h>
#include <stddef.h>

/* plan_mounts.c: the system part of the root (usr, etc, proc, dev, tmp). */
int rf_plan_add_system_mounts(rf_plan *plan, rf_error **err);
/* Append one mount; strings are copied. */
int rf_plan_add_mount(rf_plan *plan, rf_mount_type type, const char *source, const char *target,
                      bool writable, const char *why, rf_error **err);

/* plan_changes.c: changes: overlay: the session the plan writes into
 * (a new id, or --session's), the workspace bind marked as its lower
 * layer; refused on a backend that cannot mount an overlay. */
int rf_plan_add_session(rf_plan *plan, const rf_policy *policy, rf_error **err);
/* plan_deny.c: a mask over every deny_paths entry a bind among
 * mounts[first..] shows; refused when one contains such a bind. */
int rf_plan_add_denied(rf_plan *plan, const rf_policy *policy, size_t first, rf_error **err);
/* The deny_paths entry that path lies in or contains, or NULL. */
const char *rf_plan_denied_overlap(const rf_policy *policy, const char *path);

/* plan_env.c: the clean environment and the instance directories. */
int rf_plan_build_env(rf_plan *plan, const rf_policy *policy, rf_error **err);
/* Credential routes' variables, and no copy of their secrets (plan_route.c). */
int rf_plan_route_env(rf_plan *plan, rf_error **err);

/* plan_host.c: pick the backend (auto, and the runner types whose backend
 * is not built yet); then, for the landlock and none backends, the rules on
 * host paths, what the backend cannot do, and the refusal of a policy it
 * cannot honour unless the user accepted the weaker mode (accept_weaker). */
int rf_plan_choose_backend(rf_plan *plan, const rf_policy *policy, rf_error **err);
int rf_plan_host_finish(rf_plan *plan, const rf_policy *policy, rf_error **err);
/* Can uid/gid pass every directory above the instance root? (mode bits) */
bool rf_plan_instance_root_reachable(const char *instance_root, uid_t uid, gid_t gid);
/* What the landlock backend cannot do on any host (also `ringfence doctor`). */
const char *const *rf_plan_landlock_cannot(size_t *n);

/* plan_exec.c: find the executable as the sandbox will. */
/* plan_root.c: how the native backend maps a root caller here. */
int rf_plan_root_identity(rf_plan *plan, const rf_policy *policy, rf_error **err);
int rf_plan_resolve_exec(rf_plan *plan, const rf_policy *policy, rf_error **err);

/* The exec tool's plan (`ringfence exec`, MCP exec without the pool): a
 * plain command's words when the sandbox finds its program as /bin/sh would
 * (in the sandbox's PATH, visible at the same path, an ELF or #! file), so
 * the command means the same with one exec less; else rf_plan_build_shell. */
rf_plan *rf_plan_build_command(const rf_policy *policy, const char *command, double timeout_s, rf_error **err);

/* plain.c: the words of a command the shell would only split (no quoting,
 * expansion, operator, assignment or builtin), as a malloc'd NULL-terminated
 * argv in one block (one free); NULL if the command needs the shell. */
char **rf_plan_plain_argv(const char *command);
