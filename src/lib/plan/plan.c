/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_plan_build: turn a resolved policy and a command into the concrete
 * plan every backend executes. Pure except for looking at the host
 * filesystem (which system paths exist, where the executable is). */
#include "backend/backend.h"
#include "backend/container/container.h"
#include "plan/build.h"
#include "seccomp/seccomp.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/strv.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RF_MAX_ARGS 65536

static int cmp_mount_target(const void *a, const void *b)
{
    return strcmp(((const rf_mount *)a)->target, ((const rf_mount *)b)->target);
}

/* landlock backend, root caller, no map_root_to given: the workspace's
 * owner, so that the command can write the workspace it was started for.
 * Why not uid 0 with every capability dropped: without a user namespace,
 * uid 0 still owns most of the host's files, and Landlock does not check
 * chmod, chown's owner checks, utimes or setxattr (the plan's `cannot`), so
 * a capability-less root could still change the modes of /etc/shadow or
 * /usr/bin/su. The owner already owns every file in the workspace; outside
 * it, Landlock denies opening, IPC scoping denies signals, and Landlock's
 * ptrace rule keeps the owner's other processes out of reach. A workspace
 * owned by root keeps the unprivileged default (65534). */
static void set_identity(rf_plan *plan, const rf_policy *policy)
{
    plan->uid_inside = plan->uid_host = getuid();
    plan->gid_inside = plan->gid_host = getgid();
    plan->caller_is_root = plan->uid_host == 0;
    if (plan->caller_is_root && plan->backend != RF_BACKEND_NONE) {
        plan->uid_host = policy->map_root_to;
        plan->gid_host = (gid_t)policy->map_root_to;
    }
    /* Without a user namespace of ringfence's own there is no uid 0
     * "inside" that is not host root: the command itself becomes the
     * unprivileged id (the workspace's owner, see above). For bwrap known
     * now, not only at its plan finish (which confirms it), so that its
     * HOME tree is one that id can reach (set_user_env): bwrap opens the
     * binds as that id. firejail binds as root, then drops (its finish). */
    if (plan->caller_is_root && (plan->backend == RF_BACKEND_LANDLOCK || plan->backend == RF_BACKEND_BWRAP))
        rf_backend_root_as_owner(plan, policy);
}

/* An unprivileged caller's instance with a subordinate id of its own
 * (docs/instances.md): the host sees the command as that id, mapped by
 * newuidmap; inside it keeps the caller's uid. Only the native backend
 * builds that mapping. */
static int instance_identity(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    if (plan->caller_is_root || !policy->instance_subid)
        return 0;
    if (plan->backend != RF_BACKEND_NATIVE) {
        rf_error_set(err, ENOTSUP, "instance: its own identity (uid %u from your subordinate range) needs the "
                                   "native backend", (unsigned)policy->instance_uid);
        return rf_error_hint_set(err, "run it with --backend native");
    }
    plan->uid_host = policy->instance_uid;
    plan->gid_host = policy->instance_gid;
    return 0;
}

/* Can RF_LANDLOCK_HOMES be there at start (common.c makes it)? Not on a
 * read-only /var (a pod's readOnlyRootFilesystem): the tree then stays in
 * the instance root, and the plan warns that HOME is out of reach. */
static bool homes_possible(void)
{
    char path[] = RF_LANDLOCK_HOMES;
    for (char *slash = strrchr(path, '/'); slash && slash != path; slash = strrchr(path, '/')) {
        if (access(path, F_OK) == 0)
            return access(path, W_OK) == 0;
        *slash = '\0';
    }
    return false;
}

/* The command's HOME tree. A root caller's command that runs as another
 * id (landlock, bwrap: set_identity) cannot pass root's 0700 HOME to reach
 * /root/.ringfence: its tree then lives under RF_LANDLOCK_HOMES instead,
 * one per instance root and id (common.c makes the root-owned parents
 * and hands the leaf to the id), so that HOME works without the caller
 * setting RINGFENCE_HOME by hand (docs/containers.md). */
static int set_user_env(rf_plan *plan, const rf_policy *policy)
{
    if (asprintf(&plan->user_env, "%s/runtime-user-env", policy->instance_root) < 0) {
        plan->user_env = NULL;
        return -1;
    }
    if (!plan->caller_is_root || !plan->drop_ids || plan->uid_host == 0)
        return 0;
    if (rf_plan_instance_root_reachable(policy->instance_root, plan->uid_host, plan->gid_host) ||
        !homes_possible())
        return 0;
    char digest[65];
    rf_sha256_hex(policy->instance_root, strlen(policy->instance_root), digest);
    free(plan->user_env);
    if (asprintf(&plan->user_env, "%s/%.16s-%u", RF_LANDLOCK_HOMES, digest, (unsigned)plan->uid_host) < 0) {
        plan->user_env = NULL;
        return -1;
    }
    plan->user_env_apart = true;
    return 0;
}

static int set_namespaces(rf_plan *plan)
{
    plan->clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                        CLONE_NEWCGROUP;
    if (plan->network != RF_NET_HOST)
        plan->clone_flags |= CLONE_NEWNET; /* allowlist: its way out is the proxy */
    plan->hostname = "ringfence";
    return 0;
}

/* The instance root holds what later sandboxes trust (the compiled seccomp
 * filters in cache/) and what other runs left (logs/, state/): a bind that
 * contains it (a home as the workspace, an exposed home) gets an empty
 * read-only tmpfs over it, so no command can read another's logs or plant a
 * filter for the next start. The command's own user environment or
 * instance tree is bound again on top (sorted after it). The mask's
 * source names the host path it hides. A bind of the instance root itself
 * cannot be masked and is refused. */
static int mask_instance_root(rf_plan *plan, const rf_policy *policy, size_t first, rf_error **err)
{
    _cleanup_free_ char *root = realpath(policy->instance_root, NULL);
    const char *r = root ? root : policy->instance_root;
    size_t n = plan->n_mounts;
    for (size_t i = first; i < n; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->type != RF_MOUNT_BIND || !rf_path_is_beneath(r, m->source))
            continue;
        if (!strcmp(r, m->source)) {
            rf_error_set(err, 0, "%s %s is ringfence's instance root (its filter cache, logs and state): no "
                                 "sandbox may reach it", m->why, m->source);
            return rf_error_hint_set(err, "choose a directory outside it (RINGFENCE_HOME or instance_root "
                                          "moves the instance root)");
        }
        _cleanup_free_ char *target = rf_path_join(m->target, r + strlen(m->source) + (strcmp(m->source, "/") != 0));
        if (!target || rf_plan_add_mount(plan, RF_MOUNT_TMPFS, r, target, false, "instance-root", err) < 0)
            return target ? -1 : rf_error_set(err, ENOMEM, "plan");
        plan->mounts[plan->n_mounts - 1].mode = 0755;
    }
    return 0;
}

/* Can the command make key system calls? Then it must not possess the
 * caller's session keyring, and the native backend joins a fresh one. When
 * the filter denies all three (the default and strict profiles), a fresh
 * keyring protects nothing, and it would cost one key of the user's quota
 * per sandbox: kernel.keys.maxkeys is 200 for a non-root user, so no more
 * than ~200 of their sandboxes could live at once (bench/thousand.sh). */
static bool keys_reachable(const rf_plan *plan)
{
    rf_seccomp_request req = { .profile = plan->seccomp, .deny = plan->seccomp_deny,
                               .allow = plan->seccomp_allow };
    return !rf_seccomp_denies(&req, "keyctl") || !rf_seccomp_denies(&req, "add_key") ||
           !rf_seccomp_denies(&req, "request_key");
}

/* What run.start and the `ringfence ps` entry record: the workspace, the
 * instance, and (auditing) the resolved policy's digest: the same policy,
 * the same digest. */
static int set_audit(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    plan->audit = policy->audit;
    if (!(plan->workspace = strdup(policy->workspace)) ||
        (policy->instance && !(plan->instance = strdup(policy->instance))))
        return rf_error_set(err, ENOMEM, "plan");
    if (!plan->audit)
        return 0;
    plan->system_audit_required = policy->system_audit_required;
    if (policy->system_audit_socket && !(plan->system_audit_socket = strdup(policy->system_audit_socket)))
        return rf_error_set(err, ENOMEM, "plan");
    _cleanup_free_ char *json = rf_policy_to_json(policy);
    if (!json)
        return rf_error_set(err, ENOMEM, "plan");
    rf_sha256_hex(json, strlen(json), plan->policy_digest);
    return 0;
}

/* The switches that make this sandbox weaker than the usual one, when the
 * policy's layers (a flag, a file, a profile) asked for them by name: they
 * are the user's choice, so they run without a warning, but the plan, the
 * status record and the audit trail's run.start list them beside the
 * weakenings ringfence accepted (a contained root), so a reviewer sees
 * "seccomp off" without decoding the policy digest. */
static int add_asked_weakenings(rf_plan *plan, const rf_policy *policy)
{
    const struct {
        bool on;
        const char *text;
    } asked[] = {
        { policy->backend == RF_BACKEND_NONE, "backend none: no sandbox at all (asked for)" },
        { policy->network == RF_NET_HOST, "network host: the host's network, unfiltered (asked for)" },
        { policy->net.allow_private_addresses,
          "network.allow_private_addresses: allowed names may lead to loopback and private addresses (asked for)" },
        { policy->landlock == RF_LANDLOCK_OFF, "landlock off: no Landlock layer behind the mounts (asked for)" },
        { policy->seccomp == RF_SECCOMP_OFF, "seccomp off: every system call reaches the kernel (asked for)" },
        { policy->share_tmp, "share_tmp: the host's /tmp is shared (asked for)" },
        { policy->allow_sensitive_workspace,
          "allow_sensitive_workspace: a home, / or a system directory as the workspace (asked for)" },
        { policy->allow_read_outside_workspace,
          "allow_read_outside_workspace: the file tools read outside the workspace (asked for)" },
        { !policy->restrict_to_workspace,
          "restrict_to_workspace false: the file tools are not confined to the workspace (asked for)" },
    };
    for (size_t i = 0; i < RF_ARRAY_SIZE(asked); i++)
        if (asked[i].on && rf_strv_push(&plan->weakenings, asked[i].text) < 0)
            return -1;
    return 0;
}

/* A root caller's workspace that another uid owns (a checkout bind-mounted
 * into a container whose user is root, a user's tree root works on): an
 * idmap of uid 0 would leave every file in it unmapped, and the kernel
 * refuses any write to a file whose owner has no mapping, so the command
 * could write nothing there. Its idmap maps that owner instead: the
 * owner's files are the sandbox user's, new ones the owner's. Files of
 * other uids in it (root's included) stay read-only. Not for an overlay
 * session (its lower layer is never idmapped) nor an instance's own id. */
static void set_workspace_owner(rf_plan *plan, const rf_policy *policy)
{
    struct stat st;
    if (!plan->caller_is_root || stat(policy->workspace, &st) < 0)
        return;
    plan->ws_uid = st.st_uid; /* also what rf_plan_add_session refuses an overlay on */
    plan->ws_gid = st.st_gid;
    if (policy->instance_dir || policy->changes == RF_CHANGES_OVERLAY || st.st_uid == 0)
        return;
    for (size_t i = 0; i < plan->n_mounts; i++) {
        rf_mount *m = &plan->mounts[i];
        if (m->idmap && !strcmp(m->why, "workspace") && !strcmp(m->source, policy->workspace))
            m->idmap_owner = plan->ws_owned = true;
    }
}

/* The user's binds (workspace, instance, exposes), parents before children
 * so every mount point is created on something already mounted. */
static int add_user_mounts(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    size_t first = plan->n_mounts;
    _cleanup_free_ char *user_env = NULL;
    /* An instance's tree, or the shared user environment. */
    user_env = strdup(policy->instance_dir ? policy->instance_dir : plan->user_env);
    if (!user_env)
        return rf_error_set(err, ENOMEM, "plan");
    if (rf_plan_add_mount(plan, RF_MOUNT_BIND, policy->workspace, policy->workspace, true, "workspace", err) < 0 ||
        rf_plan_add_mount(plan, RF_MOUNT_BIND, user_env, user_env, true, "instance", err) < 0)
        return -1;
    plan->mounts[plan->n_mounts - 1].source_dir = true; /* created at start */
    for (size_t i = 0; i < policy->n_exposes; i++) {
        const rf_expose *e = &policy->exposes[i];
        if (rf_plan_add_mount(plan, RF_MOUNT_BIND, e->source, e->target, e->mode == RF_ACCESS_RW, "expose", err) < 0)
            return -1;
    }
    /* From 0: a system bind (/usr) shows what it holds as well. */
    if (mask_instance_root(plan, policy, first, err) < 0 || rf_plan_add_denied(plan, policy, 0, err) < 0)
        return -1;
    qsort(plan->mounts + first, plan->n_mounts - first, sizeof(rf_mount), cmp_mount_target);
    /* A root caller's binds show host-root files as the sandbox user's; an
     * instance's tree belongs to the instance's own id already. */
    for (size_t i = first; i < plan->n_mounts; i++)
        plan->mounts[i].idmap = plan->caller_is_root &&
                                !(policy->instance_dir && !strcmp(plan->mounts[i].source, policy->instance_dir));
    set_workspace_owner(plan, policy);
    return 0;
}

/* Default protected paths that are directories (a placeholder for them is
 * a directory); a user's entry ending in '/' is one too. */
static bool protected_is_dir(const char *rel)
{
    static const char *const dirs[] = { ".git/hooks", ".ssh", ".config/ringfence", ".config/autostart",
                                        ".config/systemd" };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (!strcmp(rel, dirs[i]))
            return true;
    return rel[0] && rel[strlen(rel) - 1] == '/';
}

/* An absent protected path gets a placeholder (native backend) when its
 * parent exists as a real directory (creating the parent would already
 * change the workspace) and is not the workspace's top, where everything
 * in the workspace would see it (`git status`, `git add -A`): there, only
 * for a workspace allowed although sensitive (a home), where the shell
 * startup files matter. At the top, a planted .ringfence.* can only
 * tighten the next run's policy unless --trust-workspace-config. */
static bool placeholder_possible(const rf_plan *plan, const rf_policy *policy, const char *p)
{
    if (plan->backend != RF_BACKEND_NATIVE && plan->backend != RF_BACKEND_BWRAP)
        return false;
    _cleanup_free_ char *parent = strdup(p);
    char *slash = parent ? strrchr(parent, '/') : NULL;
    if (!slash || slash == parent)
        return false;
    *slash = '\0';
    if (strcmp(parent, policy->workspace) == 0 && !policy->allow_sensitive_workspace)
        return false;
    struct stat st;
    return lstat(parent, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Absent protected paths that get no placeholder: no backend stops the
 * command from creating them, so the plan names them in one `cannot`
 * entry instead of claiming a protection it lacks. */
static int note_absent(rf_plan *plan, const char *names)
{
    if (!*names)
        return 0;
    char *s = NULL;
    if (asprintf(&s, "protected paths that do not exist are not protected: the command can create them and "
                     "they stay on the host (a .ringfence.* made so can only tighten the next run's policy, "
                     "unless --trust-workspace-config): %s", names) < 0)
        return -1;
    return rf_strv_push_take(&plan->cannot, s);
}

/* Protected paths that exist are bound read-only over themselves, so the
 * sandbox cannot rewrite its own workspace policy or plant git hooks;
 * absent ones get a placeholder where one can be made. One lstat each. */
static int add_protected(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    size_t len = 0;
    for (size_t i = 0; policy->protected_paths && policy->protected_paths[i]; i++)
        len += strlen(policy->protected_paths[i]) + 2;
    _cleanup_free_ char *unprotected = calloc(1, len + 1);
    if (!unprotected)
        return rf_error_set(err, ENOMEM, "plan");
    for (size_t i = 0; policy->protected_paths && policy->protected_paths[i]; i++) {
        _cleanup_free_ char *p = rf_path_join(policy->workspace, policy->protected_paths[i]);
        struct stat st;
        if (!p || !rf_path_is_beneath(p, policy->workspace))
            continue;
        /* Inside a mask (a denied directory): nothing of it is shown, and
         * a read-only bind of the host path would show it again. */
        if (!rf_plan_path_visible(plan, p, NULL))
            continue;
        bool absent = lstat(p, &st) < 0;
        if (absent && errno == ENOENT && !placeholder_possible(plan, policy, p)) {
            strcat(unprotected, *unprotected ? ", " : "");
            strcat(unprotected, policy->protected_paths[i]);
            continue;
        }
        if (absent ? errno != ENOENT : S_ISLNK(st.st_mode))
            continue;
        if (rf_plan_add_mount(plan, RF_MOUNT_RO_SELF, NULL, p, false, "protected", err) < 0)
            return -1;
        plan->mounts[plan->n_mounts - 1].placeholder = absent;
        plan->mounts[plan->n_mounts - 1].source_dir = protected_is_dir(policy->protected_paths[i]);
    }
    if (note_absent(plan, unprotected) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    return 0;
}

static int set_cwd(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    if (policy->chdir) {
        if (!rf_plan_path_visible(plan, policy->chdir, NULL))
            return rf_error_set(err, 0, "--chdir %s: not inside the workspace or an exposed path", policy->chdir),
                   rf_error_hint_set(err, "choose a directory inside %s, or --expose it", policy->workspace);
        plan->cwd = strdup(policy->chdir);
    } else if (policy->caller_cwd && rf_path_is_beneath(policy->caller_cwd, policy->workspace)) {
        plan->cwd = strdup(policy->caller_cwd);
    } else {
        plan->cwd = strdup(policy->workspace);
    }
    return plan->cwd ? 0 : rf_error_set(err, ENOMEM, "plan");
}

/* Landlock: read and execute beneath "/" (only the sandbox's own tree is
 * there, all of it mounted or copied read-only or read-write already), full
 * access only beneath the writable mounts. Per-mount read rules would add
 * nothing, so an over-broad mount still cannot be written. */
static int add_rules(rf_plan *plan, rf_error **err)
{
    plan->rules = calloc(plan->n_mounts + 2, sizeof(rf_plan_rule));
    if (!plan->rules)
        return rf_error_set(err, ENOMEM, "plan");
    plan->rules[plan->n_rules++] = (rf_plan_rule){ .path = strdup("/"), .write = false };
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (!m->writable || m->type == RF_MOUNT_SYMLINK || m->type == RF_MOUNT_RO_SELF)
            continue;
        plan->rules[plan->n_rules++] = (rf_plan_rule){ .path = strdup(m->target), .write = true };
    }
    for (size_t i = 0; i < plan->n_rules; i++)
        if (!plan->rules[i].path)
            return rf_error_set(err, ENOMEM, "plan");
    return 0;
}

static int check_argv(char *const argv[], rf_error **err)
{
    if (!argv || !argv[0] || !argv[0][0])
        return rf_error_set(err, 0, "no command given"),
               rf_error_hint_set(err, "put the command after --, e.g. ringfence run -- sh");
    size_t n = 0;
    while (argv[n])
        if (++n > RF_MAX_ARGS)
            return rf_error_set(err, E2BIG, "too many arguments (more than %d)", RF_MAX_ARGS);
    return 0;
}

/* network: allowlist needs a network namespace whose only way out is the
 * proxy. Without one (landlock, none), Landlock's TCP rules name a port,
 * not an address: a command that ignores the proxy could reach any host on
 * the proxy's port. That is not an allowlist, so it is refused outright. */
static int check_network_backend(const rf_plan *plan, rf_error **err)
{
    if (plan->network != RF_NET_ALLOWLIST || plan->backend == RF_BACKEND_NATIVE ||
        plan->backend == RF_BACKEND_BWRAP || plan->backend == RF_BACKEND_FIREJAIL ||
        plan->backend == RF_BACKEND_CONTAINER)
        return 0; /* bwrap, firejail and container refuse with their own reason (their plan.c) */
    rf_error_set(err, 0, "network: allowlist: the %s backend has no network namespace, so it cannot "
                         "confine the command to the proxy", rf_backend_name(plan->backend));
    return rf_error_hint_set(err, "use the native backend (--backend native), or --network none / host");
}

RF_EXPORT rf_plan *rf_plan_build(const rf_policy *policy, char *const argv[], rf_error **err)
{
    if (check_argv(argv, err) < 0)
        return NULL;
    rf_plan *plan = calloc(1, sizeof(*plan));
    if (!plan) {
        rf_error_set(err, ENOMEM, "plan");
        return NULL;
    }
    plan->warnings = rf_strv_copy(policy->warnings);
    if (!plan->warnings) {
        rf_error_set(err, ENOMEM, "plan");
        goto fail;
    }
    if (rf_plan_choose_backend(plan, policy, err) < 0)
        goto fail;
    plan->network = policy->network;
    plan->net_log_fd = -1;
    if (rf_net_policy_copy(&plan->net, &policy->net) < 0) {
        rf_error_set(err, ENOMEM, "plan");
        goto fail;
    }
    plan->limits = policy->limits;
    /* Asking about hidden files is the observer's (observe/offer.c). */
    plan->files_ask = policy->files_ask;
    if (plan->files_ask)
        plan->observe = true;
    plan->landlock = policy->landlock;
    plan->seccomp = policy->seccomp;
    plan->argv = rf_strv_copy(argv);
    plan->instance_root = strdup(policy->instance_root);
    if (set_audit(plan, policy, err) < 0)
        goto fail;
    plan->seccomp_deny = rf_strv_copy(policy->seccomp_deny);
    plan->seccomp_allow = rf_strv_copy(policy->seccomp_allow);
    if (policy->container_image && !(plan->container_image = strdup(policy->container_image))) {
        rf_error_set(err, ENOMEM, "plan");
        goto fail;
    }
    set_identity(plan, policy);
    if (check_network_backend(plan, err) < 0 || instance_identity(plan, policy, err) < 0)
        goto fail;
    if (set_user_env(plan, policy) < 0) {
        rf_error_set(err, ENOMEM, "plan");
        goto fail;
    }
    if (plan->backend == RF_BACKEND_NATIVE || plan->backend == RF_BACKEND_BWRAP ||
        plan->backend == RF_BACKEND_FIREJAIL)
        set_namespaces(plan);
    if (!plan->argv || !plan->instance_root || !plan->seccomp_deny || !plan->seccomp_allow || !plan->warnings) {
        rf_error_set(err, ENOMEM, "plan");
        goto fail;
    }
    if (rf_plan_add_system_mounts(plan, err) < 0 || add_user_mounts(plan, policy, err) < 0 ||
        add_protected(plan, policy, err) < 0 || rf_plan_add_session(plan, policy, err) < 0 ||
        set_cwd(plan, policy, err) < 0 ||
        rf_plan_build_env(plan, policy, err) < 0 || rf_plan_resolve_exec(plan, policy, err) < 0 ||
        rf_plan_root_identity(plan, policy, err) < 0)
        goto fail;
    if (add_asked_weakenings(plan, policy) < 0) {
        rf_error_set(err, ENOMEM, "plan");
        goto fail;
    }
    if (plan->backend == RF_BACKEND_NATIVE ? add_rules(plan, err) < 0 : rf_plan_host_finish(plan, policy, err) < 0) {
        if (policy->backend == RF_BACKEND_AUTO && plan->backend_reason)
            rf_error_prefix(err, "backend %s", plan->backend_reason); /* why this backend at all */
        goto fail;
    }
    plan->new_keyring = keys_reachable(plan);
    return plan;
fail:
    rf_plan_free(plan);
    return NULL;
}

/* The exec tool's plan for argv: the policy's, with this command's timeout
 * and working directory; `as_shell`: argv[0] is looked up as /bin/sh would. */
static rf_plan *build_exec_tool(const rf_policy *policy, char *const argv[], double timeout_s, bool as_shell,
                                rf_error **err)
{
    /* The exec tool: refused when the policy disables it (policy/tools.c). */
    if (rf_policy_check_tool(policy, "exec", err) < 0)
        return NULL;
    /* A shallow copy: rf_plan_build only reads it. */
    rf_policy p = *policy;
    if (!p.chdir)
        p.chdir = p.workspace;
    if (timeout_s > 0)
        p.limits.timeout_s = timeout_s;
    else if (!(p.limits.timeout_s > 0))
        p.limits.timeout_s = p.tools.exec.timeout_s;
    p.exec_as_shell = as_shell;
    return rf_plan_build(&p, argv, err);
}

RF_EXPORT rf_plan *rf_plan_build_shell(const rf_policy *policy, const char *command, double timeout_s,
                                       rf_error **err)
{
    char sh[] = "/bin/sh", dash_c[] = "-c";
    char *argv[] = { sh, dash_c, (char *)command, NULL };
    return build_exec_tool(policy, argv, timeout_s, false, err);
}

rf_plan *rf_plan_build_command(const rf_policy *policy, const char *command, double timeout_s, rf_error **err)
{
    _cleanup_free_ char **words = rf_plan_plain_argv(command);
    rf_plan *plan = words ? build_exec_tool(policy, words, timeout_s, true, NULL) : NULL;
    /* What /bin/sh exports to a command it runs: the directory it started in. */
    if (plan && rf_strv_env_set(&plan->env, "PWD", plan->cwd) == 0)
        return plan;
    rf_plan_free(plan); /* not plain, or not a program the sandbox finds as the shell would */
    return rf_plan_build_shell(policy, command, timeout_s, err);
}

RF_EXPORT void rf_plan_set_network_log_fd(rf_plan *plan, int fd)
{
    if (plan)
        plan->net_log_fd = fd;
}

RF_EXPORT void rf_plan_set_ask(rf_plan *plan, rf_ask_fn fn, void *data)
{
    if (!plan)
        return;
    plan->ask_fn = fn;
    plan->ask_data = data;
    if (fn)
        plan->net.ask = true;
}

RF_EXPORT void rf_plan_set_observe(rf_plan *plan, bool on)
{
    if (plan)
        plan->observe = on || plan->files_ask; /* asking about hidden files needs the observer */
}

RF_EXPORT void rf_plan_free(rf_plan *plan)
{
    if (!plan)
        return;
    for (size_t i = 0; i < plan->n_mounts; i++) {
        free(plan->mounts[i].source);
        free(plan->mounts[i].target);
        free(plan->mounts[i].overlay);
    }
    free(plan->mounts);
    for (size_t i = 0; i < plan->n_rules; i++)
        free(plan->rules[i].path);
    free(plan->rules);
    rf_strv_free(plan->argv);
    rf_strv_free(plan->env);
    rf_strv_free(plan->instance_dirs);
    rf_strv_free(plan->seccomp_deny);
    rf_strv_free(plan->seccomp_allow);
    rf_strv_free(plan->warnings);
    rf_strv_free(plan->cannot);
    rf_strv_free(plan->weakenings);
    free(plan->backend_reason);
    free(plan->exec_path);
    free(plan->cwd);
    free(plan->instance_root);
    free(plan->system_audit_socket);
    free(plan->user_env);
    free(plan->workspace);
    free(plan->instance);
    free(plan->session);
    free(plan->session_dir);
    free(plan->session_workspace);
    free(plan->session_instance);
    free(plan->container_image);
    rf_container_plan_free(plan->container);
    rf_net_policy_clear(&plan->net);
    free(plan);
}
