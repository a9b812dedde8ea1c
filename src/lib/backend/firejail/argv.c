/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan → firejail profile and argv. firejail takes at most 127 arguments,
 * so everything but the command goes into a profile (one option a line,
 * handed over in a memfd). firejail cannot build a root of its own; it
 * shows the host's and takes things away. So:
 *  - the host's / is read-only, the plan's writable binds read-write, and
 *    read-only binds and protected paths inside those read-only again;
 *  - every host entry that the plan does not show is blacklisted: a walk
 *    from / that descends only into directories holding something shown
 *    (/home → /home/u → the workspace) and blacklists each other entry;
 *  - /proc, /dev and /tmp are firejail's own (a fresh /proc with /proc/sys
 *    read-only, --private-dev, a private /tmp holding only the plan's
 *    binds below it, through --whitelist);
 *  - the command starts through env, which takes back what firejail sets
 *    in the environment, so the command's is the plan's. */
#include "backend/firejail/firejail.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
    char **v;        /* the argv */
    char **lines;    /* the profile */
    int failed;      /* ENOMEM, or EINVAL with bad set */
    char *bad;       /* a host path the profile cannot name */
    const rf_plan *plan;
    bool private_tmp; /* /tmp is a tmpfs in the plan: firejail's own */
    bool private_dev; /* so is /dev */
    rf_firejail_lister list;
    void *data;
} builder;

static void add(builder *b, const char *s)
{
    if (!b->failed && rf_strv_push(&b->v, s) < 0)
        b->failed = ENOMEM;
}

/* A profile line: OPTION, or OPTION ARGUMENT. */
static void line(builder *b, const char *option)
{
    if (!b->failed && rf_strv_push(&b->lines, option) < 0)
        b->failed = ENOMEM;
}

static void opt(builder *b, const char *option, const char *arg)
{
    if (b->failed)
        return;
    if (strchr(arg, '\n')) { /* one option a line: never a second one */
        b->bad = strdup(arg);
        b->failed = b->bad ? EINVAL : ENOMEM;
        return;
    }
    if (rf_strv_pushf(&b->lines, "%s %s", option, arg) < 0)
        b->failed = ENOMEM;
}

/* firejail's own: never blacklisted, so it can run at all. */
static const char *const kept[] = { "/run/firejail" };

static bool is_mask(const rf_mount *m)
{
    return m->type == RF_MOUNT_MASK_FILE || (m->type == RF_MOUNT_TMPFS && !m->writable && strcmp(m->target, "/dev") != 0);
}

/* Does the plan show this mount's target (a mask hides it; a read-only
 * remount changes nothing about what is there)? */
static bool shows(const rf_mount *m)
{
    return m->type != RF_MOUNT_RO_SELF && !is_mask(m);
}

/* Made by firejail, not walked: /proc, /dev, and a private /tmp. */
static bool managed(const builder *b, const char *p)
{
    return !strcmp(p, "/proc") || !strcmp(p, "/dev") || (b->private_tmp && !strcmp(p, "/tmp"));
}

/* 1: p is shown whole; 2: something below p is shown; 0: neither. Only
 * mounts beneath `within` count: inside a mask, the bind around it does
 * not show what the mask hides. */
static int shown(const builder *b, const char *p, const char *within)
{
    int r = 0;
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        if (rf_path_is_beneath(p, kept[i]))
            return 1;
        else if (rf_path_is_beneath(kept[i], p))
            r = 2;
    for (size_t i = 0; i < b->plan->n_mounts; i++) {
        const rf_mount *m = &b->plan->mounts[i];
        if (!shows(m) || !rf_path_is_beneath(m->target, within))
            continue;
        if (rf_path_is_beneath(p, m->target))
            return 1;
        if (rf_path_is_beneath(m->target, p))
            r = 2;
    }
    return r;
}

/* Blacklist every entry of dir that the plan does not show (within:
 * see shown), walking into those that hold something shown. */
static void hide(builder *b, const char *dir, const char *within, int depth)
{
    char **names = b->list(dir, b->data);
    if (!names) {
        b->failed = ENOMEM;
        return;
    }
    for (size_t i = 0; names[i] && !b->failed; i++) {
        char *p = rf_path_join(dir, names[i]);
        if (!p) {
            b->failed = ENOMEM;
            break;
        }
        int s = managed(b, p) ? 1 : shown(b, p, within);
        if (s == 2 && depth >= 64) { /* never leave it unwalked: refuse */
            b->bad = p;
            b->failed = EINVAL;
            break;
        }
        if (s == 2)
            hide(b, p, within, depth + 1);
        else if (s == 0)
            opt(b, "blacklist", p);
        free(p);
    }
    rf_strv_free(names);
}

static void tmp(builder *b)
{
    if (!b->private_tmp)
        return;
    size_t n = 0;
    for (size_t i = 0; i < b->plan->n_mounts; i++) {
        const rf_mount *m = &b->plan->mounts[i];
        if (shows(m) && strcmp(m->target, "/tmp") != 0 && rf_path_is_beneath(m->target, "/tmp")) {
            opt(b, "whitelist", m->target);
            n++;
        }
    }
    line(b, n ? "read-write /tmp" : "private-tmp");
}

/* firejail's blacklist hides a whole subtree, so a mask that holds a
 * shown mount (the instance root around the user environment) becomes
 * a blacklist of its other entries and a read-only remount of itself. */
static void mask(builder *b, const rf_mount *m)
{
    if (shown(b, m->target, m->target) != 2) {
        opt(b, "blacklist", m->target);
        return;
    }
    hide(b, m->target, m->target, 0);
    opt(b, "read-only", m->target);
}

static bool inside_mask(const rf_plan *plan, const char *target)
{
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (is_mask(&plan->mounts[i]) && strcmp(plan->mounts[i].target, target) != 0 &&
            rf_path_is_beneath(target, plan->mounts[i].target))
            return true;
    return false;
}

/* Read-only root, writable binds, read-only again inside those. */
static void access_modes(builder *b)
{
    const rf_plan *plan = b->plan;
    line(b, "read-only /");
    if (b->private_dev)
        line(b, "read-only /dev");
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->writable && m->type == RF_MOUNT_BIND && !rf_path_is_beneath(m->target, "/dev"))
            opt(b, "read-write", m->target);
        else if (m->writable && m->type == RF_MOUNT_TMPFS && !strcmp(m->target, "/dev/shm"))
            line(b, "read-write /dev/shm");
    }
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        bool ro = ((m->type == RF_MOUNT_BIND || m->type == RF_MOUNT_COPY) && !m->writable) ||
                  m->type == RF_MOUNT_RO_SELF;
        /* Also where nothing writable is around: a host mount point there
         * (/etc/hosts in a container) is not covered by `read-only /`. */
        if (ro && !rf_path_is_kernel_fs(m->target))
            opt(b, "read-only", m->target);
        if (is_mask(m))
            mask(b, m);
    }
    /* A writable bind inside a mask (the user environment inside the
     * instance root) was made read-only with it: writable again. */
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->writable && m->type == RF_MOUNT_BIND && inside_mask(plan, m->target))
            opt(b, "read-write", m->target);
    }
}

static void namespaces(builder *b)
{
    const rf_plan *plan = b->plan;
    if (plan->clone_flags & CLONE_NEWNET)
        line(b, "net none");
    if (plan->clone_flags & CLONE_NEWIPC)
        line(b, "ipc-namespace");
    if (plan->hostname && (plan->clone_flags & CLONE_NEWUTS))
        opt(b, "hostname", plan->hostname);
    /* A user namespace holding only the caller: set-uid programs inside
     * give nothing. firejail offers it to unprivileged callers only. */
    if (!plan->caller_is_root || plan->drop_ids)
        line(b, "noroot");
}

static void privileges(builder *b)
{
    const rf_plan *plan = b->plan;
    line(b, "caps.drop all");
    line(b, "nonewprivs");
    line(b, "nogroups");
    bool deny = plan->seccomp_deny && plan->seccomp_deny[0];
    if (plan->seccomp == RF_SECCOMP_OFF && !deny)
        return;
    if (deny) {
        char *list = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&list, &len);
        for (size_t i = 0; f && plan->seccomp_deny[i]; i++)
            fprintf(f, "%s%s", i ? "," : "", plan->seccomp_deny[i]);
        if (!f || fclose(f) != 0)
            b->failed = ENOMEM;
        else
            opt(b, "seccomp", list);
        free(list);
    } else {
        line(b, "seccomp");
    }
    line(b, "seccomp.block-secondary");
    line(b, "restrict-namespaces");
}

static void devices(builder *b)
{
    static const char *const no[] = { "nosound", "no3d", "novideo", "nodvd", "notv", "nou2f" };
    if (!b->private_dev)
        return;
    line(b, "private-dev");
    for (size_t k = 0; k < sizeof no / sizeof no[0]; k++)
        line(b, no[k]);
}

/* What firejail sets in the command's environment: env takes each back
 * (to the plan's value, or unset). */
static const char *const firejail_sets[] = { "SHELL", "FIREJAIL_QUIET", "KDE_FORK_SLAVES", "PWD", "container",
                                             "PROMPT_COMMAND", "SHLVL", "PATH", "QML_DISABLE_DISK_CACHE",
                                             "QT_X11_NO_MITSHM", "_", "TMPDIR" };

static const char *plan_env(const rf_plan *plan, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; plan->env && plan->env[i]; i++)
        if (!strncmp(plan->env[i], name, n) && plan->env[i][n] == '=')
            return plan->env[i];
    return NULL;
}

static void command(builder *b)
{
    const rf_plan *plan = b->plan;
    char profile[40];
    snprintf(profile, sizeof profile, "--profile=/proc/self/fd/%d", RF_FIREJAIL_PROFILE_FD);
    add(b, profile);
    add(b, "--");
    add(b, RF_FIREJAIL_ENV_PATH);
    for (size_t i = 0; i < sizeof firejail_sets / sizeof firejail_sets[0]; i++)
        if (!plan_env(plan, firejail_sets[i])) {
            add(b, "-u");
            add(b, firejail_sets[i]);
        }
    add(b, "-C");
    add(b, plan->cwd);
    add(b, "--");
    for (size_t i = 0; i < sizeof firejail_sets / sizeof firejail_sets[0]; i++)
        if (plan_env(plan, firejail_sets[i]))
            add(b, plan_env(plan, firejail_sets[i]));
    add(b, plan->exec_path); /* plan.c refuses a path with '=' */
    for (size_t i = 1; plan->argv && plan->argv[0] && plan->argv[i]; i++)
        add(b, plan->argv[i]);
}

static char *joined_lines(char **lines)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    for (size_t i = 0; f && lines && lines[i]; i++)
        fprintf(f, "%s\n", lines[i]);
    if (!f || fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int rf_firejail_build(const rf_plan *plan, rf_firejail_lister list, void *data, rf_firejail_invocation *out,
                      rf_error **err)
{
    builder b = { .plan = plan, .list = list, .data = data };
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (plan->mounts[i].type == RF_MOUNT_TMPFS) {
            b.private_tmp |= !strcmp(plan->mounts[i].target, "/tmp");
            b.private_dev |= !strcmp(plan->mounts[i].target, "/dev");
        }
    add(&b, RF_FIREJAIL_PATH);
    line(&b, "quiet");
    /* The command's status, and its orphans killed when it ends. */
    line(&b, "deterministic-exit-code");
    line(&b, "deterministic-shutdown");
    namespaces(&b);
    devices(&b);
    tmp(&b);
    hide(&b, "/", "/", 0);
    access_modes(&b);
    privileges(&b);
    command(&b);
    char *profile = b.failed ? NULL : joined_lines(b.lines);
    rf_strv_free(b.lines);
    if (b.failed == EINVAL)
        rf_error_set(err, 0, "backend firejail: a firejail profile cannot name the host path %s (a newline in "
                             "its name, or more than 64 directories deep)", b.bad),
            rf_error_hint_set(err, "rename it, or use --backend native or bwrap");
    else if (b.failed || !profile)
        rf_error_set(err, ENOMEM, "backend firejail: argv");
    free(b.bad);
    if (b.failed || !profile) {
        rf_strv_free(b.v);
        free(profile);
        return -1;
    }
    out->argv = b.v;
    out->profile = profile;
    return 0;
}

void rf_firejail_invocation_free(rf_firejail_invocation *inv)
{
    rf_strv_free(inv->argv);
    free(inv->profile);
    inv->argv = NULL;
    inv->profile = NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **rf_firejail_list_host(const char *dir, void *data)
{
    (void)data;
    char **v = calloc(1, sizeof(char *));
    DIR *d = v ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && rf_strv_push(&v, e->d_name) < 0) {
            rf_strv_free(v);
            v = NULL;
            break;
        }
    if (d)
        closedir(d);
    if (v)
        qsort(v, rf_strv_len(v), sizeof(char *), by_name);
    return v;
}

json_t *rf_firejail_plan_json(const rf_plan *plan)
{
    rf_firejail_invocation inv = { 0 };
    json_t *a = json_array(), *p = json_array();
    if (rf_firejail_build(plan, rf_firejail_list_host, NULL, &inv, NULL) == 0) {
        for (size_t i = 0; inv.argv[i]; i++)
            json_array_append_new(a, json_string(inv.argv[i]));
        for (char *save = NULL, *l = strtok_r(inv.profile, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            json_array_append_new(p, json_string(l));
    }
    rf_firejail_invocation_free(&inv);
    return json_pack("{s:o, s:o, s:i, s:s, s:s}", "argv", a, "profile", p, "profile_fd", RF_FIREJAIL_PROFILE_FD,
                     "landlock", "not applied (see cannot)", "seccomp", "firejail's own filter (see cannot)");
}
