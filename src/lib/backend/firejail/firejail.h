/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firejail backend: the plan turned into a firejail invocation.
 *
 *   caller
 *     └─ init (backend/landlock/child.c): new session, child subreaper,
 *        rlimits; reports the status
 *          └─ /usr/bin/firejail ARGV (argv.c; set-uid root): pid, mount,
 *             ipc, network namespaces, the host's root read-only with
 *             everything outside the plan blacklisted, caps dropped,
 *             no_new_privs, firejail's seccomp filter
 *               └─ /usr/bin/env -u NAME... -C CWD -- COMMAND
 *
 * firejail has no private root: it shows the host's tree and hides what
 * the plan does not show, entry by entry, so the argv depends on what the
 * host's directories hold. argv.c takes that as a lister (the golden test
 * gives a fixed one); plan.c decides whether firejail can run here and what
 * it cannot enforce. Internal. */
#pragma once
#include "model/plan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define RF_FIREJAIL_PATH "/usr/bin/firejail"
/* Inside: env takes back the variables firejail sets (container, SHELL,
 * QT_*, ...), so the command's environment is the plan's, and enters the
 * working directory. */
#define RF_FIREJAIL_ENV_PATH "/usr/bin/env"
/* The profile, a memfd at this number (--profile=/proc/self/fd/3). */
#define RF_FIREJAIL_PROFILE_FD 3
/* firejail's own limits (its MAX_ARGS, MAX_ARG_LEN): argc < 128, and each
 * argument shorter than 4128 bytes. */
#define RF_FIREJAIL_MAX_ARGS 127
#define RF_FIREJAIL_MAX_ARG_LEN 4127

/* The names in a host directory, sorted (malloc'd strv; an empty one when
 * the directory cannot be read). */
typedef char **(*rf_firejail_lister)(const char *dir, void *data);
char **rf_firejail_list_host(const char *dir, void *data);

typedef struct rf_firejail_invocation {
    char **argv;   /* argv[0] = RF_FIREJAIL_PATH */
    char *profile; /* one option a line */
} rf_firejail_invocation;

/* The firejail argv and profile for plan (malloc'd; free with
 * rf_firejail_invocation_free). */
int rf_firejail_build(const rf_plan *plan, rf_firejail_lister list, void *data, rf_firejail_invocation *out,
                      rf_error **err);
void rf_firejail_invocation_free(rf_firejail_invocation *inv);

/* The plan's "firejail" object: the argv on this host. */
json_t *rf_firejail_plan_json(const rf_plan *plan);

/* plan.c: is firejail usable here? *why (size bytes) says why not. */
bool rf_firejail_usable(char *why, size_t size);
/* What the firejail backend cannot enforce on any host (also doctor). */
const char *const *rf_firejail_cannot(size_t *n);
/* Finish a firejail plan: refuse what firejail cannot run, the cannot list
 * (called from rf_plan_host_finish). */
int rf_plan_firejail_finish(rf_plan *plan, const rf_policy *policy, rf_error **err);

/* spawn.c */
rf_proc *rf_firejail_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err);
