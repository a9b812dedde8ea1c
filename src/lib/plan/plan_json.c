/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan as JSON: what `ringfence plan` prints and what debug logging
 * shows before every start ("linux isolation mount plan", seed 000). */
#include "backend/container/container.h"
#include "plan/build.h"
#include "landlock/landlock.h"
#include "backend/bwrap/bwrap.h"
#include "backend/firejail/firejail.h"
#include "limits/cgroup.h"
#include "seccomp/seccomp.h"
#include "backend/native/floor.h"
#include "util/strv-json.h"

#include <jansson.h>
#include <sched.h>
#include <stdlib.h>

static const char *mount_type_name(rf_mount_type t)
{
    switch (t) {
    case RF_MOUNT_TMPFS: return "tmpfs";
    case RF_MOUNT_BIND: return "bind";
    case RF_MOUNT_PROC: return "proc";
    case RF_MOUNT_DEVPTS: return "devpts";
    case RF_MOUNT_SYMLINK: return "symlink";
    case RF_MOUNT_RO_SELF: return "remount-ro";
    case RF_MOUNT_COPY: return "copy";
    case RF_MOUNT_MASK_FILE: return "file-mask";
    }
    return "?";
}

static json_t *namespaces_json(const rf_plan *plan)
{
    static const struct { int flag; const char *name; } ns[] = {
        { CLONE_NEWUSER, "user" }, { CLONE_NEWNS, "mount" }, { CLONE_NEWPID, "pid" },
        { CLONE_NEWIPC, "ipc" },   { CLONE_NEWUTS, "uts" },  { CLONE_NEWNET, "net" },
        { CLONE_NEWCGROUP, "cgroup" },
    };
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        if (plan->clone_flags & ns[i].flag)
            json_array_append_new(a, json_string(ns[i].name));
    return a;
}

static json_t *mounts_json(const rf_plan *plan)
{
    json_t *a = json_array();
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        json_t *o = json_object();
        json_object_set_new(o, "type", json_string(mount_type_name(m->type)));
        if (m->source)
            json_object_set_new(o, m->type == RF_MOUNT_SYMLINK ? "link" : rf_mount_is_mask(m) ? "hides" : "source",
                                json_string(m->source));
        json_object_set_new(o, "target", json_string(m->target));
        if (m->type != RF_MOUNT_SYMLINK)
            json_object_set_new(o, "mode", json_string(m->writable ? "rw" : "ro"));
        if (m->idmap)
            json_object_set_new(o, "idmap", json_true());
        if (m->idmap && m->idmap_owner) /* the workspace owner's files are the sandbox user's */
            json_object_set_new(o, "idmap_owner", json_integer((json_int_t)plan->ws_uid));
        if (m->overlay) /* changes: overlay: the upper and work directories live here */
            json_object_set_new(o, "overlay", json_string(m->overlay));
        if (m->placeholder)
            json_object_set_new(o, "placeholder", json_string(m->source_dir ? "directory" : "file"));
        json_object_set_new(o, "why", json_string(m->why));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *identity_json(const rf_plan *plan)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "uid", (json_int_t)plan->uid_inside, "gid",
                          (json_int_t)plan->gid_inside, "host_uid", (json_int_t)plan->uid_host,
                          "host_gid", (json_int_t)plan->gid_host);
    const char *note = NULL;
    if (plan->caller_is_root && plan->backend == RF_BACKEND_NONE)
        note = "caller is root and backend none: the command runs as host root";
    else if (plan->drop_ids)
        note = "caller is root: the command switches to an unprivileged host id (setresuid, no "
               "supplementary groups), never host root";
    else if (plan->caller_is_root)
        note = "caller is root: mapped to an unprivileged host id, never host root";
    else if (plan->root_contained)
        note = "caller is root without what an unprivileged mapping needs: its own uid 0 is mapped, in a user "
               "namespace of the sandbox's own, without capabilities (see weakenings)";
    if (note)
        json_object_set_new(o, "note", json_string(note));
    return o;
}

static json_t *limits_json(const rf_plan *plan)
{
    const rf_limits *l = &plan->limits;
    json_t *o = json_object();
    json_object_set_new(o, "memory_bytes", l->memory_bytes ? json_integer((json_int_t)l->memory_bytes) : json_null());
    json_object_set_new(o, "pids", l->pids ? json_integer((json_int_t)l->pids) : json_null());
    json_object_set_new(o, "cpu", l->cpu > 0 ? json_real(l->cpu) : json_null());
    json_object_set_new(o, "timeout_seconds", l->timeout_s > 0 ? json_real(l->timeout_s) : json_null());
    json_object_set_new(o, "kill_grace_seconds", json_real(l->kill_grace_s));
    if (plan->limits_probed)
        json_object_set_new(o, "enforced_by",
                            json_pack("{s:s, s:s, s:s}", "memory", rf_limit_how_name(plan->limits_how.memory), "pids",
                                      rf_limit_how_name(plan->limits_how.pids), "cpu",
                                      rf_limit_how_name(plan->limits_how.cpu)));
    else
        json_object_set_new(o, "enforced_by", json_string("decided at start: a cgroup, else an rlimit (approximate)"));
    return o;
}

static json_t *rules_json(const rf_plan *plan)
{
    json_t *a = json_array();
    for (size_t i = 0; i < plan->n_rules; i++)
        json_array_append_new(a, json_pack("{s:s, s:s}", "path", plan->rules[i].path, "access",
                                           plan->rules[i].write ? "read-write" : "read-execute"));
    return a;
}

RF_EXPORT char *rf_plan_to_json(const rf_plan *plan)
{
    static const char *const landlock[] = { "best-effort", "required", "off" };
    static const char *const seccomp[] = { "default", "strict", "off" };
    json_t *o = json_object();
    bool native = plan->backend == RF_BACKEND_NATIVE;
    /* The seccomp filter and the syscall table are this build's. */
    json_object_set_new(o, "architecture", json_string(rf_seccomp_arch_name()));
    json_object_set_new(o, "backend", json_string(rf_backend_name(plan->backend)));
    json_object_set_new(o, "backend_reason", plan->backend_reason ? json_string(plan->backend_reason) : json_null());
    json_object_set_new(o, "cannot", rf_strv_json(plan->cannot));
    rf_error *floor = NULL;
    if (native && rf_native_floor_check(&floor) < 0) /* run would refuse: say why here too */
        json_array_append_new(json_object_get(o, "cannot"), json_string(rf_error_message(floor)));
    rf_error_free(floor);
    json_object_set_new(o, "weakenings", rf_strv_json(plan->weakenings));
    json_object_set_new(o, "namespaces", namespaces_json(plan));
    json_object_set_new(o, "network", json_string(rf_net_mode_name(plan->network)));
    if (plan->network == RF_NET_ALLOWLIST)
        json_object_set_new(o, "egress", rf_net_policy_json(plan->network, &plan->net));
    json_object_set_new(o, "hostname", plan->hostname ? json_string(plan->hostname) : json_null());
    json_object_set_new(o, "identity", identity_json(plan));
    json_object_set_new(o, "argv", rf_strv_json(plan->argv));
    json_object_set_new(o, "exec", json_string(plan->exec_path));
    json_object_set_new(o, "cwd", json_string(plan->cwd));
    json_object_set_new(o, "env", rf_strv_json(plan->env));
    /* Only the native backend mounts anything; the others use the same
     * list as the visibility model behind their Landlock rules. */
    bool bwrap = plan->backend == RF_BACKEND_BWRAP, firejail = plan->backend == RF_BACKEND_FIREJAIL;
    json_object_set_new(o, "mounts", native || bwrap || firejail ? mounts_json(plan) : json_array());
    if (bwrap)
        json_object_set_new(o, "bwrap", rf_bwrap_plan_json(plan));
    if (firejail)
        json_object_set_new(o, "firejail", rf_firejail_plan_json(plan));
    if (plan->container) /* the container backend: the exact podman/docker argv */
        json_object_set_new(o, "container", rf_container_plan_json(plan));
    json_object_set_new(o, "instance_root", json_string(plan->instance_root));
    if (plan->session) /* only with changes: overlay, so the direct plan reads as before */
        json_object_set_new(o, "changes", json_pack("{s:s, s:s, s:s}", "mode", "overlay", "session", plan->session,
                                                    "dir", plan->session_dir));
    json_object_set_new(o, "limits", limits_json(plan));
    /* The ABI this kernel offers; the rights are stripped to it at start. */
    int abi = rf_landlock_abi() > 0 ? rf_landlock_abi() : 0;
    bool ll = plan->landlock != RF_LANDLOCK_OFF && abi > 0;
    json_object_set_new(o, "landlock", json_pack("{s:s, s:i, s:o, s:b, s:b}", "mode", landlock[plan->landlock],
                                                 "abi", abi, "rules", rules_json(plan), "tcp_denied",
                                                 ll && plan->restrict_tcp && abi >= 4, "ipc_scoped",
                                                 ll && abi >= 6));
    json_object_set_new(o, "seccomp", json_pack("{s:s, s:o, s:o, s:b}", "profile", seccomp[plan->seccomp], "deny",
                                                rf_strv_json(plan->seccomp_deny), "allow",
                                                rf_strv_json(plan->seccomp_allow), "deny_inet_sockets",
                                                plan->seccomp_deny_inet));
    json_object_set_new(o, "session", json_string("new (setsid): no access to the caller's terminal"));
    if (!native)
        json_object_set_new(o, "tree_kill", json_string("a child subreaper (PR_SET_CHILD_SUBREAPER) "
                                                        "kills every descendant"));
    json_object_set_new(o, "warnings", rf_strv_json(plan->warnings));
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

RF_EXPORT char *const *rf_plan_warnings(const rf_plan *plan)
{
    return plan->warnings;
}

RF_EXPORT int rf_plan_probe_limits(rf_plan *plan, rf_error **err)
{
    const rf_limits *l = &plan->limits;
    if (!l->memory_bytes && !l->pids && !(l->cpu > 0))
        return 0;
    if (rf_limits_probe(l, &plan->limits_how, &plan->warnings, err) < 0)
        return -1;
    plan->limits_probed = true;
    return 0;
}

RF_EXPORT const char *rf_plan_backend(const rf_plan *plan)
{
    return rf_backend_name(plan->backend);
}

RF_EXPORT char *const *rf_plan_cannot(const rf_plan *plan)
{
    static char *const empty[] = { NULL };
    return plan->cannot ? plan->cannot : empty;
}
