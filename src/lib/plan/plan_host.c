/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Backends that run the command on the host, without namespaces.
 *
 * landlock: the plan's visibility list becomes Landlock rules on host paths
 * (what native would bind read-only may be read and executed, what it would
 * bind read-write may be written); `network: none` becomes Landlock TCP
 * rules plus a seccomp rule against IP sockets; IPC is scoped. There is no
 * mount namespace for a private /tmp: the host's /tmp gets no rule (another
 * user's files there stay out of reach) and TMPDIR/XDG_RUNTIME_DIR point into
 * the instance root, which does; share_tmp grants the host's /tmp by name.
 * What namespaces would give and Landlock cannot (host processes hidden,
 * remapped paths, read-only holes in the workspace...) is refused unless
 * the user accepted the weaker sandbox by name (accept_weaker), and listed
 * in the plan's `cannot` either way.
 * none: no sandbox at all; the plan and a warning say so.
 *
 * Also here: `--backend auto` and the runner types whose backend is not
 * built yet. */
#include "backend/container/container.h"
#include "plan/build.h"
#include "backend/backend.h"
#include "backend/bwrap/bwrap.h"
#include "backend/firejail/firejail.h"
#include "landlock/landlock.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rf_plan_choose_backend(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    rf_backend_kind kind = policy->backend;
    int r = 0;
    switch (kind) {
    case RF_BACKEND_AUTO:
        if (rf_backend_choose_auto(&kind, &plan->backend_reason, err) < 0)
            return -1;
        if (kind != RF_BACKEND_NATIVE)
            r = rf_strv_pushf(&plan->warnings, "backend %s", plan->backend_reason);
        break;
    default:
        /* Never replaced by another: refused where it cannot run. */
        if (policy->backend_reason && !(plan->backend_reason = strdup(policy->backend_reason)))
            r = -1;
        break;
    }
    plan->backend = kind;
    return r < 0 ? rf_error_set(err, ENOMEM, "plan: backend") : 0;
}

/* ── rules on host paths ─────────────────────────────────────────────── */

static int push_rule(rf_plan *plan, const char *path, bool write)
{
    rf_plan_rule *r = realloc(plan->rules, (plan->n_rules + 1) * sizeof(*r));
    if (!r)
        return -1;
    plan->rules = r;
    r[plan->n_rules].path = strdup(path);
    r[plan->n_rules].write = write;
    if (!r[plan->n_rules].path)
        return -1;
    plan->n_rules++;
    return 0;
}

/* An entry granted one by one that must not get a rule of its own. A rule
 * is put on what the path leads to: a symlink's rule would grant its
 * target (anywhere: a denied file, /etc/shadow), and a link resolves
 * without one anyway. And a rule on a file is a rule on its inode: one on
 * another hard link of a masked file would open the masked name too (so
 * the landlock backend hides that link as well; native shows it). */
static bool left_out(const char *path, char *const *masked)
{
    struct stat st, ms;
    if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
        return true;
    if (S_ISDIR(st.st_mode) || st.st_nlink < 2)
        return false;
    for (size_t i = 0; masked[i]; i++)
        if (lstat(masked[i], &ms) == 0 && ms.st_dev == st.st_dev && ms.st_ino == st.st_ino)
            return true;
    return false;
}

/* Landlock only adds rights, it cannot take a subtree back out. So a
 * directory that holds masked paths (/etc/ssl/private, a denied .env and
 * .ssh in one workspace) is replaced by rules on its entries, every entry
 * but the masked ones, walking down only where a masked path lies. */
static int rule_except(rf_plan *plan, const char *dir, bool write, char *const *masked, int depth)
{
    bool below = false;
    for (size_t i = 0; masked[i]; i++) {
        if (!strcmp(masked[i], dir))
            return 0;
        below |= rf_path_is_beneath(masked[i], dir);
    }
    if (!below)
        return depth > 0 && left_out(dir, masked) ? 0 : push_rule(plan, dir, write);
    if (depth > 8)
        return 0; /* absurdly deep: grant nothing rather than too much */
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* unreadable: nothing to grant */
    struct dirent *e;
    int r = 0;
    while (r == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        _cleanup_free_ char *child = rf_path_join(dir, e->d_name);
        r = child ? rule_except(plan, child, write, masked, depth + 1) : -1;
    }
    closedir(d);
    return r;
}

/* The host paths of every mask beneath dir (see mask_instance_root and
 * plan_deny.c: a mask's source is the host path it hides), in *ret as a
 * strv (NULL when there is none); -1 on ENOMEM. */
static int masked_below(const rf_plan *plan, const char *dir, char ***ret)
{
    *ret = NULL;
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        const char *host = m->source ? m->source : m->target;
        if (rf_mount_is_mask(m) && rf_path_is_beneath(host, dir) && rf_strv_push_unique(ret, host) < 0) {
            rf_strv_free(*ret);
            *ret = NULL;
            return -1;
        }
    }
    return 0;
}

/* A bind granted entry by entry: the directories the walk went through
 * have no rule of their own, so they cannot be listed, nor (writable) take
 * a new entry (Landlock grants existing entries only). */
static int note_entrywise(rf_plan *plan, const char *dir, bool write, char *const *masked)
{
    size_t len = 1;
    for (size_t i = 0; masked[i]; i++)
        len += strlen(masked[i]) + 2;
    _cleanup_free_ char *all = calloc(1, len);
    if (!all)
        return -1;
    for (size_t i = 0; masked[i]; i++) {
        strcat(all, i ? ", " : "");
        strcat(all, masked[i]);
    }
    if (!write)
        return rf_strv_pushf(&plan->cannot, "%s (and each directory on the way to %s) cannot be listed: Landlock "
                                            "grants the entries there one by one to keep %s out",
                             dir, all, masked[1] ? "those paths" : "that path");
    return rf_strv_pushf(&plan->cannot, "nothing new can be created directly in %s (nor in a directory on the way "
                                        "to %s), nor can they be listed: Landlock grants the entries there one by "
                                        "one to keep %s out", dir, all, masked[1] ? "those paths" : "that path");
}

/* What a bind of the native backend becomes: a rule on the host path. */
static int host_rules(rf_plan *plan, bool accept_tmp, bool accept_remap)
{
    size_t n = plan->n_mounts;
    for (size_t i = 0; i < n; i++) {
        const rf_mount *m = &plan->mounts[i];
        int r = 0;
        if (m->type == RF_MOUNT_BIND) {
            bool remapped = strcmp(m->source, m->target) != 0 && strcmp(m->why, "etc") != 0;
            if (remapped && !accept_remap)
                continue;
            char **masked = NULL;
            if (masked_below(plan, m->source, &masked) < 0)
                return -1;
            r = masked ? rule_except(plan, m->source, m->writable, masked, 0)
                       : push_rule(plan, m->source, m->writable);
            if (r == 0 && masked)
                r = note_entrywise(plan, m->source, m->writable, masked);
            rf_strv_free(masked);
        } else if (m->type == RF_MOUNT_COPY) {
            /* The curated /etc files the native backend copies in (passwd,
             * ld.so.cache, resolv.conf, gitconfig...): read where they are. */
            r = push_rule(plan, m->source, false);
        } else if (m->type == RF_MOUNT_PROC) {
            r = push_rule(plan, "/proc", false);
        } else if (m->type == RF_MOUNT_TMPFS && !strcmp(m->why, "tmp") && accept_tmp) {
            r = push_rule(plan, m->target, true);
        }
        if (r < 0)
            return -1;
    }
    return 0;
}

/* ── identity of a root caller ───────────────────────────────────────── */

/* May uid/gid (no supplementary groups) use `path` with `want` (a mask of
 * 1 = x, 2 = w, 4 = r), every parent being searchable? From the mode bits:
 * ACLs and LSMs may still say no, which the command then reports. */
static bool mode_allows(const char *path, uid_t uid, gid_t gid, unsigned need)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return false;
    unsigned bits = st.st_uid == uid ? (st.st_mode >> 6) : st.st_gid == gid ? (st.st_mode >> 3) : st.st_mode;
    return (bits & need) == need;
}

static bool usable_as(const char *path, uid_t uid, gid_t gid, unsigned want)
{
    char prefix[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof prefix || path[0] != '/' || !mode_allows("/", uid, gid, 1))
        return false;
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        memcpy(prefix, path, i);
        prefix[i] = '\0';
        if (!mode_allows(prefix, uid, gid, i == len ? want : 1))
            return false;
    }
    return true;
}

/* Can uid/gid pass every directory above the instance root (which itself
 * is made 0711 at start, common.c)? */
bool rf_plan_instance_root_reachable(const char *instance_root, uid_t uid, gid_t gid)
{
    _cleanup_free_ char *above = strdup(instance_root);
    char *slash = above ? strrchr(above, '/') : NULL;
    if (slash)
        *(slash == above ? slash + 1 : slash) = '\0';
    return above && usable_as(above, uid, gid, 1);
}

/* Is `id` inside one of the ranges of a /proc/self/{uid,gid}_map? */
static bool id_mapped(const char *map, unsigned long id)
{
    _cleanup_fclose_ FILE *f = fopen(map, "re");
    unsigned long inside, outside, count;
    while (f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
        if (id >= inside && id - inside < count)
            return true;
    return false;
}

/* Inside a user namespace that maps only root (bwrap --unshare-user, some
 * containers), or one where setgroups is denied, root cannot become the
 * unprivileged id with no groups: refuse rather than keep root's groups. */
static int can_switch_ids(const rf_plan *plan, rf_error **err)
{
    char deny[16] = "";
    _cleanup_fclose_ FILE *f = fopen("/proc/self/setgroups", "re");
    if (f && !fgets(deny, sizeof deny, f))
        deny[0] = '\0';
    const char *why = !id_mapped("/proc/self/uid_map", plan->uid_host) ? "that uid is not mapped"
                      : !id_mapped("/proc/self/gid_map", plan->gid_host) ? "that gid is not mapped"
                      : !strncmp(deny, "deny", 4) ? "setgroups is denied, so root's groups would stay"
                                                  : NULL;
    if (!why)
        return 0;
    rf_error_set(err, 0, "backend landlock: a root caller must run the command as uid %u (map_root_to), "
                         "but cannot here: %s in this user namespace", (unsigned)plan->uid_host, why);
    return rf_error_hint_set(err, "run ringfence as an ordinary user, pass --map-root-to with a uid mapped "
                                  "here, or use the native backend");
}

static int root_caller(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    /* Where the id comes from (plan.c: the workspace's owner by default). */
    const char *from = policy->map_root_to_set || plan->uid_host == policy->map_root_to ? "map_root_to"
                                                                                       : "the workspace's owner";
    if ((plan->uid_host != 0 && can_switch_ids(plan, err) < 0) || rf_backend_refuse_root_instance(plan, policy, err) < 0)
        return -1;
    if (plan->uid_host == 0)
        return rf_error_set(err, 0, "backend landlock: map_root_to is 0, so the command would run as "
                                    "host root with no user namespace around it"),
               rf_error_hint_set(err, "set map_root_to (--map-root-to) to an unprivileged uid such as 65534");
    if (!usable_as(plan->cwd, plan->uid_host, plan->gid_host, 1))
        return rf_error_set(err, EACCES, "backend landlock: a root caller runs the command as uid %u "
                                         "(%s), which cannot enter %s",
                            (unsigned)plan->uid_host, from, plan->cwd),
               rf_error_hint_set(err, "run ringfence as the workspace's owner, pass --map-root-to with the "
                                      "owner's uid, make the path searchable for uid %u, or use --backend native",
                                 (unsigned)plan->uid_host);
    if (!usable_as(policy->workspace, plan->uid_host, plan->gid_host, 3) &&
        rf_strv_pushf(&plan->warnings, "backend landlock: the command runs as uid %u (%s), which cannot "
                               "write the workspace %s", (unsigned)plan->uid_host, from, policy->workspace) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    /* The instance root and below are made usable at start (common.c);
     * what lies above it must already be searchable, or the HOME tree is
     * apart (plan.c), under parents made at start as well. */
    if (plan->user_env_apart)
        return 0;
    if (!rf_plan_instance_root_reachable(plan->instance_root, plan->uid_host, plan->gid_host) &&
        rf_strv_pushf(&plan->warnings, "backend landlock: the command runs as uid %u (%s), which cannot "
                               "reach its HOME under %s; set RINGFENCE_HOME to a directory it can reach",
              (unsigned)plan->uid_host, from, plan->instance_root) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    return 0;
}

/* ── what the landlock backend cannot do ─────────────────────────────── */

typedef struct weaker {
    char **problems; /* refused unless accept_weaker */
    bool remap;
} weaker;

/* A read-only path inside a writable one: native binds it read-only over
 * the writable bind; Landlock's rules only add up, so it would be writable. */
static int ro_inside_rw(const rf_plan *plan, const rf_mount *ro, weaker *w)
{
    if (ro->type != RF_MOUNT_BIND || ro->writable)
        return 0;
    for (size_t j = 0; j < plan->n_mounts; j++) {
        const rf_mount *rw = &plan->mounts[j];
        if (rw->type == RF_MOUNT_BIND && rw->writable && strcmp(rw->source, ro->source) &&
            rf_path_is_beneath(ro->source, rw->source))
            return rf_strv_pushf(&w->problems, "%s would be writable, not read-only (it lies inside the "
                                       "writable %s)", ro->source, rw->source);
    }
    return 0;
}

static int find_problems(const rf_plan *plan, const rf_policy *policy, int abi, weaker *w)
{
    /* Always: what namespaces would give and Landlock cannot. */
    int r = rf_strv_pushf(&w->problems, "no namespaces: host processes stay visible, and /tmp cannot be a private "
                                "mount (the host's /tmp is %s; TMPDIR points into the instance root)",
                  policy->share_tmp ? "shared, share_tmp" : "out of reach instead");
    for (size_t i = 0; r == 0 && i < policy->n_exposes; i++) {
        const rf_expose *e = &policy->exposes[i];
        if (strcmp(e->source, e->target) != 0) {
            w->remap = true;
            r = rf_strv_pushf(&w->problems, "expose %s:%s cannot be remapped: the command would see it at %s",
                      e->source, e->target, e->source);
        }
    }
    for (size_t i = 0; r == 0 && i < plan->n_mounts; i++)
        r = ro_inside_rw(plan, &plan->mounts[i], w);
    for (size_t i = 0; r == 0 && i < plan->n_mounts; i++)
        if (!strcmp(plan->mounts[i].why, "protected"))
            r = rf_strv_pushf(&w->problems, "protected path %s would be writable (Landlock cannot make a "
                                    "read-only hole in the writable workspace)", plan->mounts[i].target);
    if (r == 0 && abi < 3)
        r = rf_strv_pushf(&w->problems, "your files outside the sandbox could be truncated (truncate(2) is "
                                "checked from Landlock ABI 3, this kernel has %d)", abi);
    if (r == 0 && abi < 6)
        r = rf_strv_pushf(&w->problems, "signals and abstract unix sockets are not scoped (needs Landlock ABI 6, "
                                "this kernel has %d): the command could signal your other processes", abi);
    if (r == 0 && plan->network == RF_NET_NONE && plan->seccomp == RF_SECCOMP_OFF)
        r = rf_strv_pushf(&w->problems, "network: none: %s pass with seccomp off (Landlock %s)",
                  abi >= 4 ? "UDP and other non-TCP traffic would" : "all traffic would",
                  abi >= 4 ? "covers TCP only" : "TCP rules need ABI 4");
    return r;
}

static const char *const landlock_cannot[] = {
    "host processes stay visible: /proc is the host's (their memory, environment and descriptors stay "
    "out of reach: Landlock forbids ptrace of processes outside the sandbox)",
    "no private /tmp mount (no mount namespace): the host's /tmp is out of reach (EACCES) and TMPDIR and "
    "XDG_RUNTIME_DIR point to private directories in the instance root; programs that hard-code /tmp fail "
    "there (--share-tmp grants the host's /tmp, a weakening)",
    "paths cannot be remapped: an expose is seen at its host path (target != source is refused unless "
    "accept_weaker)",
    "no hostname or IPC namespace: the hostname and System V IPC objects are the host's",
    "no read-only mounts over /proc/sys: Landlock's read-only rule on /proc and the unprivileged uid keep "
    "it from being written",
    "no private /dev/pts or /dev/shm: new pseudo-terminals and the host's shared memory are not usable",
    "unix sockets with a path (e.g. /run/user/UID/bus) can be connected to when file permissions allow: "
    "Landlock does not check connect()",
    "names and attributes of files outside the allowed paths can be looked up (stat): Landlock checks "
    "opening, not path lookup",
    "read-only paths inside writable ones stay writable (protected paths such as .git/hooks, read-only "
    "exposes inside the workspace): Landlock rules only add up",
    "modes, owners, timestamps and extended attributes of your files outside the allowed paths can be "
    "changed (chmod, utimes, setxattr): Landlock does not check them",
};

const char *const *rf_plan_landlock_cannot(size_t *n)
{
    *n = RF_ARRAY_SIZE(landlock_cannot);
    return landlock_cannot;
}

static int list_cannot(rf_plan *plan, int abi)
{
    for (size_t i = 0; i < RF_ARRAY_SIZE(landlock_cannot); i++)
        if (rf_strv_push(&plan->cannot, landlock_cannot[i]) < 0)
            return -1;
    if (abi < 4 && plan->network == RF_NET_NONE &&
        rf_strv_pushf(&plan->cannot, "TCP is not checked by Landlock (needs ABI 4, this kernel has %d)", abi) < 0)
        return -1;
    if (abi < 3 && rf_strv_pushf(&plan->cannot, "truncate(2) is not checked (needs Landlock ABI 3, this kernel "
                                        "has %d)", abi) < 0)
        return -1;
    if (abi < 6 && rf_strv_pushf(&plan->cannot, "no scoping of signals and abstract unix sockets (needs "
                                        "Landlock ABI 6, this kernel has %d)", abi) < 0)
        return -1;
    if (plan->share_tmp && rf_strv_push(&plan->cannot, "/tmp is the host's (share_tmp): files other users "
                                                       "leave there can be read and replaced") < 0)
        return -1;
    if (plan->network == RF_NET_NONE && plan->seccomp == RF_SECCOMP_OFF &&
        rf_strv_push(&plan->cannot, "network: none without seccomp: UDP and other non-TCP traffic pass") < 0)
        return -1;
    return 0;
}

static int refuse(const weaker *w, rf_error **err)
{
    size_t len = 0;
    for (size_t i = 0; w->problems[i]; i++)
        len += strlen(w->problems[i]) + 2;
    _cleanup_free_ char *all = calloc(1, len + 1);
    if (!all)
        return rf_error_set(err, ENOMEM, "plan");
    for (size_t i = 0; w->problems[i]; i++) {
        strcat(all, i ? "; " : "");
        strcat(all, w->problems[i]);
    }
    rf_error_set(err, 0, "backend landlock cannot honour this policy: %s", all);
    return rf_error_hint_set(err, "accept the weaker sandbox by name with --accept-weaker (accept_weaker: "
                                  "true in the policy), or use --backend native where user namespaces "
                                  "work (see 'ringfence doctor')");
}

static int finish_landlock(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    int abi = rf_landlock_abi();
    if (abi < 1)
        return rf_error_set(err, 0, "backend landlock: this kernel has no usable Landlock%s",
                            abi < 0 ? " (built in, but not in the lsm= boot list)" : ""),
               rf_error_hint_set(err, "use --backend native, or --backend none to run without a sandbox; "
                                      "'ringfence doctor' shows what this host supports");
    if (plan->landlock == RF_LANDLOCK_OFF)
        return rf_error_set(err, 0, "backend landlock with landlock: off: the backend's confinement is Landlock"),
               rf_error_hint_set(err, "drop --landlock off, or use --backend none to run without a sandbox");
    if (plan->caller_is_root && root_caller(plan, policy, err) < 0)
        return -1;
    weaker w = { 0 };
    int r = find_problems(plan, policy, abi, &w);
    if (r == 0 && w.problems && !policy->accept_weaker) {
        refuse(&w, err);
        rf_strv_free(w.problems);
        return -1;
    }
    for (size_t i = 0; r == 0 && w.problems && w.problems[i]; i++)
        r = rf_strv_pushf(&plan->warnings, "backend landlock, weaker sandbox accepted (accept_weaker): %s", w.problems[i]);
    rf_strv_free(w.problems);
    plan->share_tmp = policy->share_tmp;
    if (r == 0 && plan->share_tmp)
        r = rf_strv_push(&plan->warnings, "backend landlock: the host's /tmp is shared with the command "
                                          "(share_tmp)");
    plan->restrict_tcp = plan->network == RF_NET_NONE;
    plan->seccomp_deny_inet = plan->network == RF_NET_NONE && plan->seccomp != RF_SECCOMP_OFF;
    if (r < 0 || host_rules(plan, plan->share_tmp, w.remap) < 0 || list_cannot(plan, abi) < 0)
        return rf_error_set(err, ENOMEM, "plan");
    return 0;
}

static const char *const none_cannot[] = {
    "no filesystem isolation: the command may read and write whatever your user may",
    "no network isolation", "no process isolation: host processes are visible and reachable",
    "no Landlock, no seccomp filter, no_new_privs not set, capabilities kept",
};

static int finish_none(rf_plan *plan)
{
    plan->landlock = RF_LANDLOCK_OFF;
    plan->seccomp = RF_SECCOMP_OFF;
    for (size_t i = 0; i < RF_ARRAY_SIZE(none_cannot); i++)
        if (rf_strv_push(&plan->cannot, none_cannot[i]) < 0)
            return -1;
    if ((plan->seccomp_deny && plan->seccomp_deny[0] &&
         rf_strv_push(&plan->cannot, "seccomp.deny is not applied") < 0) ||
        rf_strv_push(&plan->warnings, "backend none: the command runs WITHOUT a sandbox; only the clean "
                                      "environment, the working directory, the limits, the timeout "
                                      "and the process-tree kill apply") < 0)
        return -1;
    if (plan->caller_is_root && rf_strv_push(&plan->warnings, "backend none: the command runs as host root") < 0)
        return -1;
    /* The masks are in the plan, but nothing mounts them. */
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (!strcmp(plan->mounts[i].why, "denied") &&
            (rf_strv_pushf(&plan->cannot, "deny path %s is not hidden", plan->mounts[i].source) < 0 ||
             rf_strv_pushf(&plan->warnings, "backend none: deny path %s is NOT hidden (no sandbox)",
                           plan->mounts[i].source) < 0))
            return -1;
    return 0;
}

int rf_plan_host_finish(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    if (plan->backend == RF_BACKEND_BWRAP)
        return rf_plan_bwrap_finish(plan, policy, err); /* namespaces: native's */
    if (plan->backend == RF_BACKEND_FIREJAIL)
        return rf_plan_firejail_finish(plan, policy, err);
    plan->clone_flags = 0;
    plan->hostname = NULL;
    if (plan->backend == RF_BACKEND_CONTAINER)
        return rf_container_plan_finish(plan, policy, err);
    if (plan->backend == RF_BACKEND_NONE)
        return finish_none(plan) < 0 ? rf_error_set(err, ENOMEM, "plan") : 0;
    return finish_landlock(plan, policy, err);
}
