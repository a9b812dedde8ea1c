/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backend/native/sandbox.h"
#include "instance/subid.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char *path, const char *text, rf_error **err)
{
    _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return rf_error_set(err, errno, "open %s", path);
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len)
        return rf_error_set(err, errno, "write %s (\"%s\")", path, text);
    return 0;
}

/* An unprivileged caller's instance with a subordinate id of its own
 * (docs/instances.md): only the setuid newuidmap/newgidmap may map that
 * id. The caller's own ids are mapped too, as 65534 inside, because the
 * setup steps still run as the caller (its files stay reachable to them);
 * the child switches to uid_in/gid_in before the command (sandbox.c).
 * setgroups stays allowed: newgidmap insists on it for a subordinate gid,
 * and the child uses it to drop the caller's groups before the switch. */
static int subordinate_maps(pid_t pid, uid_t uid_in, uid_t uid_host, gid_t gid_in, gid_t gid_host, rf_error **err)
{
    char um[96], gm[96];
    if (uid_in == 65534 || gid_in == 65534)
        return rf_error_set(err, EINVAL, "an instance's own identity: the caller's id is 65534 (nobody)");
    snprintf(um, sizeof um, "%u %u 1 65534 %u 1", (unsigned)uid_in, (unsigned)uid_host, (unsigned)geteuid());
    snprintf(gm, sizeof gm, "%u %u 1 65534 %u 1", (unsigned)gid_in, (unsigned)gid_host, (unsigned)getegid());
    return rf_subid_write_maps(pid, um, gm, err);
}

int rf_userns_write_maps(pid_t pid, uid_t uid_in, uid_t uid_host, gid_t gid_in, gid_t gid_host,
                         rf_error **err)
{
    char path[64], map[64];
    if (geteuid() != 0 && (uid_host != geteuid() || gid_host != getegid()))
        return subordinate_maps(pid, uid_in, uid_host, gid_in, gid_host, err);
    /* setgroups must be denied before an unprivileged gid_map write, and
     * denying it also stops the sandbox from dropping a group that guards
     * a file against it ("negative" group permissions). */
    snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
    if (write_file(path, "deny", err) < 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid_in, (unsigned)uid_host);
    if (write_file(path, map, err) < 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid_in, (unsigned)gid_host);
    return write_file(path, map, err);
}

/* The helper only holds the namespace alive until the caller has opened
 * it. The caller writes a byte: waiting for EOF instead would hang when a
 * concurrent spawn on another thread has forked a copy of the write end,
 * and two such helpers would wait on each other for ever. It shares the
 * caller's memory (CLONE_VM) on a stack of its own: no copy of the
 * caller's address space to make and tear down, which was most of the
 * helper's cost. Every signal is blocked in it (the mask is set around the
 * clone), so its read cannot fail and it never writes the errno it shares
 * with the caller's thread. */
static int hold_namespace(void *arg)
{
    const int *sync = arg;
    char c;
    close(sync[1]); /* its copy: a caller that dies leaves it EOF, not a wait for ever */
    (void)!read(sync[0], &c, 1);
    return 0;
}

int rf_userns_create_mapped(uid_t uid_in, uid_t uid_host, gid_t gid_in, gid_t gid_host, rf_error **err)
{
    int sync[2];
    if (pipe2(sync, O_CLOEXEC) < 0)
        return rf_error_set(err, errno, "pipe");
    _Alignas(16) char stack[16384];
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int flags = (RF_SHARED_VM_CLONE ? CLONE_VM : 0) | CLONE_NEWUSER | SIGCHLD;
    pid_t pid = clone(hold_namespace, stack + sizeof stack, flags, sync);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        close(sync[0]);
        close(sync[1]);
        rf_error_set(err, e, "create a user namespace for the id mapping");
        if (e == ENOSPC || e == EUSERS || e == EPERM || e == EACCES)
            rf_error_hint_set(err, "this host allows no more user namespaces, or none at all (sysctl "
                                   "user.max_user_namespaces = 0, a container or a security module that "
                                   "forbids them): raise the limit, or use --backend landlock, which needs "
                                   "none (its plan's 'cannot' list says what it gives up); 'ringfence "
                                   "doctor' shows what this host allows");
        return -1;
    }
    int fd = -1;
    if (rf_userns_write_maps(pid, uid_in, uid_host, gid_in, gid_host, err) == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            rf_error_set(err, errno, "open %s", path);
    }
    (void)!write(sync[1], "", 1);
    /* Its stack is in this frame: return only once it has exited. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    close(sync[0]);
    close(sync[1]);
    return fd;
}
