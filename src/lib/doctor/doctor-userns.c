/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Can this caller build what the native backend builds? Asking sysctls is
 * not enough (AppArmor, container seccomp filters and masked /proc all say
 * no in their own way), so a child tries it: a user namespace with its
 * uid/gid map, the other namespaces, a tmpfs mount and a fresh /proc. The
 * sysctls are read afterwards only to explain a failure. */
#include "doctor/doctor.h"
#include "util/cleanup.h"
#include "util/ident.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct step_result {
    int step;
    int errnum;
};

static void send_result(int fd, rf_doctor_userns_step step, int errnum)
{
    struct step_result res = { (int)step, errnum };
    if (write(fd, &res, sizeof res) < 0)
        _exit(2);
}

static int write_proc(const char *path, const char *text)
{
    _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    return write(fd, text, n) == (ssize_t)n ? 0 : -1;
}

/* pid 1 of the new pid namespace: mount what the native backend mounts. */
_Noreturn static void as_init(int fd)
{
    struct stat st;
    const char *target = stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/";
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") < 0) {
        send_result(fd, RF_DOCTOR_USERNS_MOUNT, errno);
        _exit(1);
    }
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
        send_result(fd, RF_DOCTOR_USERNS_PROC, errno);
        _exit(1);
    }
    send_result(fd, RF_DOCTOR_USERNS_OK, 0);
    _exit(0);
}

_Noreturn static void probe_child(int fd)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER) < 0) {
        send_result(fd, RF_DOCTOR_USERNS_UNSHARE, errno);
        _exit(1);
    }
    char map[64];
    /* setgroups must be denied before an unprivileged gid_map write. */
    if (write_proc("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
        goto map_failed;
    snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
    if (write_proc("/proc/self/uid_map", map) < 0)
        goto map_failed;
    snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
    if (write_proc("/proc/self/gid_map", map) < 0)
        goto map_failed;
    const int others =
        CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (unshare(others) < 0) {
        send_result(fd, RF_DOCTOR_USERNS_NAMESPACES, errno);
        _exit(1);
    }
    pid_t pid = fork(); /* the first child in a new pid namespace is its pid 1 */
    if (pid < 0) {
        send_result(fd, RF_DOCTOR_USERNS_NAMESPACES, errno);
        _exit(1);
    }
    if (pid == 0)
        as_init(fd);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    _exit(0);
map_failed:
    send_result(fd, RF_DOCTOR_USERNS_MAP, errno);
    _exit(1);
}

static long read_sysctl(const char *path)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    long v;
    if (!f || fscanf(f, "%ld", &v) != 1)
        return -1;
    return v;
}

static void because(rf_doctor_report *r, const char *why)
{
    (void)rf_strv_push(&r->userns.reasons, why);
}

/* Likely causes, most specific first. */
static void explain(rf_doctor_report *r)
{
    int e = r->userns.errnum;
    if (r->userns.reached == RF_DOCTOR_USERNS_UNSHARE) {
        if (r->userns.unprivileged_userns_clone == 0)
            because(r, "kernel.unprivileged_userns_clone = 0: unprivileged user namespaces are "
                       "off (sysctl -w kernel.unprivileged_userns_clone=1)");
        if (r->userns.max_user_namespaces == 0)
            because(r, "user.max_user_namespaces = 0: user namespaces are off "
                       "(sysctl -w user.max_user_namespaces=15000)");
        else if (e == ENOSPC)
            because(r, "the user.max_user_namespaces limit is reached");
        if (e == EINVAL)
            because(r, "the process is multithreaded or in a chroot");
    }
    if (r->userns.apparmor_restrict == 1)
        because(r, rf_ident_apparmor_restricts_userns()
                       ? "kernel.apparmor_restrict_unprivileged_userns = 1 and ringfence runs unconfined: "
                         "AppArmor takes capabilities away in new user namespaces (Ubuntu 23.10+); load the "
                         "package's profile (sudo apparmor_parser -r /etc/apparmor.d/ringfence), use --backend "
                         "landlock, or set the sysctl to 0"
                       : "kernel.apparmor_restrict_unprivileged_userns = 1, but ringfence runs under an "
                         "AppArmor profile of its own (it must grant 'userns,')");
    if (r->userns.reached == RF_DOCTOR_USERNS_PROC)
        because(r, "a fresh /proc cannot be mounted: parts of /proc are hidden here (a "
                   "container's masked paths?); use --backend landlock");
    if (r->seccomp.mode_now == 2)
        because(r, "this process already runs under a seccomp filter (a container or another "
                   "sandbox?), which may deny unshare or mount");
    if (!r->userns.reasons) {
        char buf[160];
        snprintf(buf, sizeof buf, "%s failed: %s", rf_doctor_userns_step_name(r->userns.reached),
                 strerror(e));
        because(r, buf);
    }
}

void rf_doctor_probe_userns(rf_doctor_report *r)
{
    r->userns.unprivileged_userns_clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
    r->userns.max_user_namespaces = read_sysctl("/proc/sys/user/max_user_namespaces");
    r->userns.apparmor_restrict = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    if (rf_ident_apparmor_restricts_userns())
        r->userns.apparmor_restrict = 1; /* (the test hook too: util/ident.c) */
    r->userns.reached = RF_DOCTOR_USERNS_UNSHARE;
    r->userns.errnum = ECHILD;

    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        r->userns.errnum = errno;
        explain(r);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        probe_child(p[1]);
    }
    close(p[1]);
    struct step_result res;
    /* One result, written by the child or by its pid 1. */
    if (pid > 0 && read(p[0], &res, sizeof res) == (ssize_t)sizeof res) {
        r->userns.reached = (rf_doctor_userns_step)res.step;
        r->userns.errnum = res.errnum;
    } else if (pid < 0)
        r->userns.errnum = errno;
    close(p[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (r->userns.reached != RF_DOCTOR_USERNS_OK)
        explain(r);
}

const char *rf_doctor_userns_step_name(rf_doctor_userns_step step)
{
    switch (step) {
    case RF_DOCTOR_USERNS_UNSHARE:
        return "unshare(CLONE_NEWUSER)";
    case RF_DOCTOR_USERNS_MAP:
        return "writing uid_map/gid_map";
    case RF_DOCTOR_USERNS_NAMESPACES:
        return "unshare(mount, pid, net, ipc, uts, cgroup)";
    case RF_DOCTOR_USERNS_MOUNT:
        return "mounting a tmpfs";
    case RF_DOCTOR_USERNS_PROC:
        return "mounting /proc";
    case RF_DOCTOR_USERNS_OK:
        return "ok";
    }
    return "?";
}
