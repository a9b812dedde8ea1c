/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A workspace configuration file is written by the very agent the sandbox
 * confines, so unless the user trusts it, it may only tighten: the policy
 * through the workspace layer is compared with the policy before it, and
 * any setting that became looser is refused by name. Comparing resolved
 * policies (not raw layers) also catches "replace" and null resets. */
#include "policy/resolve.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <string.h>

typedef struct cmp {
    const char *origin;
    rf_error **err;
} cmp;

static int refuse(cmp *c, const char *key, const char *what)
{
    rf_error_set(c->err, 0, "%s: %s: a workspace configuration may only tighten the policy, "
                            "and this %s", c->origin, key, what);
    return rf_error_hint_set(c->err, "remove the setting from the workspace file, or pass "
                                     "--trust-workspace-config if you trust this workspace");
}

static bool str_differs(const char *a, const char *b)
{
    return (a || b) && (!a || !b || strcmp(a, b));
}

/* Every entry of `after` must already be in `before`. */
static int no_new(cmp *c, const char *key, char *const *before, char *const *after)
{
    for (size_t i = 0; after && after[i]; i++)
        if (!rf_strv_contains(before, after[i]))
            return refuse(c, key, "adds an entry");
    return 0;
}

/* Every entry of `before` must still be in `after`. */
static int none_removed(cmp *c, const char *key, char *const *before, char *const *after)
{
    for (size_t i = 0; before && before[i]; i++)
        if (!rf_strv_contains(after, before[i]))
            return refuse(c, key, "removes an entry");
    return 0;
}

/* A limit of 0 means "none", so 0 is the loosest value. */
static int limit_kept(cmp *c, const char *key, double before, double after)
{
    if (before > 0 && (after == 0 || after > before))
        return refuse(c, key, "raises a limit");
    return 0;
}

static int exposes_tighter(cmp *c, const rf_policy *b, const rf_policy *a)
{
    for (size_t i = 0; i < a->n_exposes; i++) {
        const rf_expose *ae = &a->exposes[i], *be = NULL;
        for (size_t j = 0; j < b->n_exposes && !be; j++)
            if (!strcmp(b->exposes[j].target, ae->target))
                be = &b->exposes[j];
        /* A workspace path exposed at its own place shows nothing new: the
         * workspace is visible already (Mitto's "$WORKSPACE/vendor"). */
        bool in_place = !strcmp(ae->source, ae->target) && a->workspace &&
                        rf_path_is_beneath(ae->source, a->workspace);
        if (!be && in_place)
            continue;
        if (!be || strcmp(be->source, ae->source))
            return refuse(c, "expose", "exposes a new path");
        if (ae->mode == RF_ACCESS_RW && be->mode == RF_ACCESS_RO)
            return refuse(c, "expose", "makes an exposed path writable");
    }
    return 0;
}

static int ranks_kept(cmp *c, const rf_policy *b, const rf_policy *a)
{
    static const int landlock_rank[] = { [RF_LANDLOCK_REQUIRED] = 2, [RF_LANDLOCK_BEST_EFFORT] = 1,
                                         [RF_LANDLOCK_OFF] = 0 };
    static const int seccomp_rank[] = { [RF_SECCOMP_STRICT] = 2, [RF_SECCOMP_DEFAULT] = 1,
                                        [RF_SECCOMP_OFF] = 0 };
    /* none < allowlist < host */
    static const int net_rank[] = { [RF_NET_NONE] = 0, [RF_NET_ALLOWLIST] = 1, [RF_NET_HOST] = 2 };
    if (net_rank[a->network] > net_rank[b->network])
        return refuse(c, "network.mode", "opens the network further");
    if (a->net.allow_private_addresses && !b->net.allow_private_addresses)
        return refuse(c, "network.allow_private_addresses", "allows private addresses");
    /* The workspace's file is the agent's: it may neither start asking
     * (its questions would reach the user) nor choose where they go. */
    if ((a->net.ask && !b->net.ask) || str_differs(b->net.ask_via, a->net.ask_via) || (a->files_ask && !b->files_ask))
        return refuse(c, "network.on_blocked", "asks about blocked names, or changes where");
    if (a->backend != b->backend)
        return refuse(c, "backend", "changes the backend");
    if (a->allow_sensitive_workspace && !b->allow_sensitive_workspace)
        return refuse(c, "allow_sensitive_workspace", "allows a sensitive workspace");
    if (a->accept_weaker && !b->accept_weaker)
        return refuse(c, "accept_weaker", "accepts a weaker sandbox");
    if (a->share_tmp && !b->share_tmp)
        return refuse(c, "share_tmp", "shares the host's /tmp");
    if (landlock_rank[a->landlock] < landlock_rank[b->landlock])
        return refuse(c, "landlock", "weakens Landlock");
    if (seccomp_rank[a->seccomp] < seccomp_rank[b->seccomp])
        return refuse(c, "seccomp.profile", "weakens the seccomp profile");
    if (a->changes == RF_CHANGES_DIRECT && b->changes == RF_CHANGES_OVERLAY)
        return refuse(c, "changes", "writes the workspace directly instead of into a session");
    if (str_differs(b->session, a->session))
        return refuse(c, "session", "changes the session");
    if (a->map_root_to != b->map_root_to)
        return refuse(c, "map_root_to", "changes the uid root maps to");
    return 0;
}

static int flags_kept(cmp *c, const rf_policy *b, const rf_policy *a)
{
    if (str_differs(b->workspace, a->workspace))
        return refuse(c, "workspace", "moves the workspace");
    if (str_differs(b->instance_root, a->instance_root))
        return refuse(c, "instance_root", "moves the instance root");
    if (str_differs(b->instance, a->instance))
        return refuse(c, "instance", "changes the instance (its home and identity)");
    if (!a->restrict_to_workspace && b->restrict_to_workspace)
        return refuse(c, "restrict_to_workspace", "turns the workspace restriction off");
    if (a->allow_read_outside_workspace && !b->allow_read_outside_workspace)
        return refuse(c, "allow_read_outside_workspace", "allows reading outside the workspace");
    if (!a->tools.exec.enable_deny_patterns && b->tools.exec.enable_deny_patterns)
        return refuse(c, "tools.exec.enable_deny_patterns", "disables the exec guard");
    if (!a->limits.require_cgroup && b->limits.require_cgroup)
        return refuse(c, "limits.require_cgroup", "drops the cgroup requirement");
    /* A command can leave a .ringfence.json for the next run: it must not
     * switch off the record of what it does. */
    if (!a->audit && b->audit)
        return refuse(c, "audit", "turns the audit trail off");
    return 0;
}

static int limits_kept(cmp *c, const rf_policy *b, const rf_policy *a)
{
    const rf_limits *bl = &b->limits, *al = &a->limits;
    if (limit_kept(c, "limits.memory", (double)bl->memory_bytes, (double)al->memory_bytes) < 0 ||
        limit_kept(c, "limits.pids", (double)bl->pids, (double)al->pids) < 0 ||
        limit_kept(c, "limits.cpu", bl->cpu, al->cpu) < 0 ||
        limit_kept(c, "limits.timeout", bl->timeout_s, al->timeout_s) < 0 ||
        limit_kept(c, "limits.kill_grace", bl->kill_grace_s, al->kill_grace_s) < 0 ||
        limit_kept(c, "tools.exec.timeout", b->tools.exec.timeout_s, a->tools.exec.timeout_s) < 0 ||
        limit_kept(c, "tools.max_read_bytes", (double)b->tools.max_read_bytes,
                   (double)a->tools.max_read_bytes) < 0)
        return -1;
    return 0;
}

static int lists_kept(cmp *c, const rf_policy *b, const rf_policy *a)
{
    if (no_new(c, "env.set", b->env_set, a->env_set) < 0 ||
        no_new(c, "env.keep", b->env_keep, a->env_keep) < 0 ||
        no_new(c, "seccomp.allow", b->seccomp_allow, a->seccomp_allow) < 0 ||
        none_removed(c, "seccomp.deny", b->seccomp_deny, a->seccomp_deny) < 0 ||
        none_removed(c, "protected_paths", b->protected_paths, a->protected_paths) < 0 ||
        no_new(c, "network.allow_domains", b->net.allow_domains, a->net.allow_domains) < 0 ||
        none_removed(c, "network.deny_domains", b->net.deny_domains, a->net.deny_domains) < 0 ||
        no_new(c, "network.allow_ports", b->net.allow_ports, a->net.allow_ports) < 0 ||
        no_new(c, "network.hosts", b->net.hosts, a->net.hosts) < 0 ||
        no_new(c, "network.publish", b->net.publish, a->net.publish) < 0 ||
        /* A route carries a secret to an upstream and may run a command on
         * the host (cmd:): the workspace's file can never add or change one. */
        no_new(c, "network.routes", b->net.routes, a->net.routes) < 0 ||
        none_removed(c, "deny_paths", b->deny_paths, a->deny_paths) < 0 ||
        no_new(c, "tools.allow_read_paths", b->tools.allow_read_paths, a->tools.allow_read_paths) < 0 ||
        no_new(c, "tools.allow_write_paths", b->tools.allow_write_paths, a->tools.allow_write_paths) < 0 ||
        none_removed(c, "tools.disabled", b->tools.disabled, a->tools.disabled) < 0 ||
        none_removed(c, "tools.exec.custom_deny_patterns", b->tools.exec.custom_deny_patterns,
                     a->tools.exec.custom_deny_patterns) < 0 ||
        no_new(c, "tools.exec.custom_allow_patterns", b->tools.exec.custom_allow_patterns,
               a->tools.exec.custom_allow_patterns) < 0)
        return -1;
    return 0;
}

int rf_policy_check_tighter(const rf_policy *before, const rf_policy *after, const char *origin,
                            rf_error **err)
{
    cmp c = { .origin = origin ? origin : "workspace configuration", .err = err };
    if (flags_kept(&c, before, after) < 0 || exposes_tighter(&c, before, after) < 0 ||
        ranks_kept(&c, before, after) < 0 || limits_kept(&c, before, after) < 0 ||
        lists_kept(&c, before, after) < 0)
        return -1;
    return 0;
}
