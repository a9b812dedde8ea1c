/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The model floor (src/lib/README.md): the plan, what will happen,
 * concretely. It is the single input of every backend, so all backends
 * enforce the same thing, and it can be printed (`ringfence plan`). Built
 * from a resolved policy by rf_plan_build() (plan/, plan/build.h); a
 * backend reads it through this header only. */
#pragma once
#include "model/policy.h"

#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef enum {
    RF_MOUNT_TMPFS,   /* a fresh tmpfs at target */
    RF_MOUNT_BIND,    /* bind the host path source (recursively) at target */
    RF_MOUNT_PROC,    /* a fresh procfs of the sandbox's pid namespace */
    RF_MOUNT_DEVPTS,  /* a new devpts instance (its own ptys only) */
    RF_MOUNT_SYMLINK, /* create a symlink at target whose text is source */
    RF_MOUNT_RO_SELF, /* make the already-mounted target read-only */
    RF_MOUNT_COPY,    /* a copy of the small, world-readable host file source */
    RF_MOUNT_MASK_FILE, /* hide the non-directory at target behind an empty,
                           read-only, unopenable file (a nodev bind of
                           /dev/null); source names the host path hidden */
} rf_mount_type;

/* Largest host file copied instead of bound (RF_MOUNT_COPY). */
#define RF_COPY_MAX (1024 * 1024)

/* What may be copied: a small regular file everyone may read (checked by
 * the planner, again on the file actually opened, and by the /etc cache). */
static inline bool rf_copy_allowed(const struct stat *st)
{
    return S_ISREG(st->st_mode) && (st->st_mode & S_IROTH) && st->st_size <= RF_COPY_MAX;
}

typedef struct rf_mount {
    rf_mount_type type;
    char *source;    /* host path (BIND), link text (SYMLINK), else NULL */
    char *target;    /* absolute path inside the sandbox */
    bool writable;
    bool devices;    /* keep device nodes usable (the /dev binds) */
    bool idmap;      /* root caller: host-root files appear as the sandbox user's */
    bool idmap_owner; /* ...the workspace owner's files instead (plan->ws_uid) */
    bool source_dir; /* BIND: the source is a directory; placeholder: make a directory */
    bool placeholder; /* RO_SELF of an absent protected path: made empty on the
                         host before the start, removed after (proc/placeholder.c) */
    unsigned mode;   /* TMPFS: permission bits of the root directory */
    char *overlay;   /* BIND of the workspace with changes: overlay: the session's
                        directory (upper/, work/); the bind is the read-only lower
                        layer of an overlayfs mounted at target (docs/changes.md) */
    struct stat copied; /* COPY: the source as the plan saw it (the cached
                           /etc is keyed on it: backend/native/etc-cache.c) */
    const char *why; /* "system", "etc", "proc", "dev", "tmp", "workspace",
                        "instance", "expose", "executable", "protected",
                        "masked" (a system path hidden), "instance-root"
                        (hidden where a bind shows it, plan.c), "denied"
                        (a deny_paths entry hidden, plan_deny.c) */
} rf_mount;

/* A tmpfs (or a file mask) that hides what a bind around it would show. */
static inline bool rf_mount_is_mask(const rf_mount *m)
{
    if (m->type == RF_MOUNT_MASK_FILE)
        return true;
    return m->type == RF_MOUNT_TMPFS && m->why &&
           (!strcmp(m->why, "masked") || !strcmp(m->why, "instance-root") || !strcmp(m->why, "denied"));
}

/* A Landlock rule mirroring the mounts: read/execute beneath, or full access. */
typedef struct rf_plan_rule {
    char *path;
    bool write;
} rf_plan_rule;

struct rf_plan {
    rf_backend_kind backend;
    int clone_flags;    /* CLONE_NEW* namespaces to create */
    rf_net_mode network;
    rf_net_policy net;  /* network: allowlist */
    int net_log_fd;     /* blocked connections are reported here, or -1 */
    rf_ask_fn ask_fn;   /* rf_plan_set_ask, or NULL */
    void *ask_data;
    const char *hostname;

    /* Identity. A root caller is never mapped to host root (uid 0 on the host
     * can write host-wide sysctls through /proc/sys even without any
     * capability): inside it stays uid 0 but the host sees map_root_to. */
    bool caller_is_root;
    bool root_contained;  /* a root caller without what that mapping needs (a
                             container's): an ordinary caller's user namespace,
                             root's own id mapped (plan_root.c) */
    bool user_env_handed; /* root: the instance's HOME tree cannot be idmapped
                             (overlayfs): it belongs to uid_host instead */
    char **weakenings;    /* native: how this sandbox is weaker than the usual
                             one, accepted or harmless here (strv, or NULL) */
    uid_t uid_inside, uid_host;
    gid_t gid_inside, gid_host;
    /* Root caller: the workspace's owner. Where it is another uid (a
     * checkout bind-mounted into a container whose user is root), ws_owned:
     * the workspace's idmap shows that uid's files, not root's, as the
     * sandbox user's, and new files are its. */
    bool ws_owned;
    uid_t ws_uid;
    gid_t ws_gid;

    rf_mount *mounts;
    size_t n_mounts;
    rf_plan_rule *rules; /* Landlock rules derived from the mounts */
    size_t n_rules;

    char **argv;      /* as given */
    char *exec_path;  /* absolute path that will be executed */
    char **env;       /* the complete environment of the command */
    char *cwd;        /* working directory inside */
    char *instance_root;
    /* The command's shared HOME tree (HOME, TMPDIR, XDG_*):
     * INSTANCE_ROOT/runtime-user-env, or, where a landlock root caller's
     * command runs as an id that cannot reach the instance root (root's
     * 0700 HOME), a tree of its own under RF_LANDLOCK_HOMES (plan.c). */
    char *user_env;
    bool user_env_apart; /* user_env lies under RF_LANDLOCK_HOMES */
    /* The audit trail (audit/): on unless the policy's audit is false;
     * what run.start records besides the plan's own fields. */
    bool audit;
    char *system_audit_socket; /* the policy's: records also to the system log */
    bool system_audit_required;
    char *workspace;
    char *instance;      /* the policy's instance, or NULL */
    char policy_digest[65]; /* SHA-256 of the resolved policy's JSON */
    char **instance_dirs; /* created (0700) before start */
    char *session;     /* changes: overlay: the session's id, else NULL */
    char *session_dir; /* ...and its directory, created (or checked) at start */
    char *session_workspace; /* the workspace the session belongs to */
    char *session_instance;  /* the instance it was made in, or NULL */
    bool overlay_userxattr;  /* the overlay is mounted outside the initial user
                                namespace (an unprivileged caller, or root of a
                                user namespace of its own): user.* xattrs */

    rf_limits limits;
    bool limits_probed;        /* rf_plan_probe_limits() filled limits_how */
    rf_limits_report limits_how;
    rf_landlock_mode landlock;
    rf_seccomp_profile seccomp;
    char **seccomp_deny;
    char **seccomp_allow;
    char **warnings;

    /* Backend choice and what it cannot do (plan_host.c). */
    char *backend_reason; /* why this backend (auto, a compat mapping), or NULL */
    char **cannot;        /* what this backend does not enforce here (strv) */
    bool drop_ids;        /* no user namespace: the command switches to
                             uid_host/gid_host with setresuid (root caller) */
    bool keep_bounding;   /* drop_ids for a set-uid runner (firejail): the
                             bounding set stays, or it could not work */
    bool restrict_tcp;    /* Landlock denies every TCP bind and connect */
    bool share_tmp;       /* landlock backend: the host's /tmp granted (share_tmp) */
    bool seccomp_deny_inet; /* the filter denies AF_INET/AF_INET6 sockets */
    bool new_keyring;     /* native: join a fresh session keyring (the filter
                             lets key system calls through: plan.c) */

    bool files_ask;     /* files.on_hidden: ask: the observer offers hidden files */
    bool observe;       /* native: report hidden and read-only paths the
                           command looked for (observe/; learn, --explain-denials) */
    bool deferred;      /* native: build the sandbox, then wait for its one
                           command (RF_MSG_RUN; the warm pool, src/lib/pool/) */
    char *container_image; /* container.image (Mitto docker.image), or NULL:
                              the userland of the container backend and of
                              `ringfence export k8s` */
    struct rf_container_plan *container; /* backend container: its tool, argv
                                            (backend/container/), or NULL */
};

/* Where a landlock root caller's command keeps its HOME when it cannot
 * reach the instance root (plan.c: set_user_env): root-owned, 0711. */
#define RF_LANDLOCK_HOMES "/var/lib/ringfence/homes"

/* Default PATH inside the sandbox. */
#define RF_SAFE_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* model/plan.c: the accessors every floor needs. */
/* Find the mount whose target is the deepest prefix of path (NULL: the root tmpfs). */
const rf_mount *rf_plan_mount_covering(const rf_plan *plan, const char *path);
/* Is path visible inside the sandbox under some bind? (for cwd, exec checks) */
bool rf_plan_path_visible(const rf_plan *plan, const char *path, bool *writable);
/* "native", "landlock", ... (the plan's spelling; rf_policy_backend_name's twin). */
const char *rf_backend_name(rf_backend_kind b);
