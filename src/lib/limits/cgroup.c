/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limits/cgroup-private.h"
#include "limits/cgmanager.h"
#include "limits/cgroupfs.h"
#include "limits/limits.h"
#include "limits/systemd.h"

#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The cfs period we write: the kernel default, fine-grained enough for a
 * quarter CPU to feel smooth to an interactive tool. */
#define CPU_PERIOD_US 100000
#define CPU_QUOTA_MIN_US 1000 /* the kernel's minimum quota */
#define NAME_TRIES 16

static unsigned name_counter;

/* Why a controller has no cgroup: errno of the failed step and where. */
typedef struct why_not {
    int errnum;       /* 0: no hierarchy carries the controller */
    const char *step; /* "create a cgroup in", "enable the controller below" */
    const char *dir;  /* borrowed from rf_hierarchies */
    char more[1024];  /* "; ..." after the reason, or "" */
} why_not;

static void why_append(why_not *w, const char *text, const char *arg)
{
    size_t used = strlen(w->more);
    snprintf(w->more + used, sizeof w->more - used, "%s%s", text, arg ? arg : "");
}

static const char *const setting_names[RF_CTRL_N] = { "limits.memory", "limits.pids",
                                                      "limits.cpu" };

static rf_cgroup *cg_new(const char *hint)
{
    rf_cgroup *cg = calloc(1, sizeof(*cg));
    if (!cg)
        return NULL;
    cg->v2_dir = -1;
    cg->keeper_pidfd = cg->keeper_release_fd = -1;
    for (int c = 0; c < RF_CTRL_N; c++)
        cg->ctrl_dir[c] = -1;
    unsigned n = __atomic_fetch_add(&name_counter, 1, __ATOMIC_RELAXED);
    int len = snprintf(cg->name, sizeof cg->name, "ringfence-%d-%u", (int)getpid(), n);
    /* The hint only helps a human reading the tree; keep it to safe bytes. */
    if (hint && *hint && len > 0 && (size_t)len + 2 < sizeof cg->name) {
        char *w = cg->name + len;
        *w++ = '-';
        for (size_t i = 0; hint[i] && i < 32; i++) {
            char ch = hint[i];
            bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                        (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
            *w++ = safe ? ch : '_';
        }
        *w = '\0';
    }
    return cg;
}

/* mkdir our cgroup below parent_dir (retrying with a fresh counter if the
 * name is taken: another pid namespace may share the hierarchy). Returns
 * the index in cg->dirs, or -errno. */
static int cg_add_dir(rf_cgroup *cg, int id, bool v2, const char *parent_dir)
{
    if (cg->n >= RF_CG_MAX_DIRS)
        return -ENOSPC;
    _cleanup_close_ int pfd = open(parent_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return -errno;
    rf_cg_dir *d = &cg->dirs[cg->n];
    snprintf(d->name, sizeof d->name, "%s", cg->name);
    int tries = 0;
    while (mkdirat(pfd, d->name, 0755) < 0) {
        if (errno != EEXIST || ++tries >= NAME_TRIES)
            return -errno;
        unsigned n = __atomic_fetch_add(&name_counter, 1, __ATOMIC_RELAXED);
        snprintf(d->name, sizeof d->name, "ringfence-%d-%u", (int)getpid(), n);
    }
    d->fd = openat(pfd, d->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (d->fd < 0 || asprintf(&d->path, "%s/%s", parent_dir, d->name) < 0) {
        int e = d->fd < 0 ? errno : ENOMEM;
        if (d->fd >= 0)
            close(d->fd);
        unlinkat(pfd, d->name, AT_REMOVEDIR);
        return -e;
    }
    /* Moving a process in needs write access to the common ancestor's
     * cgroup.procs, i.e. our own; root passes, a user needs delegation. */
    if (faccessat(pfd, "cgroup.procs", W_OK, AT_EACCESS) < 0) {
        int e = errno;
        close(d->fd);
        free(d->path);
        d->path = NULL;
        unlinkat(pfd, d->name, AT_REMOVEDIR);
        return -e;
    }
    d->id = id;
    d->v2 = v2;
    d->parent_fd = take_fd(&pfd);
    return (int)cg->n++;
}

static int write_or_fail(const rf_cg_dir *d, rf_ctrl c, const char *file, const char *value,
                         bool optional, rf_error **err)
{
    int r = rf_cgroupfs_write(d->fd, file, value);
    if (r == 0 || (optional && r == -ENOENT))
        return 0;
    return rf_error_set(err, -r, "%s: writing %s to %s/%s", setting_names[c], value, d->path,
                        file);
}

static int write_limit(const rf_cg_dir *d, rf_ctrl c, const rf_limits *l, rf_error **err)
{
    char v[64];
    uint64_t quota = (uint64_t)(l->cpu * CPU_PERIOD_US + 0.5);
    if (quota < CPU_QUOTA_MIN_US)
        quota = CPU_QUOTA_MIN_US;
    switch (c) {
    case RF_CTRL_MEMORY:
        snprintf(v, sizeof v, "%" PRIu64, l->memory_bytes);
        if (d->v2)
            /* swap.max 0: the limit means RAM, not RAM plus swap. oom.group:
             * an OOM ends the sandbox as a whole, so the status can say so. */
            return write_or_fail(d, c, "memory.max", v, false, err) < 0 ||
                           write_or_fail(d, c, "memory.swap.max", "0", true, err) < 0 ||
                           write_or_fail(d, c, "memory.oom.group", "1", true, err) < 0
                       ? -1
                       : 0;
        /* memsw (memory + swap) must stay >= the memory limit: set it after. */
        return write_or_fail(d, c, "memory.limit_in_bytes", v, false, err) < 0 ||
                       write_or_fail(d, c, "memory.memsw.limit_in_bytes", v, true, err) < 0
                   ? -1
                   : 0;
    case RF_CTRL_PIDS:
        snprintf(v, sizeof v, "%" PRIu64, l->pids);
        return write_or_fail(d, c, "pids.max", v, false, err);
    case RF_CTRL_CPU:
        if (d->v2) {
            snprintf(v, sizeof v, "%" PRIu64 " %d", quota, CPU_PERIOD_US);
            return write_or_fail(d, c, "cpu.max", v, false, err);
        }
        snprintf(v, sizeof v, "%d", CPU_PERIOD_US);
        if (write_or_fail(d, c, "cpu.cfs_period_us", v, false, err) < 0)
            return -1;
        snprintf(v, sizeof v, "%" PRIu64, quota);
        return write_or_fail(d, c, "cpu.cfs_quota_us", v, false, err);
    default:
        return 0;
    }
}

/* Is ctrl listed in dir_fd's cgroup.subtree_control? */
static bool v2_enabled(int dir_fd, rf_ctrl c)
{
    char buf[256];
    int fd = openat(dir_fd, "cgroup.subtree_control", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    const char *name = rf_hierarchy_ctrl_name(c);
    for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
        if (strcmp(t, name) == 0)
            return true;
    return false;
}

/* Make the controller available to the children of our own cgroup. We are
 * in it, so it holds a process, and cgroup v2 hands a controller down
 * only from an empty cgroup or the root one. Writing subtree_control
 * elsewhere either fails (EBUSY, memory) or, for the threaded controllers
 * pids and cpu, succeeds and turns our cgroup into a thread root whose
 * new children are invalid domains: clone3(CLONE_INTO_CGROUP) then fails
 * with EOPNOTSUPP, and the caller's cgroup stays changed. So only the
 * root cgroup (the one without a cgroup.type file, whatever a cgroup
 * namespace calls "/") is ever written. */
static int v2_enable_own(int own_fd, rf_ctrl c)
{
    if (v2_enabled(own_fd, c))
        return 0;
    if (faccessat(own_fd, "cgroup.type", F_OK, 0) == 0)
        return -EBUSY;
    char plus[32];
    snprintf(plus, sizeof plus, "+%s", rf_hierarchy_ctrl_name(c));
    return rf_cgroupfs_write(own_fd, "cgroup.subtree_control", plus);
}

static void why_append_all(why_not why[], const bool need[], const char *text, const rf_error *e)
{
    for (int c = 0; c < RF_CTRL_N; c++)
        if (need[c])
            why_append(&why[c], text, rf_error_message(e));
}

/* Where our own cgroup cannot give a sandbox a controller that no v1
 * hierarchy carries either, ask systemd for a delegated scope instead
 * (limits/systemd.h); where no systemd manager answers, divide the
 * hierarchy ourselves as runc's cgroupfs manager does (limits/cgmanager.h).
 * Returns the directory, or NULL with the reasons added to why[] of each
 * controller that needed it. A note (ringfence moved itself) goes to
 * *warnings. */
static const char *v2_scope_if_needed(const rf_hierarchies *h, const bool want[],
                                      const bool own_ok[], why_not why[], char ***warnings)
{
    bool need[RF_CTRL_N], any = false;
    for (int c = 0; c < RF_CTRL_N; c++)
        any |= need[c] = want[c] && !own_ok[c] && !h->v1[c].dir;
    if (!any)
        return NULL;
    const char *dir = NULL;
    rf_error *e = NULL;
    if (rf_systemd_scope_dir(&dir, &e) == 0)
        return dir;
    why_append_all(why, need, "; asking systemd for a delegated scope failed: ", e);
    rf_error_free(e);
    e = NULL;
    char *note = NULL;
    if (rf_cgmanager_dir(h->v2.dir, need, &dir, &note, &e) == 0) {
        if (note && warnings)
            rf_strv_push_take(warnings, note); /* frees note on failure */
        else
            free(note);
        return dir;
    }
    why_append_all(why, need, "; dividing the cgroup hierarchy without systemd failed: ", e);
    rf_error_free(e);
    return NULL;
}

static int setup_v2(rf_cgroup *cg, const rf_hierarchies *h, const bool want[], const rf_limits *l,
                    why_not why[], char ***warnings, rf_error **err)
{
    bool use[RF_CTRL_N] = { false };
    _cleanup_close_ int pfd = open(h->v2.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int c = 0; c < RF_CTRL_N; c++) {
        if (!want[c] || !h->v2_has[c])
            continue;
        int r = pfd < 0 ? -errno : v2_enable_own(pfd, c);
        use[c] = r == 0;
        if (r < 0)
            why[c] = (why_not){ -r, "enable the controller below", h->v2.dir, "" };
        if (r == -EBUSY)
            why_append(&why[c], "; it holds processes, and cgroup v2 hands a controller down "
                                "only from an empty cgroup", NULL);
    }
    const char *parent = h->v2.dir;
    const char *scope = v2_scope_if_needed(h, want, use, why, warnings);
    if (scope) {
        parent = scope;
        _cleanup_close_ int sfd = open(scope, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (int c = 0; c < RF_CTRL_N; c++) {
            use[c] = want[c] && sfd >= 0 && v2_enabled(sfd, c);
            if (want[c] && !use[c])
                why_append(&why[c], "; the delegated cgroup lacks it: ", scope);
        }
    }
    int i = cg_add_dir(cg, 0, true, parent);
    if (i < 0) {
        for (int c = 0; c < RF_CTRL_N; c++)
            if (use[c])
                why[c] = (why_not){ -i, "create a cgroup in", parent, "" };
        return 0; /* the v2 cgroup is optional; limits fall back below */
    }
    cg->v2_dir = i;
    for (int c = 0; c < RF_CTRL_N; c++) {
        if (!use[c])
            continue;
        if (write_limit(&cg->dirs[i], c, l, err) < 0)
            return -1;
        cg->ctrl_dir[c] = i;
    }
    return 0;
}

static int setup_v1(rf_cgroup *cg, const rf_hierarchies *h, rf_ctrl c, const rf_limits *l,
                    why_not *why, rf_error **err)
{
    int i = -1;
    for (size_t k = 0; k < cg->n; k++) /* co-mounted, e.g. cpu,cpuacct */
        if (!cg->dirs[k].v2 && cg->dirs[k].id == h->v1[c].id)
            i = (int)k;
    if (i < 0)
        i = cg_add_dir(cg, h->v1[c].id, false, h->v1[c].dir);
    if (i < 0) {
        *why = (why_not){ -i, "create a cgroup in", h->v1[c].dir, "" };
        return 0;
    }
    if (write_limit(&cg->dirs[i], c, l, err) < 0)
        return -1;
    cg->ctrl_dir[c] = i;
    return 0;
}

static char *why_text(rf_ctrl c, const why_not *w)
{
    char *s = NULL;
    int r = w->errnum
                ? asprintf(&s, "cannot %s %s: %s%s", w->step, w->dir, strerror(w->errnum),
                           w->more)
                : asprintf(&s, "no cgroup hierarchy carries the %s controller%s",
                           rf_hierarchy_ctrl_name(c), w->more);
    return r < 0 ? NULL : s;
}

static int fallback_one(rf_ctrl c, const rf_limits *l, const why_not *w, rf_limits_report *how,
                        char ***warnings, rf_error **err)
{
    rf_limit_how *slot = c == RF_CTRL_MEMORY ? &how->memory : c == RF_CTRL_PIDS ? &how->pids
                                                                                : &how->cpu;
    _cleanup_free_ char *why_alloc = why_text(c, w);
    const char *why = why_alloc ? why_alloc : "?";
    if (l->require_cgroup) {
        /* errno is already in `why`; keep it for rf_error_errno() only. */
        rf_error_set(err, 0, "limits.require_cgroup: no writable cgroup for %s (%s)",
                     setting_names[c], why);
        if (err && *err)
            (*err)->errnum = w->errnum;
        return rf_error_hint_set(err, "run ringfence from a cgroup it may write to (as root, or "
                                      "in a systemd unit with Delegate=yes), or set "
                                      "limits.require_cgroup to false to accept rlimits");
    }
    char *msg = NULL;
    int r;
    if (c == RF_CTRL_MEMORY)
        r = asprintf(&msg, "%s: enforced approximately with RLIMIT_DATA per process (%s)",
                     setting_names[c], why);
    else if (c == RF_CTRL_PIDS)
        r = asprintf(&msg, "%s: enforced approximately with RLIMIT_NPROC, which counts every "
                           "process of the sandbox's user and does not bind host root (%s)",
                     setting_names[c], why);
    else if (l->timeout_s > 0)
        r = asprintf(&msg, "%s: enforced approximately as RLIMIT_CPU of %" PRIu64
                           " s CPU time per process (cpu x timeout) (%s)",
                     setting_names[c], rf_limits_cpu_seconds(l), why);
    else
        r = asprintf(&msg, "%s: not enforced: without limits.timeout there is no CPU-time cap "
                           "to fall back to (%s)",
                     setting_names[c], why);
    *slot = c == RF_CTRL_CPU && l->timeout_s <= 0 ? RF_LIMIT_NONE : RF_LIMIT_RLIMIT;
    if (r < 0)
        return rf_error_set(err, ENOMEM, "%s", setting_names[c]);
    if (!warnings) {
        free(msg);
        return 0;
    }
    /* push_take frees msg on failure */
    return rf_strv_push_take(warnings, msg) < 0 ? rf_error_set(err, ENOMEM, "%s", setting_names[c])
                                                : 0;
}

static int finish_report(rf_cgroup *cg, const rf_limits *l, const bool want[], const why_not why[],
                         rf_limits_report *how, char ***warnings, rf_error **err)
{
    rf_limit_how *slots[RF_CTRL_N] = { &how->memory, &how->pids, &how->cpu };
    for (int c = 0; c < RF_CTRL_N; c++) {
        int i = cg->ctrl_dir[c];
        if (!want[c])
            *slots[c] = RF_LIMIT_NONE;
        else if (i >= 0)
            *slots[c] = cg->dirs[i].v2 ? RF_LIMIT_CGROUP_V2 : RF_LIMIT_CGROUP_V1;
        else if (fallback_one(c, l, &why[c], how, warnings, err) < 0)
            return -1;
    }
    return 0;
}

int rf_cgroup_create(const rf_limits *limits, const char *name_hint, rf_cgroup **out,
                     rf_limits_report *how, char ***warnings, rf_error **err)
{
    rf_limits_report report = { RF_LIMIT_NONE, RF_LIMIT_NONE, RF_LIMIT_NONE };
    rf_cgroup *cg = cg_new(name_hint);
    if (!cg)
        return rf_error_set(err, ENOMEM, "creating the sandbox's cgroup");
    bool want[RF_CTRL_N] = { limits->memory_bytes > 0, limits->pids > 0, limits->cpu > 0 };
    why_not why[RF_CTRL_N] = { { 0 } };
    rf_hierarchies h;
    /* Without /proc there is nothing to find: every limit falls back. */
    if (rf_hierarchy_discover(&h, NULL) == 0 && h.v2.dir &&
        setup_v2(cg, &h, want, limits, why, warnings, err) < 0)
        goto fail;
    for (int c = 0; c < RF_CTRL_N; c++)
        if (want[c] && cg->ctrl_dir[c] < 0 && h.v1[c].dir &&
            setup_v1(cg, &h, c, limits, &why[c], err) < 0)
            goto fail;
    if (finish_report(cg, limits, want, why, &report, warnings, err) < 0)
        goto fail;
    rf_hierarchy_clear(&h);
    *how = report;
    *out = cg;
    return 0;
fail:
    rf_hierarchy_clear(&h);
    rf_cgroup_destroy(cg);
    return -1;
}

int rf_limits_probe(const rf_limits *limits, rf_limits_report *how, char ***warnings,
                    rf_error **err)
{
    rf_cgroup *cg = NULL;
    if (rf_cgroup_create(limits, "probe", &cg, how, warnings, err) < 0)
        return -1;
    rf_cgroup_destroy(cg);
    return 0;
}

int rf_cgroup_v2_dir_fd(const rf_cgroup *cg)
{
    return cg && cg->v2_dir >= 0 ? cg->dirs[cg->v2_dir].fd : -1;
}

const char *rf_cgroup_name(const rf_cgroup *cg)
{
    return cg->name;
}

const char *rf_cgroup_dir(const rf_cgroup *cg, const char *ctrl)
{
    if (!ctrl || !*ctrl)
        return cg->v2_dir >= 0 ? cg->dirs[cg->v2_dir].path : NULL;
    for (int c = 0; c < RF_CTRL_N; c++)
        if (strcmp(ctrl, rf_hierarchy_ctrl_name(c)) == 0)
            return cg->ctrl_dir[c] >= 0 ? cg->dirs[cg->ctrl_dir[c]].path : NULL;
    return NULL;
}

int rf_cgroup_attach(rf_cgroup *cg, pid_t pid, rf_error **err)
{
    char v[32];
    snprintf(v, sizeof v, "%d", (int)pid);
    for (size_t i = 0; i < cg->n; i++) {
        int r = rf_cgroupfs_write(cg->dirs[i].fd, "cgroup.procs", v);
        if (r < 0)
            return rf_error_set(err, -r, "moving pid %d into %s", (int)pid, cg->dirs[i].path);
    }
    return 0;
}

int rf_cgroup_kill(rf_cgroup *cg)
{
    int ret = 0;
    /* v2 first: cgroup.kill takes everything at once; the v1 loops then
     * find nothing left. */
    if (cg->v2_dir >= 0)
        ret = rf_cgroupfs_kill(cg->dirs[cg->v2_dir].fd, true, RF_CG_KILL_TIMEOUT_MS);
    for (size_t i = 0; i < cg->n; i++) {
        if (cg->dirs[i].v2 || cg->dirs[i].fd < 0)
            continue;
        int r = rf_cgroupfs_kill(cg->dirs[i].fd, false, RF_CG_KILL_TIMEOUT_MS);
        if (r < 0 && ret == 0)
            ret = r;
    }
    return ret;
}

int rf_cgroup_kill_and_remove(rf_cgroup *cg)
{
    int ret = rf_cgroup_kill(cg);
    for (size_t i = 0; i < cg->n; i++) {
        rf_cg_dir *d = &cg->dirs[i];
        int r = rf_cgroupfs_rmdir(d->parent_fd, d->name, RF_CG_RMDIR_TIMEOUT_MS);
        if (r < 0 && ret == 0)
            ret = r;
    }
    return ret;
}

int rf_cgroup_read_stats(const rf_cgroup *cg, rf_cgroup_stats *out)
{
    *out = (rf_cgroup_stats){ 0 };
    uint64_t v = 0;
    int mi = cg->ctrl_dir[RF_CTRL_MEMORY], pi = cg->ctrl_dir[RF_CTRL_PIDS];
    if (mi >= 0) {
        const rf_cg_dir *d = &cg->dirs[mi];
        if (rf_cgroupfs_read_u64(d->fd, d->v2 ? "memory.peak" : "memory.max_usage_in_bytes",
                                 NULL, &v) == 0)
            out->peak_memory_bytes = v;
        if (d->v2) {
            out->oom_killed = rf_cgroupfs_read_u64(d->fd, "memory.events", "oom_kill", &v) == 0 &&
                              v > 0;
        } else if (rf_cgroupfs_read_u64(d->fd, "memory.oom_control", "oom_kill", &v) == 0) {
            out->oom_killed = v > 0;
        } else {
            /* Before 4.13 v1 does not count kills; hitting the limit is the
             * closest sign. */
            out->oom_killed = rf_cgroupfs_read_u64(d->fd, "memory.failcnt", NULL, &v) == 0 &&
                              v > 0;
        }
    }
    if (pi >= 0)
        out->pids_limit_hit = rf_cgroupfs_read_u64(cg->dirs[pi].fd, "pids.events", "max", &v) ==
                                  0 &&
                              v > 0;
    return 0;
}

void rf_cgroup_destroy(rf_cgroup *cg)
{
    if (!cg)
        return;
    /* Release the keeper first: it does the same idempotent work, so its
     * wake-up overlaps ours instead of adding to it. */
    rf_cgroup_keeper_release(cg);
    rf_cgroup_kill_and_remove(cg);
    rf_cgroup_keeper_stop(cg);
    for (size_t i = 0; i < cg->n; i++) {
        close(cg->dirs[i].fd);
        close(cg->dirs[i].parent_fd);
        free(cg->dirs[i].path);
    }
    free(cg);
}
