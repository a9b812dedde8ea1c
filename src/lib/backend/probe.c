/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --backend auto: try, in a short-lived child, what the native backend
 * needs and what fails in practice (user namespaces switched off, AppArmor
 * taking capabilities away in new user namespaces, a container that forbids
 * mounting /proc), then pick native or landlock. The network, IPC, UTS and
 * cgroup namespaces are left out: they cost most of the probe's time and
 * fail only where the user namespace already does. */
#include "backend/backend.h"
#include "backend/bwrap/bwrap.h"
#include "landlock/landlock.h"
#include "util/error.h"
#include "util/ident.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

enum probe_step { STEP_FORK, STEP_UNSHARE, STEP_MAP, STEP_FORK_INIT, STEP_MOUNT, STEP_PROC, STEP_OK };

static const char *const step_names[] = {
    [STEP_FORK] = "fork",
    [STEP_UNSHARE] = "unshare(user, mount, pid namespaces)",
    [STEP_MAP] = "writing uid_map/gid_map",
    [STEP_FORK_INIT] = "fork into the pid namespace",
    [STEP_MOUNT] = "making the mount namespace private",
    [STEP_PROC] = "mounting a fresh /proc",
};

struct probe_result {
    int step;
    int errnum;
};

/* Runs between fork and _exit: no allocation, no stdio. */
static _Noreturn void report(int fd, int step, int errnum)
{
    struct probe_result r = { step, errnum };
    (void)!write(fd, &r, sizeof r);
    _exit(step == STEP_OK ? 0 : 1);
}

static int write_text(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, len);
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)len ? 0 : -1;
}

/* "0 <id> 1" without snprintf (async-signal-safe). */
static size_t id_map(char *buf, unsigned id)
{
    char digits[12];
    size_t n = 0, len = 0;
    do
        digits[n++] = (char)('0' + id % 10);
    while ((id /= 10) && n < sizeof digits);
    buf[len++] = '0';
    buf[len++] = ' ';
    while (n)
        buf[len++] = digits[--n];
    buf[len++] = ' ';
    buf[len++] = '1';
    return len;
}

static _Noreturn void probe_child(int fd)
{
    char map[32];
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
        report(fd, STEP_UNSHARE, errno);
    /* setgroups must be denied before an unprivileged gid_map write. */
    if ((write_text("/proc/self/setgroups", "deny", 4) < 0 && errno != ENOENT) ||
        write_text("/proc/self/uid_map", map, id_map(map, uid)) < 0 ||
        write_text("/proc/self/gid_map", map, id_map(map, gid)) < 0)
        report(fd, STEP_MAP, errno);
    pid_t pid = fork(); /* the first child in the new pid namespace */
    if (pid < 0)
        report(fd, STEP_FORK_INIT, errno);
    if (pid == 0) {
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
            report(fd, STEP_MOUNT, errno);
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
            report(fd, STEP_PROC, errno);
        report(fd, STEP_OK, 0);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    _exit(0);
}

/* Host root's way (plan_root.c): the namespaces made in this user
 * namespace and the idmapped mounts (CAP_SYS_ADMIN), loopback brought up
 * in a network namespace it owns (CAP_NET_ADMIN), uid 0 mapped to another
 * id (CAP_SETUID, CAP_SETGID). */
const char *rf_backend_root_lacks(bool netns)
{
    static const struct {
        int cap;
        const char *name;
    } need[] = {
        { CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
        { CAP_NET_ADMIN, "CAP_NET_ADMIN" },
        { CAP_SETUID, "CAP_SETUID" },
        { CAP_SETGID, "CAP_SETGID" },
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if ((netns || need[i].cap != CAP_NET_ADMIN) && !rf_ident_has_cap(need[i].cap))
            return need[i].name;
    return NULL;
}

/* A root caller without those, in the host's user namespace: the plan
 * refuses native unless accept_weaker (its uid 0 would be host uid 0). */
static bool root_refused(char *why, size_t size)
{
    const char *cap = geteuid() == 0 ? rf_backend_root_lacks(true) : NULL;
    if (!cap || !rf_ident_initial_userns())
        return false;
    snprintf(why, size, "this root lacks %s, so the sandbox's uid 0 would be host uid 0 (--backend native "
                        "--accept-weaker accepts that by name)", cap);
    return true;
}

bool rf_backend_probe_native(char *why, size_t size)
{
    struct probe_result r = { STEP_FORK, ECHILD };
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        r.errnum = errno;
    } else {
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            probe_child(p[1]);
        }
        if (pid < 0)
            r.errnum = errno;
        close(p[1]);
        /* One result, written by the child or by its pid 1. */
        if (pid > 0 && read(p[0], &r, sizeof r) != (ssize_t)sizeof r)
            r = (struct probe_result){ STEP_FORK, ECHILD };
        close(p[0]);
        while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (r.step == STEP_OK) {
        if (why)
            snprintf(why, size, "user namespaces and a fresh /proc work here");
        return true;
    }
    if (why) {
        const char *step = r.step >= 0 && r.step < STEP_OK ? step_names[r.step] : "probe";
        snprintf(why, size, "%s failed: %s", step, strerror(r.errnum));
    }
    return false;
}

int rf_backend_choose_auto(rf_backend_kind *ret, char **reason, rf_error **err)
{
    char why[256], bw[400];
    int n;
    bool refused_root = false;
    if (rf_backend_probe_native(why, sizeof why) && !(refused_root = root_refused(why, sizeof why))) {
        *ret = RF_BACKEND_NATIVE;
        n = asprintf(reason, "auto: native, since %s", why);
    } else if (!refused_root && rf_bwrap_usable(bw, sizeof bw)) {
        /* bwrap's namespaces and mounts are native's: stronger than
         * Landlock alone. Not for a root the native backend refuses: bwrap
         * switches it to the workspace's owner, who cannot reach root's
         * instance tree. */
        *ret = RF_BACKEND_BWRAP;
        n = asprintf(reason, "auto: bwrap, since the native backend cannot run here (%s) and %s", why, bw);
    } else if (rf_landlock_abi() >= 1) {
        *ret = RF_BACKEND_LANDLOCK;
        n = asprintf(reason, "auto: landlock, since the native backend cannot run here (%s)", why);
    } else {
        rf_error_set(err, 0, "backend auto: no sandbox backend works here: native: %s; landlock: "
                             "the kernel has no usable Landlock", why);
        return rf_error_hint_set(err, "run 'ringfence doctor' to see why; --backend none runs "
                                      "the command without a sandbox");
    }
    if (n < 0)
        return rf_error_set(err, ENOMEM, "backend auto");
    return 0;
}
