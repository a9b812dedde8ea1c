/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan → bubblewrap argv. A pure function of the plan: every mount in the
 * plan's order, the namespaces, the clean environment, the working
 * directory. What bwrap does differently from the native backend:
 *  - /dev: bwrap's own `--dev` makes the same nodes (null, zero, full,
 *    random, urandom, tty), a new devpts and the fd/stdio links, so the
 *    plan's /dev binds, devpts and links are covered by it; /dev/shm gets
 *    its tmpfs as in the plan and /dev is made read-only afterwards;
 *  - small /etc files the native backend copies are bound read-only;
 *  - read-only tmpfs mounts and the root are remounted read-only at the
 *    end, once everything below them is in place (as native seals them). */
#include "backend/bwrap/bwrap.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

typedef struct argv_builder {
    char **v;
    int failed;
} argv_builder;

static void add(argv_builder *b, const char *s)
{
    if (!b->failed && rf_strv_push(&b->v, s) < 0)
        b->failed = 1;
}

static void add2(argv_builder *b, const char *opt, const char *a)
{
    add(b, opt);
    add(b, a);
}

static void add3(argv_builder *b, const char *opt, const char *a, const char *c)
{
    add(b, opt);
    add(b, a);
    add(b, c);
}

static void add_int(argv_builder *b, const char *opt, int n)
{
    char s[16];
    snprintf(s, sizeof s, "%d", n);
    add2(b, opt, s);
}

static void namespaces(argv_builder *b, const rf_plan *plan)
{
    static const struct { int flag; const char *opt; } ns[] = {
        { CLONE_NEWUSER, "--unshare-user" }, { CLONE_NEWIPC, "--unshare-ipc" },
        { CLONE_NEWPID, "--unshare-pid" },   { CLONE_NEWUTS, "--unshare-uts" },
        { CLONE_NEWCGROUP, "--unshare-cgroup-try" }, { CLONE_NEWNET, "--unshare-net" },
    };
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        /* network: allowlist: the monitor has made the network namespace
         * (it holds the proxy's port); bwrap's sandbox shares it. */
        if ((plan->clone_flags & ns[i].flag) && !(ns[i].flag == CLONE_NEWNET && plan->network == RF_NET_ALLOWLIST))
            add(b, ns[i].opt);
    if (plan->hostname && (plan->clone_flags & CLONE_NEWUTS))
        add2(b, "--hostname", plan->hostname);
}

/* Covered by `--dev /dev`: the device binds, devpts and the links below /dev. */
static bool made_by_dev(const rf_mount *m)
{
    if (strcmp(m->why, "dev") != 0 || !rf_path_is_beneath(m->target, "/dev"))
        return false;
    return m->type == RF_MOUNT_DEVPTS || m->type == RF_MOUNT_SYMLINK || (m->type == RF_MOUNT_BIND && m->devices);
}

static void tmpfs(argv_builder *b, const rf_mount *m)
{
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", m->mode & 07777);
    add2(b, "--perms", mode);
    add2(b, "--tmpfs", m->target);
}

/* changes: overlay (bubblewrap 0.10+): the workspace as the lower layer,
 * the session's upper and work directories beside it. */
static void overlay(argv_builder *b, const rf_mount *m)
{
    char *upper = NULL, *work = NULL;
    if (asprintf(&upper, "%s/upper", m->overlay) < 0 || asprintf(&work, "%s/work", m->overlay) < 0) {
        b->failed = 1;
        free(upper);
        return;
    }
    add2(b, "--overlay-src", m->source);
    add3(b, "--overlay", upper, work);
    add(b, m->target);
    free(upper);
    free(work);
}

static void one_mount(argv_builder *b, const rf_mount *m)
{
    if (made_by_dev(m))
        return;
    switch (m->type) {
    case RF_MOUNT_TMPFS:
        if (!strcmp(m->target, "/dev") && !strcmp(m->why, "dev"))
            add2(b, "--dev", "/dev");
        else
            tmpfs(b, m);
        break;
    case RF_MOUNT_BIND:
        if (m->overlay) {
            overlay(b, m);
            break;
        }
        add3(b, m->devices ? "--dev-bind" : m->writable ? "--bind" : "--ro-bind", m->source, m->target);
        break;
    case RF_MOUNT_COPY:
        add3(b, "--ro-bind", m->source, m->target);
        break;
    case RF_MOUNT_MASK_FILE:
        /* bwrap binds nodev unless --dev-bind: the mask cannot be opened. */
        add3(b, "--ro-bind", "/dev/null", m->target);
        break;
    case RF_MOUNT_PROC:
        add2(b, "--proc", m->target);
        break;
    case RF_MOUNT_DEVPTS:
        /* Only --dev makes a devpts instance; a plan without /dev has none. */
        break;
    case RF_MOUNT_SYMLINK:
        add3(b, "--symlink", m->source, m->target);
        break;
    case RF_MOUNT_RO_SELF:
        /* /proc/sys, sysrq-trigger, irq and bus: bwrap's --proc binds them
         * read-only itself (its covered_proc_dirs), the same list as the
         * plan's. A protected path is a host path under its own bind. */
        if (strcmp(m->why, "proc") != 0)
            add3(b, "--ro-bind", m->target, m->target);
        break;
    }
}

/* After every mount: read-only tmpfs mounts (/dev, masks), then the root. */
static void seal(argv_builder *b, const rf_plan *plan)
{
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->type == RF_MOUNT_TMPFS && !m->writable)
            add2(b, "--remount-ro", m->target);
    }
    add2(b, "--remount-ro", "/");
}

static void environment(argv_builder *b, const rf_plan *plan)
{
    add(b, "--clearenv");
    for (size_t i = 0; plan->env && plan->env[i]; i++) {
        const char *eq = strchr(plan->env[i], '=');
        if (!eq)
            continue;
        char name[256];
        size_t len = (size_t)(eq - plan->env[i]);
        if (len == 0 || len >= sizeof name)
            continue; /* the plan's names are short; never a truncated one */
        memcpy(name, plan->env[i], len);
        name[len] = '\0';
        add3(b, "--setenv", name, eq + 1);
    }
}

bool rf_bwrap_wants_seccomp(const rf_plan *plan)
{
    return plan->seccomp != RF_SECCOMP_OFF || (plan->seccomp_deny && plan->seccomp_deny[0]);
}

int rf_bwrap_argv(const rf_plan *plan, char ***ret, rf_error **err)
{
    argv_builder b = { 0 };
    add(&b, RF_BWRAP_PATH);
    namespaces(&b, plan);
    for (size_t i = 0; i < plan->n_mounts; i++)
        one_mount(&b, &plan->mounts[i]);
    seal(&b, plan);
    environment(&b, plan);
    add2(&b, "--chdir", plan->cwd);
    /* bwrap's pid 1 dies with bwrap, bwrap with ringfence's init. */
    add(&b, "--die-with-parent");
    add(&b, "--new-session");
    add2(&b, "--cap-drop", "ALL");
    add_int(&b, "--json-status-fd", RF_BWRAP_STATUS_FD);
    add_int(&b, "--block-fd", RF_BWRAP_BLOCK_FD);
    /* Last: bwrap installs it after its own setup, just before exec. */
    if (rf_bwrap_wants_seccomp(plan))
        add_int(&b, "--seccomp", RF_BWRAP_SECCOMP_FD);
    add(&b, "--");
    add(&b, plan->exec_path);
    for (size_t i = 1; plan->argv && plan->argv[0] && plan->argv[i]; i++)
        add(&b, plan->argv[i]);
    if (b.failed) {
        rf_strv_free(b.v);
        return rf_error_set(err, ENOMEM, "backend bwrap: argv");
    }
    *ret = b.v;
    return 0;
}

json_t *rf_bwrap_plan_json(const rf_plan *plan)
{
    char **argv = NULL;
    json_t *a = json_array();
    if (rf_bwrap_argv(plan, &argv, NULL) == 0)
        for (size_t i = 0; argv[i]; i++)
            json_array_append_new(a, json_string(argv[i]));
    rf_strv_free(argv);
    return json_pack("{s:o, s:{s:i, s:i, s:o}, s:s}", "argv", a, "fds", "status", RF_BWRAP_STATUS_FD, "block",
                     RF_BWRAP_BLOCK_FD, "seccomp",
                     rf_bwrap_wants_seccomp(plan) ? json_integer(RF_BWRAP_SECCOMP_FD) : json_null(), "landlock",
                     "not applied (see cannot)");
}
