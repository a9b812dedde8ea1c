/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runner backends in `ringfence doctor`: bwrap, firejail, container.
 * Present (the tool is installed, with its version line), usable (the
 * same check `--backend bwrap` makes before it runs), and what each
 * cannot do here. */
#include "doctor/doctor.h"
#include "backend/bwrap/bwrap.h"
#include "backend/firejail/firejail.h"
#include "util/cleanup.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of `PATH --version`, or NULL. Only for a path `which`
 * found; the shell never sees anything but that path. */
static char *version_line(const char *path)
{
    if (!path || strchr(path, '\'') || access(path, X_OK) < 0)
        return NULL;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' --version 2>&1 </dev/null", path);
    FILE *f = popen(cmd, "re");
    if (!f)
        return NULL;
    char line[200] = "";
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    /* firejail prints the rest of its banner: drain it before pclose. */
    char sink[512];
    while (fgets(sink, sizeof sink, f))
        ;
    pclose(f);
    line[strcspn(line, "\n")] = '\0';
    return line[0] ? strdup(line) : NULL;
}

void rf_doctor_probe_runners(rf_doctor_report *r)
{
    r->runners.bwrap = rf_bwrap_version();
    r->runners.firejail = version_line(r->tools.firejail);
    r->runners.podman = version_line(r->tools.podman);
    r->runners.docker = version_line(r->tools.docker);
    r->runners.bwrap_usable = rf_bwrap_usable(r->runners.bwrap_why, sizeof r->runners.bwrap_why);
    r->runners.firejail_usable = rf_firejail_usable(r->runners.firejail_why, sizeof r->runners.firejail_why);
}

void rf_doctor_free_runners(rf_doctor_report *r)
{
    free(r->runners.bwrap);
    free(r->runners.firejail);
    free(r->runners.podman);
    free(r->runners.docker);
}

static int push(char ***v, const char *s)
{
    return rf_strv_push(v, s);
}

int rf_doctor_judge_bwrap(rf_doctor_backend *b, const rf_doctor_report *r)
{
    b->present = r->runners.bwrap != NULL;
    b->version = r->runners.bwrap;
    b->usable = r->runners.bwrap_usable;
    char buf[500];
    int rc = 0;
    if (!b->usable) {
        snprintf(buf, sizeof buf, "cannot run here: %s", r->runners.bwrap_why);
        rc |= push(&b->lacks, buf);
    } else {
        rc |= push(&b->gives, "user, mount, pid, network, ipc, uts and cgroup namespaces (bwrap --unshare-*)");
        rc |= push(&b->gives, "the native backend's mounts, in order: workspace rw, system ro, curated /etc, "
                              "fresh /proc, bwrap's /dev, private /tmp, read-only root");
        rc |= push(&b->gives, "ringfence's seccomp filter (--seccomp), capabilities dropped, a new session");
        rc |= push(&b->gives, "timeout and process-tree kill (child subreaper around bwrap)");
        rc |= push(&b->gives, "network allowlist and --publish through the native backend's proxy (a "
                              "network namespace made around bwrap)");
        if (r->landlock_abi >= 6)
            rc |= push(&b->gives, "abstract unix sockets and signals scoped by Landlock (ABI 6+)");
        /* --changes overlay: bwrap's --overlay arrived in 0.10 */
        unsigned major = 0, minor = 0;
        bool overlay = sscanf(r->runners.bwrap, "bubblewrap %u.%u", &major, &minor) == 2 &&
                       (major > 0 || minor >= 10);
        if (overlay && geteuid() != 0)
            rc |= push(&b->gives, "changes: overlay (bwrap --overlay)");
        else
            rc |= push(&b->lacks, overlay ? "changes: overlay: a root caller's command runs as the workspace's "
                                            "owner, out of reach of root's sessions (use --backend native)"
                                          : "changes: overlay: needs bubblewrap 0.10 or later (--overlay)");
    }
    size_t n;
    const char *const *cannot = rf_bwrap_cannot(&n);
    for (size_t i = 0; i < n; i++)
        rc |= push(&b->lacks, cannot[i]);
    return rc < 0 ? -1 : 0;
}

int rf_doctor_judge_firejail(rf_doctor_backend *b, const rf_doctor_report *r)
{
    b->present = r->runners.firejail != NULL;
    b->version = r->runners.firejail;
    b->usable = r->runners.firejail_usable;
    char buf[500];
    int rc = 0;
    if (!b->usable) {
        snprintf(buf, sizeof buf, "cannot run here: %s", r->runners.firejail_why);
        rc |= push(&b->lacks, buf);
    } else {
        rc |= push(&b->gives, "pid, mount, ipc and network namespaces (--net=none), a user namespace for "
                              "unprivileged callers (--noroot)");
        rc |= push(&b->gives, "the host's root read-only, the plan's binds read-write, everything else "
                              "blacklisted; firejail's /proc, /dev and private /tmp");
        rc |= push(&b->gives, "capabilities dropped, no_new_privs, firejail's seccomp filter, the plan's "
                              "environment exactly (env takes back what firejail adds)");
        rc |= push(&b->gives, "timeout and process-tree kill (child subreaper around firejail)");
    }
    size_t n;
    const char *const *cannot = rf_firejail_cannot(&n);
    for (size_t i = 0; i < n; i++)
        rc |= push(&b->lacks, cannot[i]);
    rc |= push(&b->lacks, "network allowlist: refused (firejail makes its network namespace; the proxy's "
                          "listener cannot be put in it)");
    return rc < 0 ? -1 : 0;
}
