/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The instance directories: the only thing ringfence creates on the host. */
#include "backend/backend.h"
#include "changes/changes.h"
#include "util/strv.h"
#include "proc/proc.h"
#include "limits/cgroup.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/fault.h"
#include "util/path.h"
#include "channel/report.h"
#include "net/net.h"
#include "tty/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Give one of our directories to the id the command runs as. Opened with
 * O_NOFOLLOW, changed through the fd: a symlink swapped in is not followed. */
static int hand_over(const char *dir, uid_t uid, gid_t gid, rf_error **err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fchown(fd, uid, gid) < 0)
        return rf_error_set(err, errno, "hand instance directory %s to uid %u", dir, (unsigned)uid);
    return 0;
}

static int chmod_nofollow(const char *dir, mode_t mode, rf_error **err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fchmod(fd, mode) < 0)
        return rf_error_set(err, errno, "make instance root %s searchable", dir);
    return 0;
}

/* DIR exists as a directory (not a symlink), made 0700 if it did not;
 * st is what it is. Looked at first: it usually exists already. */
static int ensure_dir(const char *dir, struct stat *st, rf_error **err)
{
    if (lstat(dir, st) < 0) {
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            return rf_error_set(err, errno, "create instance directory %s", dir),
                   rf_error_hint_set(err, "set RINGFENCE_HOME to a writable directory");
        if (lstat(dir, st) < 0)
            st->st_mode = 0;
    }
    if (!S_ISDIR(st->st_mode))
        return rf_error_set(err, ENOTDIR, "instance directory %s", dir),
               rf_error_hint_set(err, "remove %s or set RINGFENCE_HOME elsewhere", dir);
    return 0;
}

/* REL's directory beneath dirfd, walked one component at a time with
 * O_NOFOLLOW rather than by openat2's RESOLVE_BENEATH, which ringfence's own
 * filter answers ENOSYS (ringfence inside ringfence). The tree walked is a
 * sandbox's to write, and a sandbox of the same instance may still run: a
 * symlink planted there, or swapped in racing the walk, fails it (ENOTDIR)
 * instead of leading the caller (maybe root) elsewhere; ".." is EINVAL.
 * make_last makes a missing last component 0700. An O_PATH descriptor, or
 * -1 with errno (ENOENT where a component is missing). */
static int open_beneath(int dirfd, const char *rel, bool make_last)
{
    _cleanup_free_ char *copy = strdup(rel);
    int fd = copy ? fcntl(dirfd, F_DUPFD_CLOEXEC, 3) : -1;
    char *save = NULL;
    for (char *c = copy ? strtok_r(copy, "/", &save) : NULL; fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
        bool last = !save || !*save;
        int next = -1;
        if (!strcmp(c, ".."))
            errno = EINVAL;
        else if (!(make_last && last && mkdirat(fd, c, 0700) < 0 && errno != EEXIST))
            next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(fd);
        errno = e;
        fd = next;
    }
    return fd;
}

/* An expose whose target lies in the instance's tree (learn's ~/.gitconfig
 * at the sandbox's own home): its mount point made here, by the caller in
 * its own directory, empty. The setup child cannot always make it there: on
 * an idmapped bind its own id has no mapping (EOVERFLOW). No symlink in the
 * tree is followed (open_beneath). */
static int make_mount_point(int rootfd, const char *rel, bool dir, uid_t owner, gid_t group, bool chown_it)
{
    _cleanup_free_ char *parent = strdup(rel);
    if (!parent)
        return -1;
    char *slash = strrchr(parent, '/');
    const char *name = slash ? slash + 1 : parent;
    if (slash)
        *slash = '\0';
    _cleanup_close_ int pfd = open_beneath(rootfd, slash ? parent : ".", false);
    if (pfd < 0)
        return errno == ENOENT ? 0 : -1; /* its parent is not there either: the setup child's to make */
    int rc = dir ? mkdirat(pfd, name, 0700) : openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (rc < 0)
        return errno == EEXIST ? 0 : -1;
    if (!dir)
        close(rc);
    return chown_it ? fchownat(pfd, name, owner, group, AT_SYMLINK_NOFOLLOW) : 0;
}

/* A directory strictly inside the command's HOME tree (REL from its top,
 * topfd), made 0700 when missing, through open_beneath; handed to
 * owner:group when chown_it. */
static int ensure_home_dir(int topfd, const char *rel, const char *dir, uid_t owner, gid_t group, bool chown_it,
                           rf_error **err)
{
    errno = 0;
    _cleanup_close_ int fd = open_beneath(topfd, rel, true);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno ? errno : EINVAL;
        rf_error_set(err, e, "instance directory %s", dir);
        if (e == ENOTDIR || e == EINVAL)
            rf_error_hint_set(err, "remove %s (a symlink or a file where a directory belongs; none is followed)",
                              dir);
        return -1;
    }
    if (chown_it && (st.st_uid != owner || st.st_gid != group) &&
        fchownat(fd, "", owner, group, AT_EMPTY_PATH) < 0)
        return rf_error_set(err, errno, "hand instance directory %s to uid %u", dir, (unsigned)owner);
    return 0;
}

static int make_instance_mount_points(const rf_plan *plan, uid_t owner, gid_t group, bool chown_it,
                                      rf_error **err)
{
    _cleanup_close_ int rootfd = -1;
    size_t rlen = strlen(plan->instance_root);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        struct stat st;
        if (m->type != RF_MOUNT_BIND || !rf_path_is_beneath(m->target, plan->instance_root) ||
            !strcmp(m->target, plan->instance_root) || lstat(m->target, &st) == 0)
            continue;
        if (rootfd < 0 &&
            (rootfd = open(plan->instance_root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            return rf_error_set(err, errno, "instance root %s", plan->instance_root);
        if (make_mount_point(rootfd, m->target + rlen + 1, m->source_dir, owner, group, chown_it) < 0)
            return rf_error_set(err, errno, "mount point %s", m->target);
    }
    return 0;
}

/* RF_LANDLOCK_HOMES and its parent: root's own, searchable by all, writable
 * by root alone (0711); anything else found there is refused, never used. */
static int make_homes_parents(rf_error **err)
{
    char path[] = RF_LANDLOCK_HOMES;
    char *slash = strrchr(path, '/');
    *slash = '\0';
    const char *dirs[] = { path, RF_LANDLOCK_HOMES };
    for (size_t i = 0; i < RF_ARRAY_SIZE(dirs); i++) {
        struct stat st;
        if (mkdir(dirs[i], 0711) < 0 && errno != EEXIST)
            return rf_error_set(err, errno, "create %s (the landlock backend's HOME for a root caller)", dirs[i]);
        if (lstat(dirs[i], &st) < 0)
            return rf_error_set(err, errno, "%s", dirs[i]);
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
            return rf_error_set(err, EPERM, "%s is not a directory that only root may write", dirs[i]),
                   rf_error_hint_set(err, "remove it (ringfence makes it root-owned, mode 0711) or set "
                                          "RINGFENCE_HOME to a directory uid the command runs as can reach");
        if (i == 0)
            *slash = '/';
    }
    return 0;
}

int rf_backend_make_instance_dirs(const rf_plan *plan, rf_error **err)
{
    /* A root caller's HOME tree belongs to whoever the command is on disk:
     * the unprivileged id when the landlock backend drops to it, root when
     * the native backend shows root's files through an idmapped mount. Runs
     * of both backends share the tree, so hand it to the right one. */
    bool hand = plan->drop_ids || plan->user_env_handed; /* not idmapped: the command's id owns it */
    uid_t owner = hand ? plan->uid_host : 0;
    gid_t group = hand ? plan->gid_host : 0;
    const char *user_env = plan->drop_ids || plan->caller_is_root ? plan->user_env : NULL;
    if (plan->user_env_apart && make_homes_parents(err) < 0)
        return -1;
    _cleanup_close_ int topfd = -1; /* the HOME tree's top, once made */
    size_t toplen = plan->user_env ? strlen(plan->user_env) : 0;
    for (size_t i = 0; plan->instance_dirs && plan->instance_dirs[i]; i++) {
        const char *dir = plan->instance_dirs[i];
        struct stat st;
        if (topfd >= 0 && rf_path_is_beneath(dir, plan->user_env) && dir[toplen] == '/') {
            if (ensure_home_dir(topfd, dir + toplen + 1, dir, owner, group, user_env != NULL, err) < 0)
                return -1;
            continue;
        }
        if (ensure_dir(dir, &st, err) < 0)
            return -1;
        if (user_env && !strcmp(dir, user_env) && (st.st_uid != owner || st.st_gid != group) &&
            hand_over(dir, owner, group, err) < 0)
            return -1;
        if (plan->user_env && !strcmp(dir, plan->user_env) &&
            (topfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            return rf_error_set(err, errno, "instance directory %s", dir);
        /* The instance root itself: searchable, not listable, so that id
         * reaches its HOME; the other instance directories stay 0700. */
        if (plan->drop_ids && !plan->user_env_apart && !strcmp(dir, plan->instance_root) &&
            (st.st_mode & 07777) != 0711 &&
            chmod_nofollow(dir, 0711, err) < 0)
            return -1;
    }
    return make_instance_mount_points(plan, owner, group, user_env != NULL, err);
}

static bool wants_cgroup(const rf_limits *l)
{
    return l->memory_bytes || l->pids || l->cpu > 0;
}

int rf_backend_make_cgroup(const rf_plan *plan, rf_cgroup **cg, rf_limits_report *how, char ***warnings,
                           rf_error **err)
{
    static bool swept;
    *cg = NULL;
    memset(how, 0, sizeof *how);
    if (!wants_cgroup(&plan->limits))
        return 0;
    if (!swept) {
        rf_cgroup_sweep_stale(RF_CGROUP_STALE_AGE_S);
        swept = true;
    }
    if (rf_cgroup_create(&plan->limits, NULL, cg, how, warnings, err) < 0)
        return -1;
    if (rf_cgroup_keeper_start(*cg, err) < 0) {
        rf_cgroup_destroy(*cg);
        *cg = NULL;
        return -1;
    }
    return 0;
}

/* The owner the sandbox sees the workspace's directory as, on the host:
 * through a root caller's idmap, root's files are the sandbox user's
 * (uid_host); anything else keeps its owner. */
static int session_prepare(const rf_plan *plan, rf_error **err)
{
    struct stat st;
    if (stat(plan->session_workspace, &st) < 0)
        return rf_error_set(err, errno, "workspace %s", plan->session_workspace);
    uid_t uid = st.st_uid;
    gid_t gid = st.st_gid;
    if (plan->caller_is_root && uid == 0)
        uid = plan->uid_host, gid = plan->gid_host;
    /* An unprivileged caller's namespace maps its own ids only: a file it
     * may write with another owner or group cannot be copied up (ids.c).
     * Checked when a session begins (a walk of the workspace, ~2 us an
     * entry, a clean one remembered for a minute), not at each command
     * continuing it. A root caller's id-mapped workspace refuses such
     * writes in either mode alike. */
    rf_changes_ids ids = { { plan->uid_host, geteuid() }, { plan->gid_host, getegid() } };
    if (!plan->caller_is_root && (plan->backend == RF_BACKEND_NATIVE || plan->backend == RF_BACKEND_BWRAP) &&
        access(plan->session_dir, F_OK) != 0 && rf_changes_check_ids(plan->instance_root, plan->session_workspace, &ids, err) < 0)
        return -1;
    return rf_session_prepare(plan->instance_root, plan->session, plan->session_workspace, plan->session_instance,
                              uid, gid, err);
}

int rf_backend_session_open(const rf_plan *plan, int *lock, rf_error **err)
{
    *lock = -1;
    if (!plan->session)
        return 0;
    if (session_prepare(plan, err) < 0)
        return -1;
    *lock = rf_session_lock(plan->session_dir, plan->session, true, err);
    return *lock < 0 ? -1 : 0;
}

int rf_backend_start_prepare(const rf_plan *plan, rf_backend_start *s, rf_error **err)
{
    memset(s, 0, sizeof *s);
    s->session_lock = -1;
    if (rf_backend_make_instance_dirs(plan, err) < 0)
        goto fail;
    if (rf_backend_session_open(plan, &s->session_lock, err) < 0)
        goto fail;
    rf_fault_point("instance-dirs");
    if (rf_placeholders_make(plan, &s->placeholders, err) < 0)
        goto fail;
    rf_fault_point("placeholders");
    if (rf_backend_make_cgroup(plan, &s->cgroup, &s->how, &s->warnings, err) < 0)
        goto fail;
    rf_fault_point("cgroup");
    return 0;
fail:
    rf_backend_start_release(s);
    return -1;
}

void rf_backend_start_release(rf_backend_start *s)
{
    rf_cgroup_destroy(s->cgroup);
    rf_placeholders_remove(s->placeholders);
    rf_strv_free(s->warnings);
    if (s->session_lock >= 0)
        close(s->session_lock);
    memset(s, 0, sizeof *s);
    s->session_lock = -1;
}

void rf_backend_start_give(rf_backend_start *s, rf_proc *proc)
{
    proc->cgroup = s->cgroup;
    proc->placeholders = s->placeholders;
    proc->how = s->how;
    proc->warnings = s->warnings;
    proc->session_lock = s->session_lock;
    memset(s, 0, sizeof *s);
    s->session_lock = -1;
}

int rf_backend_refuse_root_instance(const rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    if (!plan->caller_is_root || !plan->drop_ids || !policy->instance)
        return 0;
    rf_error_set(err, 0, "backend %s: a root caller's instance %s runs under an identity of its own, which only "
                         "the native backend maps onto the instance's tree and the workspace at once (id-mapped "
                         "mounts); with ids dropped the command could not reach both",
                 rf_backend_name(plan->backend), policy->instance);
    return rf_error_hint_set(err, "run instances as root with --backend native, or run ringfence as the "
                                  "workspace's owner");
}

void rf_backend_root_as_owner(rf_plan *plan, const rf_policy *policy)
{
    struct stat st;
    if (!policy->map_root_to_set && policy->workspace && stat(policy->workspace, &st) == 0 && st.st_uid != 0) {
        plan->uid_host = st.st_uid;
        plan->gid_host = st.st_gid == 0 ? 65534 : st.st_gid; /* never root's group */
    }
    plan->uid_inside = plan->uid_host;
    plan->gid_inside = plan->gid_host;
    plan->drop_ids = true;
    for (size_t i = 0; i < plan->n_mounts; i++)
        plan->mounts[i].idmap = false;
}

int rf_backend_start_proxy(const rf_plan *plan, rf_proc *proc, int net_chan, rf_error **err)
{
    if (plan->net.ask && !plan->ask_fn && plan->net.ask_via && !strcmp(plan->net.ask_via, "mcp")) {
        close(net_chan);
        rf_error_set(err, 0, "network.ask: mcp: only ringfence mcp asks its client");
        return rf_error_hint_set(err, "use --ask tty or --ask socket:PATH with ringfence run");
    }
    /* --ask tty: the command must not share the terminal that answers
     * (it could type the answer, or read the keys): only with a pty. */
    if (plan->net.ask && !plan->ask_fn && plan->net.ask_via && !strcmp(plan->net.ask_via, "tty") &&
        !rf_tty_on_callers_terminal(proc->tty)) {
        close(net_chan);
        rf_error_set(err, 0, "--ask tty: the command would share the terminal that answers");
        return rf_error_hint_set(err, "run with --pty on a terminal (native backend), or use --ask socket:PATH");
    }
    int listen_fd = rf_msg_recv_fd(net_chan);
    if (listen_fd < 0) {
        close(net_chan);
        return 0;
    }
    proc->net_proxy = rf_net_proxy_start(&plan->net, listen_fd, plan->net_log_fd, plan->ask_fn, plan->ask_data, err);
    if (!proc->net_proxy) {
        close(net_chan);
        return -1;
    }
    rf_net_proxy_set_command(proc->net_proxy, plan->argv);
    if (!plan->net.publish)
        close(net_chan);
    else if (rf_net_proxy_publish(proc->net_proxy, plan->net.publish, net_chan, err) < 0)
        return -1;
    return rf_net_proxy_run(proc->net_proxy, err);
}
