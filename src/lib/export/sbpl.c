/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `ringfence plan --format sbpl`: the plan as a macOS Seatbelt profile
 * (SBPL, what `sandbox-exec -f` reads), so a Mitto user with a
 * sandbox-exec runner sees what the same policy means there. ringfence does
 * not run it: sandbox-exec is macOS only, and Linux refuses that runner.
 *
 * Deny by default; read-only for the plan's read-only binds and copies (the
 * macOS system directories standing in for /usr), read-write for its
 * writable binds, the device nodes the plan binds, metadata of the parent
 * directories so paths resolve, and the network only for `host`. What
 * Seatbelt has no word for (namespaces, a private /tmp, seccomp, Landlock,
 * limits) is a comment, so nothing is dropped in silence. */
#include "export/export.h"
#include "ringfence.h"
#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The macOS locations of what the plan's system mounts hold on Linux. */
static const char *const macos_system[] = {
    "/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/private/var/db/dyld",
    "/private/var/db/timezone", "/Library/Preferences/Logging",
};

/* Mach services nearly every program needs (user lookup, logging,
 * notifications, TLS trust); everything else stays denied. */
static const char *const mach_services[] = {
    "com.apple.system.opendirectoryd.libinfo", "com.apple.system.logger",
    "com.apple.system.notification_center", "com.apple.trustd.agent", "com.apple.SecurityServer",
};

/* SBPL strings are double-quoted with backslash escapes. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void put_rule(FILE *f, const char *what, const char *filter, const char *path)
{
    fprintf(f, "(allow %s (%s ", what, filter);
    put_string(f, path);
    fputs("))\n", f);
}

/* /etc is /private/etc on macOS. */
static const char *macos_path(const char *p, char *buf, size_t size)
{
    if (!strncmp(p, "/etc/", 5) || !strcmp(p, "/etc") || !strncmp(p, "/tmp/", 5) || !strncmp(p, "/var/", 5)) {
        snprintf(buf, size, "/private%s", p);
        return buf;
    }
    return p;
}

static void put_ancestors(FILE *f, const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *slash = strrchr(buf, '/'); slash && slash != buf; slash = strrchr(buf, '/')) {
        *slash = '\0';
        put_rule(f, "file-read-metadata", "literal", buf);
    }
}

static void put_mounts(FILE *f, const rf_plan *plan)
{
    char buf[4096];
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (!strcmp(m->why, "system") || !strcmp(m->why, "proc") || !strcmp(m->why, "tmp"))
            continue; /* the macOS system list above; no procfs; see the /tmp note */
        const char *p = macos_path(m->target, buf, sizeof buf);
        bool dir = m->type != RF_MOUNT_COPY && (m->type != RF_MOUNT_BIND || m->source_dir);
        if (m->type == RF_MOUNT_BIND || m->type == RF_MOUNT_COPY) {
            fprintf(f, "; %s: %s\n", m->why, m->target);
            put_rule(f, m->writable ? "file-read* file-write*" : "file-read*", dir ? "subpath" : "literal", p);
            if (!strcmp(m->why, "workspace") || !strcmp(m->why, "expose") || !strcmp(m->why, "instance"))
                put_ancestors(f, p);
        } else if (rf_mount_is_mask(m)) {
            fprintf(f, "; %s: %s\n(deny file-read* file-write* (subpath ", m->why, m->target);
            put_string(f, p);
            fputs("))\n", f);
        }
    }
}

static void put_linux_only(FILE *f, const rf_plan *plan)
{
    fputs("\n; Not expressible in Seatbelt (ringfence enforces these on Linux):\n"
          ";   namespaces: the command sees every process of the user, the real host name\n"
          ";   a private /tmp: TMPDIR points into the instance directory instead\n"
          ";   a fresh /proc and a minimal /dev: only the device nodes above are allowed\n",
          f);
    fprintf(f, ";   seccomp profile %s, Landlock %s\n",
            plan->seccomp == RF_SECCOMP_OFF ? "off" : plan->seccomp == RF_SECCOMP_STRICT ? "strict" : "default",
            plan->landlock == RF_LANDLOCK_OFF ? "off" : "on (the file rules above are its equivalent)");
    if (plan->limits.memory_bytes || plan->limits.pids || plan->limits.cpu > 0 || plan->limits.timeout_s > 0)
        fputs(";   limits (memory, processes, CPU, timeout): the runner must apply them\n", f);
}

RF_EXPORT char *rf_plan_to_sbpl(const rf_plan *plan, rf_error **err)
{
    if (rf_export_check_plan(plan, "sbpl", err) < 0)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        rf_error_set(err, errno, "plan --format sbpl");
        return NULL;
    }
    fputs("(version 1)\n; ringfence plan as a macOS Seatbelt profile: sandbox-exec -f FILE COMMAND\n", f);
    fputs("; command:", f);
    for (size_t i = 0; plan->argv && plan->argv[i]; i++)
        fprintf(f, " %s", plan->argv[i]);
    fputs("\n(deny default)\n(allow process-fork)\n(allow process-exec)\n"
          "(allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n"
          "(allow sysctl-read)\n(allow ipc-posix-shm)\n",
          f);
    for (size_t i = 0; i < sizeof mach_services / sizeof mach_services[0]; i++) {
        fputs("(allow mach-lookup (global-name ", f);
        put_string(f, mach_services[i]);
        fputs("))\n", f);
    }
    fputs("; system, read-only\n", f);
    for (size_t i = 0; i < sizeof macos_system / sizeof macos_system[0]; i++)
        put_rule(f, "file-read*", "subpath", macos_system[i]);
    put_rule(f, "file-read-metadata", "literal", "/");
    put_mounts(f, plan);
    fputs("; network\n", f);
    if (plan->network == RF_NET_HOST)
        fputs("(allow network*)\n", f);
    else
        fputs("; none: no network rule, so every socket is denied\n", f);
    put_linux_only(f, plan);
    if (fclose(f) != 0) {
        free(text);
        rf_error_set(err, ENOMEM, "plan --format sbpl");
        return NULL;
    }
    return text;
}
