/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Windows backend (seed 000's platform_windows): a restricted primary
 * token at low integrity, in a Job Object, with the user environment
 * redirected into the instance root. Internal to libringfence; the Windows
 * build of the ringfence command (src/cli/windows/) is its client.
 *
 * The Linux policy and plan stages are not part of the Windows build (they
 * speak mounts, namespaces and uids); this plan is built from the same
 * merged configuration (the config stage is shared) and holds only what
 * Windows can enforce, plus the list of what it cannot. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <stdint.h>

/* Caps on the user-controlled input this backend copies into Windows
 * structures (CreateProcess's command line is at most 32767 wide chars). */
#define RF_WIN_MAX_CMDLINE 32767
#define RF_WIN_MAX_ARGS 4096

typedef enum { RF_WIN_NET_NONE, RF_WIN_NET_HOST, RF_WIN_NET_ALLOWLIST } rf_win_net;

/* One line of the access rules: a path and what the command may do there. */
typedef struct rf_win_rule {
    char *path;
    const char *access; /* "write (low-integrity label)", "read (token's own rights)" */
    const char *why;    /* "workspace", "user environment", ... */
} rf_win_rule;

typedef struct rf_win_plan {
    char *workspace;     /* absolute, the command's working directory */
    char *instance_root; /* %RINGFENCE_HOME%, else %USERPROFILE%\.ringfence */
    char *user_env;      /* instance_root\runtime-user-env */
    char **dirs;         /* made (and labelled low) before the start, in order */
    char **protected;    /* inside the workspace, labelled medium: read-only to the command */
    char **argv;
    char **env; /* KEY=VALUE, the command's whole environment */
    rf_win_rule *rules;
    size_t n_rules;
    uint64_t memory; /* bytes, 0: none */
    uint64_t pids;   /* active processes, 0: none */
    double cpu;      /* CPUs (0.5 = half of one), 0: none */
    double timeout;  /* seconds, 0: none */
    rf_win_net network;
    bool accept_weaker;
    char **cannot;   /* what Windows cannot enforce that Linux does */
    char **warnings; /* weaker settings the user accepted, or defaults not enforced */
} rf_win_plan;

typedef struct rf_win_context {
    const char *cwd;     /* NULL: the current directory */
    const char *rf_home; /* NULL: %RINGFENCE_HOME%, else %USERPROFILE%\.ringfence */
} rf_win_context;

/* winplan.c: the merged configuration and argv into a plan. expose (and
 * picoclaw's isolation.expose_paths) is refused as seed 000 does: Windows
 * has no source -> target view, so failing beats pretending; network:
 * allowlist is refused unless accept_weaker. */
rf_win_plan *rf_win_plan_build(const rf_config *cfg, const rf_win_context *ctx, char *const argv[],
                               rf_error **err);
void rf_win_plan_free(rf_win_plan *plan);
/* winplan-json.c: the plan as JSON (malloc'd), named as seed 000 logs it:
 * "windows isolation access rules". */
char *rf_win_plan_to_json(const rf_win_plan *plan);

/* run.c: make the directories, label them, start the command suspended
 * with the restricted token, put it in the job, resume it, wait (timeout:
 * the job is terminated). *exit_code: the command's status, or RF_EXIT_*
 * (124 timed out, 126 not executable, 127 not found). */
int rf_win_run(const rf_win_plan *plan, int *exit_code, rf_error **err);

/* doctor.c: what this host supports, each mechanism tried for real. */
char *rf_win_doctor_text(bool *all_ok);
