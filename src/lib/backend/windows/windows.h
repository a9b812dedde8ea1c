/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Windows backend (seed 000's platform_windows): a restricted primary
 * token at low integrity, in a Job Object, with the user environment
 * redirected into the instance root. The API is include/ringfence-windows.h;
 * this is the plan's inside, and the backend's limits.
 *
 * The Linux policy and plan stages are not part of the Windows build (they
 * speak mounts, namespaces and uids); this plan is built from the same
 * merged configuration (the config stage is shared) and holds only what
 * Windows can enforce, plus the list of what it cannot. */
#pragma once
#include "ringfence-windows.h"

#include <stdbool.h>
#include <stdint.h>

/* Caps on the user-controlled input this backend copies into Windows
 * structures (the command line's, RF_WIN_MAX_CMDLINE, is util/wstr.h's). */
#define RF_WIN_MAX_ARGS 4096

typedef enum { RF_WIN_NET_NONE, RF_WIN_NET_HOST, RF_WIN_NET_ALLOWLIST } rf_win_net;

/* One line of the access rules: a path and what the command may do there. */
typedef struct rf_win_rule {
    char *path;
    const char *access; /* "read, write (low-integrity label)", ... */
    const char *why;    /* "workspace", "protected", ... */
} rf_win_rule;

struct rf_win_plan {
    char *workspace;     /* absolute, labelled low: the command may write it */
    char *cwd;           /* where the command starts: chdir, else the workspace */
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
};
