/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence doctor: run the probes, then judge per backend what it can
 * enforce on this host. */
#include "backend/container/container.h"
#include "doctor/doctor.h"
#include "backend/backend.h"
#include "plan/build.h"
#include "landlock/landlock.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct judge {
    rf_doctor_backend *b;
    int failed;
} judge;

static void give(judge *j, bool cond, const char *yes, const char *no)
{
    const char *s = cond ? yes : no;
    if (s && rf_strv_push(cond ? &j->b->gives : &j->b->lacks, s) < 0)
        j->failed = -1;
}

/* "what (ABI n)" when Landlock is there, else `no`. */
static void give_abi(judge *j, int abi, const char *what, const char *no)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s (ABI %d)", what, abi);
    give(j, abi >= 1, buf, no);
}

/* What every backend does in the process it starts. */
static void common(judge *j, const rf_doctor_report *r)
{
    give(j, true, "clean environment, redirected HOME/TMPDIR/XDG_*", NULL);
    give(j, true, "new session, inherited descriptors closed", NULL);
    give(j, true, "timeout and process-tree kill", NULL);
    give(j, r->seccomp.works, "seccomp filter (default profile)", "seccomp filter: not available");
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return true;
    return false;
}

/* What the probe of run's own code found: "cgroup limits: memory (cgroup-v1),
 * ..." for what a cgroup enforces, and run's own fallback warning for each
 * of the rest. */
static void cgroup_limits_probed(judge *j, const rf_doctor_report *r)
{
    static const char *const name[] = { "memory", "pids", "cpu" };
    const rf_limit_how how[] = { r->cgroup.how.memory, r->cgroup.how.pids, r->cgroup.how.cpu };
    char have[160] = "";
    for (size_t i = 0; i < 3; i++) {
        if (how[i] != RF_LIMIT_CGROUP_V1 && how[i] != RF_LIMIT_CGROUP_V2)
            continue;
        size_t len = strlen(have);
        snprintf(have + len, sizeof have - len, "%s%s (%s)", *have ? ", " : "", name[i],
                 rf_limit_how_name(how[i]));
    }
    char buf[200];
    snprintf(buf, sizeof buf, "cgroup limits: %s", have);
    give(j, *have, buf, NULL);
    for (size_t i = 0; r->cgroup.fallback && r->cgroup.fallback[i]; i++)
        give(j, false, NULL, r->cgroup.fallback[i]);
}

/* Limits need a child cgroup we may create and the controller for each. */
static void cgroup_limits(judge *j, const rf_doctor_report *r)
{
    static const char *const want[] = { "memory", "pids", "cpu" };
    if (r->cgroup.probed) {
        cgroup_limits_probed(j, r);
        return;
    }
    if (!r->cgroup.delegated) {
        give(j, false, NULL, "cgroup limits: no writable cgroup v2 subtree, rlimits only");
        return;
    }
    char have[64] = "", miss[64] = "";
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char *dst = has_word(r->cgroup.controllers, want[i]) ? have : miss;
        size_t len = strlen(dst);
        snprintf(dst + len, 64 - len, "%s%s", *dst ? ", " : "", want[i]);
    }
    char buf[160];
    snprintf(buf, sizeof buf, "cgroup limits: %s", have);
    give(j, *have, buf, NULL);
    snprintf(buf, sizeof buf, "cgroup limits for %s: controller not in the v2 hierarchy, rlimits instead",
             miss);
    give(j, !*miss, NULL, buf);
}

/* --changes overlay (docs/changes.md): overlayfs in the kernel, and for
 * an unprivileged caller one that mounts it in a user namespace (5.11). */
static bool overlay_possible(void)
{
    FILE *f = fopen("/proc/filesystems", "re");
    char line[128];
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, "\toverlay\n") != NULL;
    if (f)
        fclose(f);
    struct utsname u;
    unsigned major = 0, minor = 0;
    if (!found || geteuid() == 0)
        return found;
    return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
           (major > 5 || (major == 5 && minor >= 11));
}

static void judge_native(judge *j, const rf_doctor_report *r)
{
    /* The verdict is run's own: a real start (doctor-start.c). It also
     * overrides the probes of single steps: a root caller with
     * CAP_SYS_ADMIN starts where an unprivileged user namespace cannot
     * mount /proc (a container's masked paths). */
    bool started = r->start.tried && r->start.ok;
    bool ns = r->userns.reached == RF_DOCTOR_USERNS_OK || started;
    j->b->usable = r->start.tried ? r->start.ok : r->native_probe_ok;
    give(j, ns, "user, mount, pid, network, ipc, uts and cgroup namespaces",
         "namespaces: user namespaces are not usable here (see user_namespaces)");
    if (!started && !r->native_probe_ok && r->native_probe[0]) {
        char buf[300];
        snprintf(buf, sizeof buf, "the start-up probe failed: %s", r->native_probe);
        give(j, false, NULL, buf);
    }
    if (r->start.tried && !r->start.ok) {
        char buf[2200];
        snprintf(buf, sizeof buf, "'ringfence run -- true' fails here: %s%s%s", r->start.error,
                 r->start.hint[0] ? "; hint: " : "", r->start.hint);
        give(j, false, NULL, buf);
    }
    if (ns) {
        give(j, true, "private root with pivot_root: workspace rw, system ro, nothing else", NULL);
        give(j, true, "fresh /proc, minimal /dev, private /tmp", NULL);
        give(j, true, "no network: own network namespace with loopback", NULL);
        give(j, true, "network allowlist: a proxy outside the sandbox is its only way out (--allow-domain)", NULL);
        give(j, true, "all capabilities dropped, no_new_privs", NULL);
        give(j, overlay_possible(), "changes: overlay (--changes overlay): writes kept in a session to review, "
                                    "apply or discard",
             "changes: overlay: overlayfs is missing, or this kernel cannot mount it in a user namespace (5.11+)");
    }
    common(j, r);
    give_abi(j, r->landlock_abi, "Landlock rules mirroring the mounts",
             "Landlock: not available (the mounts alone confine files)");
    cgroup_limits(j, r);
}

static void judge_landlock(judge *j, const rf_doctor_report *r)
{
    int abi = r->landlock_abi;
    j->b->usable = abi >= 1;
    give_abi(j, abi, "Landlock filesystem rules from the plan, on host paths",
             "Landlock: not available, so this backend cannot run");
    give(j, abi >= 3, "truncation checked (ABI 3+)", "truncate(2) is not checked (needs Landlock ABI 3)");
    give(j, abi >= 4, "network: none as Landlock TCP bind/connect rules (ABI 4+)",
         "network: none: TCP is not checked by Landlock (needs ABI 4)");
    give(j, r->seccomp.works, "network: none also as a seccomp rule against IP sockets (UDP, raw)",
         "network: none: UDP and other non-TCP traffic pass (no seccomp here)");
    give(j, abi >= 6, "abstract unix sockets and signals scoped to the sandbox (ABI 6+)",
         "no scoping of abstract unix sockets and signals (needs Landlock ABI 6)");
    give(j, false, NULL, "network allowlist: refused (no network namespace to confine the command to the proxy)");
    give(j, true, "no_new_privs, capabilities dropped, root callers switched to the workspace's owner (or map_root_to)", NULL);
    common(j, r);
    size_t n;
    const char *const *cannot = rf_plan_landlock_cannot(&n);
    for (size_t i = 0; i < n; i++)
        give(j, false, NULL, cannot[i]);
    give(j, true, "a private TMPDIR and XDG_RUNTIME_DIR in the instance root; the host's /tmp out of reach "
                  "(--share-tmp grants it)", NULL);
    give(j, false, NULL, "the default policy (namespaces: private /tmp, hidden host processes) runs only with "
                         "--accept-weaker");
    give(j, false, NULL, "changes: overlay: refused (no mount namespace to mount it in; use --backend native)");
}

static void judge_none(judge *j, const rf_doctor_report *r)
{
    (void)r;
    j->b->usable = true;
    give(j, true, "clean environment, redirected HOME/TMPDIR/XDG_*", NULL);
    give(j, true, "new session, inherited descriptors closed", NULL);
    give(j, true, "timeout and process-tree kill (child subreaper)", NULL);
    give(j, false, NULL, "no filesystem, process or network isolation");
    give(j, false, NULL, "no Landlock, no seccomp filter, no_new_privs not set");
}

/* The runner backends (doctor-runners.c); their lists are built there. */
static void judge_bwrap(judge *j, const rf_doctor_report *r)
{
    if (rf_doctor_judge_bwrap(j->b, r) < 0)
        j->failed = -1;
    cgroup_limits(j, r);
}

static void judge_firejail(judge *j, const rf_doctor_report *r)
{
    if (rf_doctor_judge_firejail(j->b, r) < 0)
        j->failed = -1;
}

/* backend/container/choose.c checks the tool as a plan would. */
static void judge_container(judge *j, const rf_doctor_report *r)
{
    j->b->present = r->tools.podman != NULL || r->tools.docker != NULL;
    j->b->version = r->runners.podman ? r->runners.podman : r->runners.docker;
    if (rf_container_doctor(&j->b->usable, &j->b->gives, &j->b->lacks) < 0)
        j->failed = -1;
}

int rf_doctor_judge_backends(rf_doctor_report *r)
{
    static const char *const names[RF_DOCTOR_N_BACKENDS] = { "native", "landlock", "none",
                                                             "bwrap", "firejail", "container" };
    void (*const fns[RF_DOCTOR_N_BACKENDS])(judge *, const rf_doctor_report *) = {
        judge_native, judge_landlock, judge_none, judge_bwrap, judge_firejail, judge_container,
    };
    int failed = 0;
    for (int i = 0; i < RF_DOCTOR_N_BACKENDS; i++) {
        r->backends[i].name = names[i];
        r->backends[i].present = true;
        judge j = { &r->backends[i], 0 };
        fns[i](&j, r);
        failed |= j.failed;
    }
    /* rf_backend_choose_auto's order: native, bwrap, landlock (rf_doctor_probe
     * asks it instead, where it can run). */
    r->auto_backend = r->backends[0].usable   ? "native"
                      : r->backends[3].usable ? "bwrap"
                      : r->backends[1].usable ? "landlock"
                                              : NULL;
    return failed;
}

RF_EXPORT rf_doctor_report *rf_doctor_probe(rf_error **err)
{
    rf_doctor_report *r = calloc(1, sizeof *r);
    if (!r) {
        rf_error_set(err, ENOMEM, "doctor");
        return NULL;
    }
    r->uid = geteuid();
    rf_doctor_probe_kernel(r);
    rf_doctor_probe_seccomp(r); /* first: the userns explanation uses it */
    rf_doctor_probe_userns(r);
    r->native_probe_ok = rf_backend_probe_native(r->native_probe, sizeof r->native_probe);
    rf_doctor_probe_start(r);
    r->landlock_abi = rf_landlock_abi();
    rf_doctor_probe_cgroup(r);
    rf_doctor_probe_tools(r);
    rf_doctor_probe_runners(r);
    if (rf_doctor_judge_backends(r) < 0) {
        rf_doctor_free(r);
        rf_error_set(err, ENOMEM, "doctor");
        return NULL;
    }
    /* What --backend auto picks here: its own choice, asked, so that
     * doctor and auto cannot disagree. */
    rf_backend_kind kind;
    char *why = NULL;
    r->auto_backend = rf_backend_choose_auto(&kind, &why, NULL) == 0 ? rf_backend_name(kind) : NULL;
    free(why);
    return r;
}

RF_EXPORT void rf_doctor_free(rf_doctor_report *r)
{
    if (!r)
        return;
    rf_strv_free(r->userns.reasons);
    free(r->cgroup.v2_mount);
    free(r->cgroup.own);
    free(r->cgroup.controllers);
    rf_strv_free(r->cgroup.fallback);
    free(r->cgroup.systemd_scope);
    free(r->cgroup.cgroup_manager);
    free(r->tools.bwrap);
    free(r->tools.firejail);
    free(r->tools.podman);
    free(r->tools.docker);
    rf_doctor_free_runners(r);
    for (int i = 0; i < RF_DOCTOR_N_BACKENDS; i++) {
        rf_strv_free(r->backends[i].gives);
        rf_strv_free(r->backends[i].lacks);
    }
    free(r);
}

RF_EXPORT bool rf_doctor_backend_usable(const rf_doctor_report *r, const char *name)
{
    for (int i = 0; r && name && i < RF_DOCTOR_N_BACKENDS; i++)
        if (r->backends[i].name && !strcmp(r->backends[i].name, name))
            return r->backends[i].usable;
    return false;
}
