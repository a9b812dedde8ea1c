/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The smaller host probes of ringfence doctor: kernel, seccomp, cgroups and
 * the sandbox tools on PATH. */
#include "doctor/doctor.h"
#include "seccomp/seccomp.h"
#include "limits/cgmanager.h"
#include "limits/cgroup.h"
#include "limits/systemd.h"
#include "util/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

void rf_doctor_probe_kernel(rf_doctor_report *r)
{
    struct utsname u;
    if (uname(&u) < 0)
        return;
    snprintf(r->kernel_release, sizeof r->kernel_release, "%s", u.release);
    snprintf(r->kernel_version, sizeof r->kernel_version, "%s", u.version);
    snprintf(r->machine, sizeof r->machine, "%s", u.machine);
}

/* "Seccomp:" and "Seccomp_filters:" of this process. */
static void seccomp_now(rf_doctor_report *r)
{
    r->seccomp.mode_now = -1;
    r->seccomp.filters_now = -1;
    _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "Seccomp: %d", &r->seccomp.mode_now);
        sscanf(line, "Seccomp_filters: %d", &r->seccomp.filters_now);
    }
}

/* Seccomp works when a child under ringfence's default filter gets the
 * filter's ENOSYS from clone3 (unfiltered, clone3(NULL, 0) is EINVAL). */
void rf_doctor_probe_seccomp(rf_doctor_report *r)
{
    const struct scmp_version *v = seccomp_version();
    if (v)
        snprintf(r->seccomp.libseccomp, sizeof r->seccomp.libseccomp, "%u.%u.%u", v->major, v->minor,
                 v->micro);
    seccomp_now(r);

    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT };
    _cleanup_free_ void *bpf = NULL;
    size_t len = 0;
    if (rf_seccomp_compile(&req, &bpf, &len, NULL) < 0) {
        r->seccomp.errnum = EINVAL;
        return;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        r->seccomp.errnum = errno;
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int e = 0;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            e = errno;
        else if (rf_seccomp_apply_bpf(bpf, len, NULL) < 0)
            e = errno;
        else if (syscall(SYS_clone3, NULL, 0) < 0 && errno != ENOSYS)
            e = ENOTSUP; /* installed, but not ours in effect */
        if (write(p[1], &e, sizeof e) < 0)
            _exit(2);
        _exit(0);
    }
    close(p[1]);
    int e = ECHILD;
    if (pid < 0 || read(p[0], &e, sizeof e) != (ssize_t)sizeof e)
        e = pid < 0 ? errno : ECHILD;
    close(p[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    r->seccomp.works = e == 0;
    r->seccomp.errnum = e;
}

/* Mount points of cgroup2 and the number of cgroup v1 hierarchies. */
static int scan_mountinfo(char **v2_mount)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096];
    int v1 = 0;
    while (f && fgets(line, sizeof line, f)) {
        char mnt[1024], fstype[64];
        const char *sep = strstr(line, " - ");
        if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 || sscanf(sep + 3, "%63s", fstype) != 1)
            continue;
        if (!strcmp(fstype, "cgroup"))
            v1++;
        else if (!strcmp(fstype, "cgroup2") && !*v2_mount)
            *v2_mount = strdup(mnt);
    }
    return v1;
}

static char *own_v2_cgroup(void)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = 0;
            return strdup(line + 3);
        }
    return NULL;
}

static char *read_line(const char *path)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char buf[1024];
    if (!f || !fgets(buf, sizeof buf, f))
        return NULL;
    buf[strcspn(buf, "\n")] = 0;
    return strdup(buf);
}

/* Delegated means: a child cgroup can be created below our own, which is
 * what ringfence does for limits. Try it, and remove it again. */
static void probe_limits(rf_doctor_report *r);

void rf_doctor_probe_cgroup(rf_doctor_report *r)
{
    probe_limits(r);
    int v1 = scan_mountinfo(&r->cgroup.v2_mount);
    r->cgroup.version = r->cgroup.v2_mount ? (v1 ? "hybrid" : "v2") : (v1 ? "v1" : "none");
    r->cgroup.errnum = ENOENT;
    if (!r->cgroup.v2_mount)
        return;
    r->cgroup.own = own_v2_cgroup();
    if (!r->cgroup.own)
        return;
    char dir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s%s", r->cgroup.v2_mount, strcmp(r->cgroup.own, "/") ? r->cgroup.own : "");
    snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
    r->cgroup.controllers = read_line(path);
    snprintf(path, sizeof path, "%s/ringfence-doctor-%d", dir, (int)getpid());
    if (mkdir(path, 0755) == 0) {
        rmdir(path);
        r->cgroup.delegated = true;
        r->cgroup.errnum = 0;
    } else
        r->cgroup.errnum = errno;
}

/* Ask the code `run` uses what it would do with a memory, a pids and a cpu
 * limit (and a timeout, so the cpu fallback is the RLIMIT_CPU one). */
static void probe_limits(rf_doctor_report *r)
{
    rf_limits l = { .memory_bytes = 256u << 20, .pids = 256, .cpu = 1, .timeout_s = 60 };
    rf_error *err = NULL;
    if (rf_limits_probe(&l, &r->cgroup.how, &r->cgroup.fallback, &err) == 0)
        r->cgroup.probed = true;
    const char *scope = rf_systemd_scope_made();
    r->cgroup.systemd_scope = scope ? strdup(scope) : NULL;
    const char *own = rf_cgmanager_made();
    r->cgroup.cgroup_manager = own ? strdup(own) : NULL;
    rf_error_free(err);
}

/* PATH is read here, as the tools the bwrap, firejail and container
 * backends would run are the caller's. */
static char *which(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char full[PATH_MAX];
        if (n > 0 && n < sizeof full - strlen(name) - 2) {
            snprintf(full, sizeof full, "%.*s/%s", (int)n, path, name);
            struct stat st;
            if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
                return strdup(full);
        }
        path += n + (path[n] == ':');
    }
    return NULL;
}

void rf_doctor_probe_tools(rf_doctor_report *r)
{
    r->tools.bwrap = which("bwrap");
    r->tools.firejail = which("firejail");
    r->tools.podman = which("podman");
    r->tools.docker = which("docker");
}
