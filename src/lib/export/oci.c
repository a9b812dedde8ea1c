/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan as an OCI runtime-spec config.json (runtime-spec 1.0.2, with
 * crun's `idmap` and `rro` mount options where the plan needs them).
 *
 * The mapping, one plan item to one spec field:
 *   namespaces          → linux.namespaces (+ uid/gid mappings for user)
 *   bind mounts         → mounts, type bind, rbind + rro/rw, nosuid, nodev
 *   idmapped binds      → the `idmap` option (root caller: host files stay
 *                         writable without the command being host root)
 *   tmpfs, proc, devpts → mounts of those types
 *   copies, symlinks    → files in the bundle's rootfs (bundle.c)
 *   remount-ro          → linux.readonlyPaths
 *   identity            → process.user
 *   no capabilities     → every capability set empty
 *   no_new_privs        → process.noNewPrivileges
 *   seccomp             → linux.seccomp (seccomp-oci.c)
 *   limits              → linux.resources (memory, swap = memory, pids,
 *                         cpu quota/period) and process.rlimits
 *   Landlock, timeout   → annotations: OCI has no field for either. */
#include "export/export.h"
#include "landlock/landlock.h"
#include "limits/limits.h"
#include "seccomp/seccomp.h"
#include "util/error.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#define CPU_PERIOD_US 100000

int rf_export_check_plan(const rf_plan *plan, const char *target, rf_error **err)
{
    if (plan->backend != RF_BACKEND_NATIVE || !(plan->clone_flags & CLONE_NEWNS)) {
        rf_error_set(err, 0, "export %s: backend %s: only the native backend's plan (namespaces and a "
                             "mount list) can be exported", target, rf_backend_name(plan->backend));
        return rf_error_hint_set(err, "drop --backend (or pass --backend native)");
    }
    if (plan->network != RF_NET_NONE && plan->network != RF_NET_HOST) {
        rf_error_set(err, 0, "export %s: network: only none and host can be exported; an allowlist needs "
                             "ringfence's own proxy", target);
        return rf_error_hint_set(err, "export with --network none, or run with ringfence itself");
    }
    return 0;
}

static json_t *bind_options(const rf_mount *m)
{
    /* rro: read-only through every submount (mount_setattr); a file has
     * none, and crun 1.8 cannot apply rro to a file mount point. */
    const char *mode = m->writable ? "rw" : m->source_dir ? "rro" : "ro";
    json_t *o = json_pack("[s, s, s]", "rbind", mode, "nosuid");
    if (!m->devices)
        json_array_append_new(o, json_string("nodev"));
    /* A read-only file needs no idmap (it only changes the owner shown),
     * and crun 1.8 cannot idmap a file mount point. */
    if (m->idmap && (m->source_dir || m->writable))
        json_array_append_new(o, json_string("idmap"));
    return o;
}

static json_t *tmpfs_options(const rf_mount *m)
{
    char mode[16];
    snprintf(mode, sizeof mode, "mode=%o", m->mode);
    /* /dev stays writable for the runtime to create its nodes and links
     * in; the plan's other read-only tmpfs (masks) are "ro" from the start. */
    bool dev = !strcmp(m->target, "/dev");
    json_t *o = json_pack("[s, s, s]", "nosuid", mode, m->writable || dev ? "rw" : "ro");
    if (!dev)
        json_array_append_new(o, json_string("nodev"));
    if (!m->writable)
        json_array_append_new(o, json_string("noexec"));
    return o;
}

/* One plan mount as an OCI mount, or NULL if it is not a mount there
 * (copies and symlinks live in the rootfs; remount-ro is readonlyPaths). */
static json_t *mount_json(const rf_mount *m)
{
    switch (m->type) {
    case RF_MOUNT_BIND:
        return json_pack("{s:s, s:s, s:s, s:o}", "destination", m->target, "type", "bind", "source", m->source,
                         "options", bind_options(m));
    case RF_MOUNT_TMPFS:
        return json_pack("{s:s, s:s, s:s, s:o}", "destination", m->target, "type", "tmpfs", "source", "tmpfs",
                         "options", tmpfs_options(m));
    case RF_MOUNT_PROC:
        return json_pack("{s:s, s:s, s:s, s:[s, s, s]}", "destination", m->target, "type", "proc", "source",
                         "proc", "options", "nosuid", "noexec", "nodev");
    case RF_MOUNT_DEVPTS:
        return json_pack("{s:s, s:s, s:s, s:[s, s, s, s, s]}", "destination", m->target, "type", "devpts",
                         "source", "devpts", "options", "nosuid", "noexec", "newinstance", "ptmxmode=0666",
                         "mode=0620");
    case RF_MOUNT_SYMLINK:
    case RF_MOUNT_RO_SELF:
    case RF_MOUNT_COPY:
    case RF_MOUNT_MASK_FILE: /* maskedPaths: the runtime binds /dev/null there */
        break;
    }
    return NULL;
}

static json_t *namespaces_json(const rf_plan *plan)
{
    static const struct { int flag; const char *name; } ns[] = {
        { CLONE_NEWPID, "pid" },   { CLONE_NEWNET, "network" }, { CLONE_NEWIPC, "ipc" },
        { CLONE_NEWUTS, "uts" },   { CLONE_NEWNS, "mount" },    { CLONE_NEWUSER, "user" },
        { CLONE_NEWCGROUP, "cgroup" },
    };
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        if (plan->clone_flags & ns[i].flag)
            json_array_append_new(a, json_pack("{s:s}", "type", ns[i].name));
    return a;
}

static json_t *resources_json(const rf_plan *plan)
{
    const rf_limits *l = &plan->limits;
    json_t *r = json_object();
    if (l->memory_bytes) /* swap = memory: no swap on top, as native sets memory.swap.max 0 */
        json_object_set_new(r, "memory", json_pack("{s:I, s:I}", "limit", (json_int_t)l->memory_bytes, "swap",
                                                   (json_int_t)l->memory_bytes));
    if (l->pids)
        json_object_set_new(r, "pids", json_pack("{s:I}", "limit", (json_int_t)l->pids));
    if (l->cpu > 0)
        json_object_set_new(r, "cpu", json_pack("{s:I, s:I}", "quota", (json_int_t)(l->cpu * CPU_PERIOD_US + 0.5),
                                                "period", (json_int_t)CPU_PERIOD_US));
    return r;
}

static json_t *rlimits_json(void)
{
    /* As limits/rlimit.c: no core dumps, open files at min(hard, 65536).
     * The hard limit is capped to the same value here (rlimit.c leaves it):
     * OCI's limits are unsigned 64-bit and an unlimited hard limit does not
     * fit JSON's signed integers, and a runtime may not raise it anyway. */
    struct rlimit nofile = { RF_LIMITS_NOFILE_MAX, RF_LIMITS_NOFILE_MAX };
    struct rlimit cur;
    if (getrlimit(RLIMIT_NOFILE, &cur) == 0 && cur.rlim_max < nofile.rlim_max)
        nofile.rlim_cur = nofile.rlim_max = cur.rlim_max;
    return json_pack("[{s:s, s:i, s:i}, {s:s, s:I, s:I}]", "type", "RLIMIT_CORE", "soft", 0, "hard", 0, "type",
                     "RLIMIT_NOFILE", "soft", (json_int_t)nofile.rlim_cur, "hard", (json_int_t)nofile.rlim_max);
}

static json_t *process_json(const rf_plan *plan)
{
    json_t *args = json_array(), *env = json_array();
    for (size_t i = 0; plan->argv && plan->argv[i]; i++)
        json_array_append_new(args, json_string(plan->argv[i]));
    for (size_t i = 0; plan->env && plan->env[i]; i++)
        json_array_append_new(env, json_string(plan->env[i]));
    /* argv[0] as resolved by the plan, so the runtime runs the same file. */
    if (plan->exec_path)
        json_array_set_new(args, 0, json_string(plan->exec_path));
    return json_pack("{s:b, s:{s:I, s:I}, s:o, s:o, s:s, s:{s:[], s:[], s:[], s:[], s:[]}, s:o, s:b}",
                     "terminal", 0, "user", "uid", (json_int_t)plan->uid_inside, "gid",
                     (json_int_t)plan->gid_inside, "args", args, "env", env, "cwd", plan->cwd, "capabilities",
                     "bounding", "effective", "inheritable", "permitted", "ambient", "rlimits", rlimits_json(),
                     "noNewPrivileges", 1);
}

static json_t *linux_json(const rf_plan *plan)
{
    json_t *lx = json_pack("{s:o, s:o}", "namespaces", namespaces_json(plan), "resources", resources_json(plan));
    if (plan->clone_flags & CLONE_NEWUSER) {
        json_object_set_new(lx, "uidMappings", json_pack("[{s:I, s:I, s:i}]", "containerID",
                                                         (json_int_t)plan->uid_inside, "hostID",
                                                         (json_int_t)plan->uid_host, "size", 1));
        json_object_set_new(lx, "gidMappings", json_pack("[{s:I, s:I, s:i}]", "containerID",
                                                         (json_int_t)plan->gid_inside, "hostID",
                                                         (json_int_t)plan->gid_host, "size", 1));
    }
    json_t *ro = json_array();
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (plan->mounts[i].type == RF_MOUNT_RO_SELF)
            json_array_append_new(ro, json_string(plan->mounts[i].target));
    json_object_set_new(lx, "readonlyPaths", ro);
    /* The native sandbox has no /sys and an unprivileged /proc; a runtime
     * run as root gets the usual masks on top, which cost nothing. */
    json_t *masked = json_pack("[s, s, s, s, s, s, s]", "/proc/acpi", "/proc/kcore", "/proc/keys",
                               "/proc/latency_stats", "/proc/timer_list", "/proc/sched_debug", "/proc/scsi");
    /* Denied files (deny_paths): exactly what maskedPaths does; denied
     * directories are read-only tmpfs mounts above. */
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (plan->mounts[i].type == RF_MOUNT_MASK_FILE)
            json_array_append_new(masked, json_string(plan->mounts[i].target));
    json_object_set_new(lx, "maskedPaths", masked);
    json_t *sc = rf_export_seccomp(plan);
    if (json_is_object(sc))
        json_object_set_new(lx, "seccomp", sc);
    else
        json_decref(sc);
    return lx;
}

json_t *rf_export_seccomp(const rf_plan *plan)
{
    rf_seccomp_request req = { .profile = plan->seccomp, .deny = plan->seccomp_deny,
                               .allow = plan->seccomp_allow, .deny_inet = plan->seccomp_deny_inet };
    return rf_seccomp_to_oci(&req);
}

json_t *rf_export_annotations(const rf_plan *plan)
{
    json_t *a = json_object();
    json_object_set_new(a, "org.ringfence.exported-from", json_string("ringfence plan (native backend)"));
    if (plan->landlock != RF_LANDLOCK_OFF) {
        json_t *rules = json_array();
        for (size_t i = 0; i < plan->n_rules; i++)
            json_array_append_new(rules, json_pack("{s:s, s:s}", "path", plan->rules[i].path, "access",
                                                   plan->rules[i].write ? "read-write" : "read-execute"));
        char *text = json_dumps(rules, JSON_COMPACT);
        json_decref(rules);
        json_object_set_new(a, "org.ringfence.landlock",
                            json_string("not enforced: the OCI runtime spec has no Landlock field; the mounts "
                                        "alone confine writes (ringfence run adds these rules)"));
        json_object_set_new(a, "org.ringfence.landlock.rules", json_string(text ? text : "[]"));
        free(text);
    }
    if (plan->limits.timeout_s > 0) {
        char t[64];
        snprintf(t, sizeof t, "%g", plan->limits.timeout_s);
        json_object_set_new(a, "org.ringfence.timeout-seconds", json_string(t));
        json_object_set_new(a, "org.ringfence.timeout",
                            json_string("not enforced by an OCI runtime: the caller must kill the container"));
    }
    json_object_set_new(a, "org.ringfence.network", json_string(plan->network == RF_NET_HOST ? "host" : "none"));
    return a;
}

json_t *rf_export_oci_config(const rf_plan *plan, const char *rootfs, bool accept_weaker, rf_error **err)
{
    if (rf_export_check_plan(plan, "oci", err) < 0)
        return NULL;
    if (plan->landlock == RF_LANDLOCK_REQUIRED && !accept_weaker) {
        rf_error_set(err, 0, "export oci: landlock: required, but the OCI runtime spec has no Landlock field");
        rf_error_hint_set(err, "pass --accept-weaker to export without it (the bundle's annotations say so), "
                               "or --landlock best-effort");
        return NULL;
    }
    json_t *mounts = json_array();
    for (size_t i = 0; i < plan->n_mounts; i++) {
        json_t *m = mount_json(&plan->mounts[i]);
        if (m)
            json_array_append_new(mounts, m);
    }
    return json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:o, s:o}", "ociVersion", "1.0.2", "process",
                     process_json(plan), "root", "path", rootfs, "readonly", 1, "hostname",
                     plan->hostname ? plan->hostname : "ringfence", "mounts", mounts, "linux", linux_json(plan),
                     "annotations", rf_export_annotations(plan));
}
