/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The model floor (src/lib/README.md): the resolved policy, every setting
 * substituted, every path absolute and checked, every default filled in.
 * Nothing after this stage reads a config file or the environment. Built by
 * rf_policy_resolve() (policy/) from a rf_config; read by every floor. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { RF_ACCESS_RO, RF_ACCESS_RW } rf_access;
typedef enum { RF_NET_NONE, RF_NET_HOST, RF_NET_ALLOWLIST } rf_net_mode;
typedef enum {
    RF_BACKEND_NATIVE,
    RF_BACKEND_LANDLOCK,
    RF_BACKEND_AUTO,
    RF_BACKEND_BWRAP,
    RF_BACKEND_FIREJAIL,
    RF_BACKEND_CONTAINER,
    RF_BACKEND_NONE,
} rf_backend_kind;
typedef enum { RF_LANDLOCK_BEST_EFFORT, RF_LANDLOCK_REQUIRED, RF_LANDLOCK_OFF } rf_landlock_mode;
typedef enum { RF_SECCOMP_DEFAULT, RF_SECCOMP_STRICT, RF_SECCOMP_OFF } rf_seccomp_profile;
/* workspace changes (docs/changes.md): written through, or kept in an overlay
 * session's upper layer until `ringfence changes apply`. */
typedef enum { RF_CHANGES_DIRECT, RF_CHANGES_OVERLAY } rf_changes_mode;

/* A NULL-terminated, malloc'd array of malloc'd strings (see util/strv.h). */
typedef char **rf_strv;

typedef struct rf_expose {
    char *source; /* absolute host path */
    char *target; /* absolute path inside the sandbox */
    rf_access mode;
} rf_expose;

typedef struct rf_limits {
    uint64_t memory_bytes; /* 0 = no limit */
    uint64_t pids;         /* 0 = no limit */
    double cpu;            /* CPUs, 0.25 = a quarter of one; 0 = no limit */
    double timeout_s;      /* 0 = no timeout */
    double kill_grace_s;   /* SIGTERM → SIGKILL grace (default 2) */
    bool require_cgroup;   /* refuse rlimit fallbacks */
} rf_limits;

typedef struct rf_exec_tool {
    bool enable_deny_patterns; /* default true */
    rf_strv custom_deny_patterns;
    rf_strv custom_allow_patterns;
    double timeout_s; /* default 60 (seed 001) */
} rf_exec_tool;

/* network: allowlist (issue 11). Names are lower case; a pattern is a name,
 * or "*.example.com" (strict subdomains), optionally with ":PORT". */
typedef struct rf_net_policy {
    rf_strv allow_domains;
    rf_strv deny_domains;         /* wins over allow_domains */
    rf_strv allow_ports;          /* decimal; default 80, 443 */
    rf_strv hosts;                /* "name=address": the user's own mapping */
    rf_strv publish;              /* "HOST_ADDR:HOST_PORT:SANDBOX_PORT" */
    /* Credential routes (issue 28), one canonical compact JSON object per
     * route ({name, url, preset, headers, allow, ca, allow_http}; see
     * net/route.h). Strings rather than a struct: copying, comparing for
     * the tightening rule and printing come for free, and they hold header
     * *sources* ("env:VAR"), never a secret's value. */
    rf_strv routes;
    bool allow_private_addresses; /* names may resolve to loopback, private... */
    /* on_blocked: ask (issue 31): a name allow_domains does not match is
     * asked about at `ask` ("socket:PATH"), an answer awaited for at most
     * ask_timeout_ms (no answer: refused). */
    bool ask;
    char *ask_via;
    unsigned ask_timeout_ms;
} rf_net_policy;

typedef struct rf_tools {
    rf_strv allow_read_paths;  /* regexes on canonical absolute paths */
    rf_strv allow_write_paths;
    rf_strv disabled;          /* tool names, e.g. "exec", "write_file" */
    rf_exec_tool exec;
    uint64_t max_read_bytes;   /* cap for read_file (default 1 MiB) */
} rf_tools;

struct rf_policy {
    char *workspace;      /* absolute, exists, a directory */
    char *chdir;          /* absolute; NULL = auto (cwd if inside, else ws) */
    char *instance_root;  /* $RINGFENCE_HOME or ~/.ringfence, absolute */
    char *instance;       /* run in this instance (--instance), or NULL */
    bool instance_ephemeral; /* delete_on_exit / --ephemeral */
    char *instance_dir;   /* its tree, set by rf_policy_use_instance */
    bool instance_subid;  /* ...which has a subordinate id of its own (unprivileged caller): */
    uid_t instance_uid;   /* the command's host uid/gid (native backend, newuidmap) */
    gid_t instance_gid;
    char *caller_cwd;     /* absolute */
    char *user;           /* USER / LOGNAME inside */
    bool restrict_to_workspace;        /* default true */
    bool allow_read_outside_workspace; /* default false */

    rf_expose *exposes; /* last rule per target wins (already deduplicated) */
    size_t n_exposes;

    rf_net_mode network;
    bool network_given; /* a layer (file, env, flag) named network settings (instances: network.c) */
    rf_net_policy net;
    rf_strv env_set;  /* "KEY=VALUE" added on top of the clean environment */
    rf_strv env_keep; /* "KEY=VALUE" copied from the caller (resolved now) */

    rf_limits limits;
    rf_backend_kind backend;
    char *backend_reason;   /* why this backend (auto, compat readers) */
    bool accept_weaker;     /* the user named a weaker mode explicitly */
    bool allow_sensitive_workspace; /* the workspace may be home, /, /etc... */
    uid_t map_root_to;      /* host uid/gid for a root caller (65534) */
    bool map_root_to_set;   /* map_root_to given by the user (landlock: else the workspace owner) */
    bool share_tmp;         /* landlock backend: grant the host's /tmp (a weakening) */
    bool files_ask;         /* files.on_hidden: ask (observe/offer.c) */
    bool audit;             /* default true: the audit trail (audit/) */
    /* The managed boundary's system_audit (docs/managed.md): each record
     * also to the system log's daemon at this socket, or NULL; required:
     * a run that cannot reach it is refused. */
    char *system_audit_socket;
    bool system_audit_required;
    rf_landlock_mode landlock;
    rf_seccomp_profile seccomp;
    rf_strv seccomp_deny;   /* extra syscall names to deny */
    rf_strv seccomp_allow;  /* syscall names to exempt from the profile */
    rf_strv protected_paths;/* relative to the workspace, read-only inside */
    rf_tools tools;
    rf_strv warnings;       /* things the user should know (stderr, plan) */
    char *caller_path;      /* the caller's $PATH, to find executables that
                               live outside the sandbox's PATH (or NULL) */
    bool exec_as_shell;     /* look argv[0] up as /bin/sh in the sandbox would
                               (rf_plan_build_command): its PATH only, never
                               exposing a directory, an ELF or #! file only */
    rf_strv deny_paths;     /* absolute host paths that must not be visible
                               (Mitto deny_folders); added by the config issue */
    char *container_image;  /* container backend image (Mitto docker.image), or NULL */
    rf_changes_mode changes; /* `changes` (--changes): direct (default) or overlay */
    char *session;          /* --session: continue this overlay session, or NULL (a new one) */
};

/* network: allowlist settings (policy.c). */
void rf_net_policy_clear(rf_net_policy *n);
int rf_net_policy_copy(rf_net_policy *dst, const rf_net_policy *src);
const char *rf_net_mode_name(rf_net_mode m);
struct json_t;
struct json_t *rf_net_policy_json(rf_net_mode mode, const rf_net_policy *n);

/* Fill a policy with the built-in defaults (no paths). */
void rf_policy_init_defaults(rf_policy *p);
void rf_policy_clear(rf_policy *p);
/* The built-in protected_paths: rf_policy_default_protected(), model/protected.h. */

/* "native", "landlock", ... */
const char *rf_policy_backend_name(rf_backend_kind b);

/* The JSON view of a policy (what rf_policy_to_json prints), as a tree. */
struct json_t;
struct json_t *rf_policy_to_json_value(const rf_policy *p);
