/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan → `podman run` (or `docker run`) argv. A pure function of the plan
 * and the options choose.c decided: no file is read, nothing is probed, so
 * tests/unit/test-container.c compares it with golden files.
 *
 * Mapping: each bind and copied /etc file becomes a --mount bind (read-only
 * unless the plan writes there), each tmpfs a --mount tmpfs; /proc, /dev
 * and the read-only /proc/sys, /proc/irq, /proc/bus are the runtime's own
 * (podman masks and write-protects the same paths); symlinks are made in
 * the --rootfs directory (rootfs.c). With an image, the system part of the
 * plan (/usr, /etc, the executable's directory) is the image's instead. */
#include "backend/container/container.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(char ***v, const char *s)
{
    return rf_strv_push(v, s);
}

static bool under_dev(const char *p)
{
    return !strcmp(p, "/dev") || !strncmp(p, "/dev/", 5);
}

/* The userland an image brings replaces these plan entries. */
static bool system_part(const rf_mount *m)
{
    static const char *const whys[] = { "system", "etc", "masked", "executable", NULL };
    for (size_t i = 0; m->why && whys[i]; i++)
        if (!strcmp(m->why, whys[i]))
            return true;
    return false;
}

/* --mount splits its value at commas: a path with one cannot be said. */
static int check_path(const char *p, rf_error **err)
{
    if (!strpbrk(p, ",\n"))
        return 0;
    rf_error_set(err, EINVAL, "backend container: the path \"%s\" holds a comma or a newline, which podman's "
                              "--mount cannot express", p);
    return rf_error_hint_set(err, "rename it, or use --backend native");
}

static int add_bind(char ***v, const rf_container_opts *o, const char *src, const char *dst, bool rw)
{
    if (push(v, "--mount") < 0)
        return -1;
    return rf_strv_pushf(v, "type=bind,source=%s,destination=%s%s", src, dst,
                 rw ? "" : o->tool == RF_CT_PODMAN ? ",ro=true" : ",readonly");
}

/* changes: overlay: podman's overlay volume with the session's upper and
 * work directories (docs/changes.md). -v splits at ':' and ',': such paths
 * cannot be said. docker has no overlay volume. */
static int add_overlay(char ***v, const rf_container_opts *o, const rf_mount *m, rf_error **err)
{
    if (o->tool != RF_CT_PODMAN) {
        rf_error_set(err, 0, "changes: overlay: docker has no overlay volumes");
        return rf_error_hint_set(err, "use podman, or --backend native");
    }
    if (strchr(m->source, ':') || strchr(m->overlay, ':')) {
        rf_error_set(err, EINVAL, "changes: overlay: the path \"%s\" holds a ':', which podman's --volume cannot "
                                  "express", strchr(m->source, ':') ? m->source : m->overlay);
        return rf_error_hint_set(err, "use --backend native");
    }
    if (push(v, "--volume") < 0 ||
        rf_strv_pushf(v, "%s:%s:O,upperdir=%s/upper,workdir=%s/work", m->source, m->target, m->overlay,
                      m->overlay) < 0)
        return rf_error_set(err, ENOMEM, "backend container: argv");
    return 0;
}

static int add_tmpfs(char ***v, const rf_container_opts *o, const rf_mount *m)
{
    if (push(v, "--mount") < 0)
        return -1;
    /* podman copies the image's content into a tmpfs by default
     * (tmpcopyup), which fails in a user namespace on a --rootfs. */
    return rf_strv_pushf(v, "type=tmpfs,destination=%s,tmpfs-mode=%o%s%s", m->target, m->mode ? m->mode : 0755,
                 o->tool == RF_CT_PODMAN ? ",notmpcopyup" : "",
                 m->writable ? "" : o->tool == RF_CT_PODMAN ? ",ro=true" : ",readonly");
}

static int add_one_mount(char ***v, const rf_container_opts *o, const rf_mount *m, rf_error **err)
{
    if (o->image && system_part(m))
        return 0;
    if (under_dev(m->target))
        return 0; /* the runtime's /dev: null, zero, full, random, urandom, tty, pts, shm */
    if (check_path(m->target, err) < 0 || (m->source && check_path(m->source, err) < 0))
        return -1;
    int r = 0;
    if (m->overlay)
        return add_overlay(v, o, m, err);
    switch (m->type) {
    case RF_MOUNT_BIND:
    case RF_MOUNT_COPY:
        r = add_bind(v, o, m->source, m->target, m->writable && m->type == RF_MOUNT_BIND);
        break;
    case RF_MOUNT_TMPFS:
        /* The instance root holds this container's own rootfs, and the
         * runtime's nested mount over a read-only tmpfs there leaves the
         * user environment unreachable: it is bound read-only instead, so
         * nothing in it can be changed (its entries stay readable). */
        r = strcmp(m->why, "instance-root") ? add_tmpfs(v, o, m) : add_bind(v, o, m->source, m->target, false);
        break;
    case RF_MOUNT_MASK_FILE:
        /* /proc/keys: the runtimes mask it themselves (their default
         * maskedPaths), and refuse a mount inside /proc. Elsewhere, what
         * those maskedPaths do for a file. */
        if (m->why && !strcmp(m->why, "proc"))
            return 0;
        r = add_bind(v, o, "/dev/null", m->target, false);
        break;
    case RF_MOUNT_RO_SELF:
        /* /proc/sys and friends: the runtime's defaults; a protected path
         * exists on the host (a placeholder when absent). */
        if (m->why && !strcmp(m->why, "proc"))
            return 0;
        r = add_bind(v, o, m->target, m->target, false);
        break;
    case RF_MOUNT_PROC:
    case RF_MOUNT_DEVPTS:
    case RF_MOUNT_SYMLINK:
        return 0;
    }
    return r < 0 ? rf_error_set(err, ENOMEM, "backend container: argv") : 0;
}

static int add_identity(char ***v, const rf_plan *plan, const rf_container_opts *o)
{
    if (o->rootless && push(v, "--userns=keep-id") < 0)
        return -1;
    if (push(v, "--user") < 0)
        return -1;
    if (o->host_root)
        return push(v, "0:0");
    return rf_strv_pushf(v, "%u:%u", (unsigned)plan->uid_inside, (unsigned)plan->gid_inside);
}

static int add_limits(char ***v, const rf_plan *plan, const rf_container_opts *o)
{
    const rf_limits *l = &plan->limits;
    int r = 0;
    if (r == 0)
        r = rf_strv_pushf(v, "--ulimit=nofile=%lu:%lu", o->nofile, o->nofile);
    if (r == 0)
        r = rf_strv_pushf(v, "--ulimit=nproc=%lu:%lu", o->nproc, o->nproc);
    if (o->no_limits)
        return r;
    /* The same value as swap limit: memory + swap, so no swap at all. */
    if (r == 0 && l->memory_bytes)
        r = rf_strv_pushf(v, "--memory=%llu", (unsigned long long)l->memory_bytes);
    if (r == 0 && l->memory_bytes)
        r = rf_strv_pushf(v, "--memory-swap=%llu", (unsigned long long)l->memory_bytes);
    if (r == 0 && l->pids)
        r = rf_strv_pushf(v, "--pids-limit=%llu", (unsigned long long)l->pids);
    if (r == 0 && l->cpu > 0)
        r = rf_strv_pushf(v, "--cpus=%g", l->cpu);
    return r;
}

static int add_options(char ***v, const rf_plan *plan, const rf_container_opts *o)
{
    bool podman = o->tool == RF_CT_PODMAN;
    int r = push(v, o->tool_path);
    if (r == 0 && o->runtime)
        r = rf_strv_pushf(v, "--runtime=%s", o->runtime);
    if (r == 0)
        r = push(v, "run") < 0 || push(v, "--rm") < 0 || push(v, "--interactive") < 0 ||
            rf_strv_pushf(v, "--name=%s", o->name) < 0 || push(v, "--sig-proxy=false") < 0 ? -1 : 0;
    if (r == 0 && o->image)
        r = push(v, "--pull=never");
    /* pid 1 ignores the signals it has no handler for: the command must
     * not be it, or a SIGTERM passed on would do nothing. */
    if (r == 0 && o->init)
        r = push(v, "--init");
    if (r == 0)
        r = plan->network == RF_NET_ALLOWLIST && o->netns_path
                ? rf_strv_pushf(v, "--network=ns:%s", o->netns_path)
                : rf_strv_pushf(v, "--network=%s", plan->network == RF_NET_HOST ? "host" : "none");
    if (r == 0 && plan->network != RF_NET_HOST)
        r = push(v, "--hostname=ringfence");
    if (r == 0)
        r = push(v, "--cap-drop=all") < 0 || push(v, "--security-opt=no-new-privileges") < 0 ? -1 : 0;
    if (r == 0)
        r = o->seccomp_path ? rf_strv_pushf(v, "--security-opt=seccomp=%s", o->seccomp_path)
                            : push(v, "--security-opt=seccomp=unconfined");
    if (r == 0)
        r = push(v, "--read-only");
    /* podman mounts its own tmpfs on /run, /tmp and /var/tmp of a
     * read-only container; the plan says what is writable instead. */
    if (r == 0 && podman)
        r = push(v, "--read-only-tmpfs=false");
    if (r == 0 && podman && o->rootfs)
        r = push(v, "--no-hosts");
    if (r == 0)
        r = add_identity(v, plan, o);
    if (r == 0)
        r = rf_strv_pushf(v, "--workdir=%s", plan->cwd);
    if (r == 0 && podman)
        r = push(v, "--unsetenv-all");
    for (size_t i = 0; r == 0 && plan->env && plan->env[i]; i++)
        r = push(v, "--env") < 0 || push(v, plan->env[i]) < 0 ? -1 : 0;
    if (r == 0)
        r = add_limits(v, plan, o);
    return r;
}

int rf_container_argv(const rf_plan *plan, const rf_container_opts *o, char ***ret, rf_error **err)
{
    char **v = calloc(1, sizeof(char *));
    if (!v || add_options(&v, plan, o) < 0) {
        rf_strv_free(v);
        return rf_error_set(err, ENOMEM, "backend container: argv");
    }
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (add_one_mount(&v, o, &plan->mounts[i], err) < 0) {
            rf_strv_free(v);
            return -1;
        }
    int r = o->image ? push(&v, o->image) : push(&v, "--rootfs") < 0 ? -1 : push(&v, o->rootfs);
    /* With an image the command is looked up in the image's PATH; on the
     * plan's own root it is the path the plan resolved. */
    if (r == 0)
        r = push(&v, o->image || !plan->exec_path ? plan->argv[0] : plan->exec_path);
    for (size_t i = 1; r == 0 && plan->argv[i]; i++)
        r = push(&v, plan->argv[i]);
    if (r < 0) {
        rf_strv_free(v);
        return rf_error_set(err, ENOMEM, "backend container: argv");
    }
    *ret = v;
    return 0;
}
