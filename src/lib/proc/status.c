/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* From what happened to a sandbox to the status record (and exit code). */
#include "proc/proc.h"
#include "util/error.h"
#include "util/ident.h"
#include "util/strv.h"
#include "limits/cgroup.h"
#include "net/net.h"
#include "observe/observe.h"
#include "audit/run.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>


static const char *setup_hint(const rf_proc *p)
{
    /* Ubuntu 23.10+: the user namespace is made, then every privileged
     * step in it fails; whichever step that is, this is the cause. */
    if ((p->setup_errno == EPERM || p->setup_errno == EACCES) && rf_ident_apparmor_restricts_userns())
        return RF_APPARMOR_HINT;
    if (!strcmp(p->setup_step, "mount /proc") && (p->setup_errno == EPERM || p->setup_errno == EACCES))
        return "this host does not allow mounting a fresh /proc (a container with a masked /proc?); "
               "run 'ringfence doctor', or use --backend landlock";
    if (!strncmp(p->setup_step, "mount point", 11))
        return "the target must exist on the host when it lies inside a read-only bind; "
               "choose a target outside system directories";
    if (!strcmp(p->setup_step, "bind source"))
        return "check that the path exists and that you may read it";
    if (!strcmp(p->setup_step, "bwrap"))
        return "bwrap could not build the sandbox; 'ringfence doctor' shows whether the bwrap backend works "
               "here, --backend native is the default";
    if (!strcmp(p->setup_step, "network namespace") &&
        (p->setup_errno == ENOSPC || p->setup_errno == EUSERS || p->setup_errno == EPERM))
        return "this host allows no more network namespaces to this user, or none at all (sysctl "
               "user.max_net_namespaces, or a container that forbids them): raise the limit, or share the "
               "host's network with --network host";
    if (!strcmp(p->setup_step, "idmap a writable mount"))
        return "as root, the sandbox writes to host paths through an idmapped mount (root inside is "
               "never host root), which this filesystem does not allow on this kernel: put the "
               "workspace (or the rw expose) on ext4, xfs or btrfs, or run ringfence as an ordinary user";
    if (!strcmp(p->setup_step, "mount the workspace overlay") || !strcmp(p->setup_step, "overlay session directory"))
        return "the session's upper layer lives under the instance root (RINGFENCE_HOME), which must be on a "
               "filesystem overlayfs can write to (ext4, xfs, btrfs, tmpfs; not NFS, FUSE or another overlay), "
               "and an unprivileged caller needs Linux 5.11: move RINGFENCE_HOME, or use --changes direct "
               "('ringfence doctor' says what works here)";
    if (!strcmp(p->setup_step, "enter working directory"))
        return "the sandbox user cannot enter it; check its permissions or pass --chdir";
    return NULL;
}

/* files.on_hidden: ask: the observer's questions join the network
 * object's (network.asked_files), where a reader of the record looks. */
static void add_asked_files(const rf_proc *p, rf_status *out)
{
    char *asked = rf_observer_asked(p->observer);
    json_t *a = asked ? json_loads(asked, 0, NULL) : NULL;
    free(asked);
    if (!a)
        return;
    json_t *net = out->network_json ? json_loads(out->network_json, 0, NULL) : json_object();
    if (!net) {
        json_decref(a);
        return;
    }
    if (json_object_set_new(net, "asked_files", a) == 0) { /* steals a, also on failure */
        char *s = json_dumps(net, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (s) {
            free(out->network_json);
            out->network_json = s;
        }
    }
    json_decref(net);
}

static void fill_from_command(rf_status *out, int st)
{
    if (WIFEXITED(st)) {
        out->exited = true;
        out->exit_code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        out->signal = WTERMSIG(st);
        out->exit_code = RF_EXIT_SIGNAL_BASE + out->signal;
    }
}

/* The cgroup knows better than rusage: the peak of the whole tree, and
 * whether the kernel killed for memory or refused a fork at pids.max. */
static void fill_limits(const rf_proc *p, rf_status *out)
{
    out->memory_limit_bytes = p->limits.memory_bytes;
    out->pids_limit = p->limits.pids;
    out->cpu_limit = p->limits.cpu;
    out->timeout_seconds = p->limits.timeout_s;
    out->memory_how = (int)p->how.memory;
    out->pids_how = (int)p->how.pids;
    out->cpu_how = (int)p->how.cpu;
    rf_cgroup_stats cs = { 0 };
    if (p->cgroup && rf_cgroup_read_stats(p->cgroup, &cs) == 0) {
        if (cs.peak_memory_bytes)
            out->peak_memory_bytes = cs.peak_memory_bytes;
        out->oom_killed = cs.oom_killed;
        out->pids_limit_hit = cs.pids_limit_hit;
    }
}

static void fill_status(const rf_proc *p, rf_status *out)
{
    memset(out, 0, sizeof *out);
    out->wall_seconds = 0;
    if (p->setup_error[0] && !p->exec_errno) {
        out->exit_code = RF_EXIT_FAILURE;
        out->setup_error = strdup(p->setup_error);
        const char *hint = setup_hint(p);
        out->setup_hint = hint ? strdup(hint) : NULL;
    } else if (p->exec_errno) {
        out->exit_code = p->exec_errno == ENOENT ? RF_EXIT_NOT_FOUND : RF_EXIT_CANNOT_EXEC;
        out->setup_error = strdup(p->setup_error);
    } else if (p->have_exit) {
        fill_from_command(out, p->exit_status);
    } else if (WIFSIGNALED(p->init_status)) {
        /* init itself was killed (SIGKILL from rf_proc_kill or the
         * timeout): the whole tree died with that signal. */
        out->signal = WTERMSIG(p->init_status);
        out->exit_code = RF_EXIT_SIGNAL_BASE + out->signal;
    } else {
        out->exit_code = WIFEXITED(p->init_status) ? WEXITSTATUS(p->init_status) : RF_EXIT_FAILURE;
    }
    if (p->timed_out) {
        out->timed_out = true;
        out->exit_code = RF_EXIT_TIMEOUT;
    }
    const struct rusage *ru = p->usage;
    out->user_seconds = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
    out->sys_seconds = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
    out->peak_memory_bytes = (uint64_t)ru->ru_maxrss * 1024;
    fill_limits(p, out);
}

/* run.end and what led to it, once; the head goes into the status record
 * so the caller can keep it where the log's owner cannot rewrite it. */
static int audit_end(rf_proc *p, rf_status *out, rf_error **err)
{
    if (p->id[0] && !(out->sandbox = strdup(p->id)))
        return rf_error_set(err, ENOMEM, "status");
    if (!p->audit)
        return 0;
    rf_audit_run *a = p->audit;
    p->audit = NULL;
    int rc = rf_audit_run_end(a, out, err);
    if (rc == 0 && !(out->audit_head = strdup(a->head)))
        rc = rf_error_set(err, ENOMEM, "status");
    rf_audit_run_free(a);
    return rc;
}

int rf_proc_wait_watching(rf_proc *p, rf_proc_watch *watch, rf_status *out, rf_error **err)
{
    if (rf_proc_wait_raw(p, watch, err) < 0)
        return -1;
    fill_status(p, out);
    if (p->session && !(out->session = strdup(p->session)))
        return rf_error_set(err, ENOMEM, "status");
    out->backend = p->backend;
    if (p->weakenings && !(out->weakenings = rf_strv_copy(p->weakenings)))
        return rf_error_set(err, ENOMEM, "status");
    /* Every process of the sandbox is gone: no connection can start now. */
    if (p->net_proxy) {
        rf_net_proxy_stop(p->net_proxy);
        out->network_json = rf_net_proxy_report(p->net_proxy);
    }
    add_asked_files(p, out);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    out->wall_seconds = (double)(t.tv_sec - p->started.tv_sec) + (double)(t.tv_nsec - p->started.tv_nsec) / 1e9;
    if (audit_end(p, out, err) < 0) {
        rf_status_clear(out); /* the caller owns nothing of a failed wait */
        return -1;
    }
    return 0;
}

RF_EXPORT int rf_proc_wait(rf_proc *p, rf_status *out, rf_error **err)
{
    return rf_proc_wait_watching(p, NULL, out, err);
}

RF_EXPORT void rf_status_clear(rf_status *s)
{
    if (!s)
        return;
    free(s->setup_error);
    free(s->setup_hint);
    free(s->network_json);
    free(s->session);
    free(s->sandbox);
    free(s->audit_head);
    rf_strv_free(s->weakenings);
    memset(s, 0, sizeof *s);
}

static json_t *limit_json(json_t *value, int how)
{
    return json_pack("{s:o, s:s}", "limit", value, "enforced_by", rf_limit_how_name((rf_limit_how)how));
}

static json_t *limits_json(const rf_status *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "memory", limit_json(s->memory_limit_bytes ? json_integer((json_int_t)s->memory_limit_bytes)
                                                                      : json_null(), s->memory_how));
    json_object_set_new(o, "pids", limit_json(s->pids_limit ? json_integer((json_int_t)s->pids_limit) : json_null(),
                                              s->pids_how));
    json_object_set_new(o, "cpu", limit_json(s->cpu_limit > 0 ? json_real(s->cpu_limit) : json_null(), s->cpu_how));
    json_object_set_new(o, "timeout_seconds", s->timeout_seconds > 0 ? json_real(s->timeout_seconds) : json_null());
    return o;
}

json_t *rf_status_json(const rf_status *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "exit_code", json_integer(s->exit_code));
    json_object_set_new(o, "signal", s->signal ? json_integer(s->signal) : json_null());
    json_object_set_new(o, "exited", json_boolean(s->exited));
    json_object_set_new(o, "timed_out", json_boolean(s->timed_out));
    json_object_set_new(o, "oom_killed", json_boolean(s->oom_killed));
    json_object_set_new(o, "pids_limit_hit", json_boolean(s->pids_limit_hit));
    json_object_set_new(o, "wall_seconds", json_real(s->wall_seconds));
    json_object_set_new(o, "user_seconds", json_real(s->user_seconds));
    json_object_set_new(o, "sys_seconds", json_real(s->sys_seconds));
    json_object_set_new(o, "peak_memory_bytes", json_integer((json_int_t)s->peak_memory_bytes));
    json_object_set_new(o, "limits", limits_json(s));
    if (s->backend)
        json_object_set_new(o, "backend", json_string(s->backend));
    json_t *weak = json_array();
    for (size_t i = 0; s->weakenings && s->weakenings[i]; i++)
        json_array_append_new(weak, json_string(s->weakenings[i]));
    json_object_set_new(o, "weakenings", weak);
    if (s->session) /* changes: overlay: `ringfence changes diff ID` shows what it did */
        json_object_set_new(o, "session", json_string(s->session));
    if (s->sandbox)
        json_object_set_new(o, "sandbox", json_string(s->sandbox));
    if (s->audit_head) /* `ringfence audit verify` checks the log still ends here */
        json_object_set_new(o, "audit_head", json_string(s->audit_head));
    if (s->network_json)
        json_object_set_new(o, "network", json_loads(s->network_json, 0, NULL));
    if (s->setup_error)
        json_object_set_new(o, "error", json_string(s->setup_error));
    return o;
}

RF_EXPORT char *rf_status_to_json(const rf_status *s)
{
    json_t *o = rf_status_json(s);
    char *out = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return out;
}


RF_EXPORT int rf_run(const rf_plan *plan, const rf_stdio *stdio, rf_status *out, rf_error **err)
{
    rf_proc *p = rf_spawn(plan, stdio, err);
    if (!p)
        return -1;
    int rc = rf_proc_wait(p, out, err);
    rf_proc_free(p);
    return rc;
}
