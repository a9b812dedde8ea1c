/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The doctor report as JSON (docs/doctor.md has the fields) and as text. */
#include "doctor/doctor.h"
#include "backend/native/floor.h"
#include "seccomp/seccomp.h"
#include "util/cleanup.h"
#include "util/strv-json.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *long_or_null(long v)
{
    return v < 0 ? json_null() : json_integer(v);
}

static json_t *errno_or_null(int e)
{
    return e ? str_or_null(strerrorname_np(e)) : json_null();
}

static json_t *words_json(const char *s)
{
    json_t *a = json_array();
    _cleanup_free_ char *copy = s ? strdup(s) : NULL;
    char *save = NULL;
    for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save))
        json_array_append_new(a, json_string(w));
    return a;
}

static const char *landlock_status(int abi)
{
    return abi >= 1 ? "enabled" : abi < 0 ? "disabled at boot" : "unavailable";
}

static json_t *userns_json(const rf_doctor_report *r)
{
    bool ok = r->userns.reached == RF_DOCTOR_USERNS_OK;
    const char *step = ok ? NULL : rf_doctor_userns_step_name(r->userns.reached);
    json_t *sysctl = json_pack("{s:o, s:o, s:o}", "kernel.unprivileged_userns_clone",
                               long_or_null(r->userns.unprivileged_userns_clone), "user.max_user_namespaces",
                               long_or_null(r->userns.max_user_namespaces),
                               "kernel.apparmor_restrict_unprivileged_userns",
                               long_or_null(r->userns.apparmor_restrict));
    return json_pack("{s:b, s:o, s:o, s:o, s:o}", "usable", ok, "failed_step", str_or_null(step), "error",
                     ok ? json_null() : errno_or_null(r->userns.errnum), "sysctl", sysctl, "reasons",
                     rf_strv_json(r->userns.reasons));
}

/* doctor-start.c: `run -- true` with the native backend, done. */
static json_t *start_json(const rf_doctor_report *r)
{
    return json_pack("{s:b, s:b, s:o, s:o, s:o}", "tried", r->start.tried, "ok", r->start.ok, "workspace",
                     str_or_null(r->start.workspace[0] ? r->start.workspace : NULL), "error",
                     str_or_null(r->start.error[0] ? r->start.error : NULL), "hint",
                     str_or_null(r->start.hint[0] ? r->start.hint : NULL));
}

static json_t *seccomp_json(const rf_doctor_report *r)
{
    return json_pack("{s:b, s:o, s:s, s:{s:i, s:i}}", "usable", r->seccomp.works, "error",
                     r->seccomp.works ? json_null() : errno_or_null(r->seccomp.errnum), "libseccomp",
                     r->seccomp.libseccomp, "this_process", "mode", r->seccomp.mode_now, "filters",
                     r->seccomp.filters_now);
}

/* What run enforces each limit with here (rf_limits_probe), or null. */
static json_t *limits_json(const rf_doctor_report *r)
{
    if (!r->cgroup.probed)
        return json_null();
    return json_pack("{s:s, s:s, s:s}", "memory", rf_limit_how_name(r->cgroup.how.memory), "pids",
                     rf_limit_how_name(r->cgroup.how.pids), "cpu",
                     rf_limit_how_name(r->cgroup.how.cpu));
}

static json_t *cgroup_json(const rf_doctor_report *r)
{
    json_t *error = r->cgroup.delegated ? json_null() : errno_or_null(r->cgroup.errnum);
    return json_pack("{s:s, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}", "version", r->cgroup.version,
                     "v2_mount", str_or_null(r->cgroup.v2_mount), "own",
                     str_or_null(r->cgroup.own), "delegated", r->cgroup.delegated, "error", error,
                     "controllers", words_json(r->cgroup.controllers), "limits", limits_json(r),
                     "systemd_scope", str_or_null(r->cgroup.systemd_scope), "cgroup_manager",
                     str_or_null(r->cgroup.cgroup_manager));
}

/* Why the native backend refuses this kernel (backend/native/floor.h), or
 * NULL: asked here, as the refusal itself words it, so doctor and run agree. */
static char *kernel_floor(void)
{
    rf_error *err = NULL;
    char *why = NULL;
    if (rf_native_floor_check(&err) < 0 && asprintf(&why, "%s", rf_error_message(err)) < 0)
        why = NULL;
    rf_error_free(err);
    return why;
}

static json_t *report_json(const rf_doctor_report *r)
{
    json_t *backends = json_object();
    for (int i = 0; i < RF_DOCTOR_N_BACKENDS; i++)
        json_object_set_new(backends, r->backends[i].name,
                            json_pack("{s:b, s:o, s:o, s:b, s:o}", "usable", r->backends[i].usable, "gives",
                                      rf_strv_json(r->backends[i].gives), "lacks",
                                      rf_strv_json(r->backends[i].lacks), "present", r->backends[i].present,
                                      "version", str_or_null(r->backends[i].version)));
    json_t *kernel = json_pack("{s:s, s:s, s:s}", "release", r->kernel_release, "version", r->kernel_version,
                               "machine", r->machine);
    json_t *landlock = json_pack("{s:i, s:s}", "abi", r->landlock_abi < 0 ? 0 : r->landlock_abi, "status",
                                 landlock_status(r->landlock_abi));
    json_t *tools = json_pack("{s:o, s:o, s:o, s:o}", "bwrap", str_or_null(r->tools.bwrap),
                              "firejail", str_or_null(r->tools.firejail), "podman",
                              str_or_null(r->tools.podman), "docker", str_or_null(r->tools.docker));
    /* "o" steals each part, also when json_pack fails. */
    json_t *j = json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:b}", "kernel", kernel, "uid",
                     (json_int_t)r->uid, "user_namespaces", userns_json(r), "landlock", landlock, "seccomp",
                     seccomp_json(r), "cgroup", cgroup_json(r), "tools", tools, "backends", backends,
                     "default_backend", "native", "auto_backend", str_or_null(r->auto_backend), "ok",
                     r->backends[0].usable);
    if (j) {
        json_object_set_new(j, "native_start", start_json(r));
        json_object_set_new(j, "architecture", json_pack("{s:s, s:s}", "build", rf_seccomp_arch_name(),
                                                         "killed_abis", rf_seccomp_foreign_abis()));
        _cleanup_free_ char *floor = kernel_floor();
        json_object_set_new(json_object_get(j, "kernel"), "below_native_floor", str_or_null(floor));
    }
    return j;
}

RF_EXPORT char *rf_doctor_to_json(const rf_doctor_report *r)
{
    json_t *j = report_json(r);
    if (!j)
        return NULL;
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

static void line(FILE *f, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(FILE *f, const char *label, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "%-16s ", label);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
}

/* The own cgroup below the v2 mount, "" for the root cgroup. */
static const char *own_suffix(const rf_doctor_report *r)
{
    return r->cgroup.own && strcmp(r->cgroup.own, "/") ? r->cgroup.own : "";
}

static void text_host(FILE *f, const rf_doctor_report *r)
{
    line(f, "kernel", "%s (%s)", r->kernel_release, r->machine);
    line(f, "architecture", "%s build; seccomp kills other ABIs' calls (%s)", rf_seccomp_arch_name(),
         rf_seccomp_foreign_abis());
    _cleanup_free_ char *floor = kernel_floor();
    if (floor)
        line(f, "", "- %s", floor);
    if (r->userns.reached == RF_DOCTOR_USERNS_OK)
        line(f, "user namespaces", "yes (probed as uid %u: namespaces, mounts, /proc)", (unsigned)r->uid);
    else {
        line(f, "user namespaces", "no: %s: %s", rf_doctor_userns_step_name(r->userns.reached),
             strerror(r->userns.errnum));
        for (size_t i = 0; r->userns.reasons && r->userns.reasons[i]; i++)
            line(f, "", "- %s", r->userns.reasons[i]);
        if (r->start.tried && r->start.ok)
            line(f, "", "- the native backend starts here all the same (as uid %u: see backend native)",
                 (unsigned)r->uid);
    }
    if (r->landlock_abi >= 1)
        line(f, "landlock", "yes, ABI %d", r->landlock_abi);
    else
        line(f, "landlock", "no: %s", landlock_status(r->landlock_abi));
    line(f, "seccomp", "%s (libseccomp %s)%s", r->seccomp.works ? "yes" : "no", r->seccomp.libseccomp,
         r->seccomp.mode_now == 2 ? "; this process is already filtered" : "");
    if (!r->cgroup.v2_mount)
        line(f, "cgroups", "%s (no cgroup v2 hierarchy)", r->cgroup.version);
    else if (r->cgroup.delegated)
        line(f, "cgroups", "%s; own cgroup %s%s is delegated (a child cgroup can be made)",
             r->cgroup.version, r->cgroup.v2_mount, own_suffix(r));
    else
        line(f, "cgroups", "%s; own cgroup %s%s is not delegated: %s", r->cgroup.version,
             r->cgroup.v2_mount, own_suffix(r), strerror(r->cgroup.errnum));
    if (r->cgroup.v2_mount)
        line(f, "", "controllers: %s",
             r->cgroup.controllers && *r->cgroup.controllers ? r->cgroup.controllers : "none");
    if (r->cgroup.systemd_scope)
        line(f, "", "limits go in a delegated systemd scope: %s", r->cgroup.systemd_scope);
    if (r->cgroup.cgroup_manager)
        line(f, "", "no systemd: limits go in cgroups ringfence makes below %s",
             r->cgroup.cgroup_manager);
    const char *names[] = { "bwrap", "firejail", "podman", "docker" };
    const char *paths[] = { r->tools.bwrap, r->tools.firejail, r->tools.podman, r->tools.docker };
    for (int i = 0; i < 4; i++)
        line(f, i == 0 ? "tools" : "", "%-9s %s", names[i], paths[i] ? paths[i] : "not found");
}

RF_EXPORT char *rf_doctor_to_text(const rf_doctor_report *r)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return NULL;
    text_host(f, r);
    fputc('\n', f);
    for (int i = 0; i < RF_DOCTOR_N_BACKENDS; i++) {
        const rf_doctor_backend *b = &r->backends[i];
        fprintf(f, "backend %-8s %s%s%s%s\n", b->name, b->usable ? "usable" : "NOT usable",
                b->present ? "" : " (not installed)", b->version ? ", " : "", b->version ? b->version : "");
        for (size_t k = 0; b->gives && b->gives[k]; k++)
            fprintf(f, "  + %s\n", b->gives[k]);
        for (size_t k = 0; b->lacks && b->lacks[k]; k++)
            fprintf(f, "  - %s\n", b->lacks[k]);
    }
    fprintf(f, "\n%s\n", r->backends[0].usable ? "The default backend (native) works here."
                                                : "The default backend (native) does not work here.");
    if (r->auto_backend)
        fprintf(f, "--backend auto picks %s here.\n", r->auto_backend);
    else
        fprintf(f, "--backend auto finds no sandbox backend here; --backend none runs without one.\n");
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
