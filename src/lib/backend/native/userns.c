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

/* The helper holds the namespace alive until the caller has opened it.
 * The caller writes a byte to release it: waiting for EOF instead would
 * hang when a concurrent spawn on another thread has forked a copy of the
 * write end, and two such helpers would wait on each other for ever.
 *
 * With `net`, it also makes the sandbox's network namespace (owned by this
 * user namespace, as an unprivileged caller's is) and brings lo up, while
 * the caller goes on preparing and cloning the sandbox; the caller then
 * opens it and hands it to the child (rf_userns_helper_netns). Creating a
 * network namespace is half a millisecond of kernel work that no longer
 * waits in line.
 *
 * It shares the caller's memory (CLONE_VM) on a stack of its own: no copy
 * of the caller's address space to make and tear down. Every signal is
 * blocked in it (the mask is set around the clone), so none interrupts it.
 * It shares the errno of the caller's thread too: it only writes it when a
 * call of its own fails, which it reports in its byte, and then the start
 * fails anyway. */
static int hold_namespace(void *arg)
{
    rf_userns_helper *h = arg;
    close(h->sync[1]); /* its copy: a caller that dies leaves it EOF, not a wait for ever */
    if (h->net) {
        unsigned char e = 0;
        rf_setup_fail f;
        if (unshare(CLONE_NEWNET) < 0)
            e = EPERM;
        else if (rf_net_loopback_up(&f) < 0)
            e = EIO;
        (void)!write(h->ready[1], &e, 1);
    }
    char c;
    (void)!read(h->sync[0], &c, 1);
    return 0;
}

int rf_userns_helper_start(rf_userns_helper *h, const rf_userns_ids *ids, bool net, rf_error **err)
{
    *h = (rf_userns_helper){ .pid = -1, .sync = { -1, -1 }, .ready = { -1, -1 }, .userns_fd = -1, .net = net };
    if (pipe2(h->sync, O_CLOEXEC) < 0 || (net && pipe2(h->ready, O_CLOEXEC) < 0)) {
        rf_error_set(err, errno, "pipe");
        rf_userns_helper_release(h);
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int flags = (RF_SHARED_VM_CLONE ? CLONE_VM : 0) | CLONE_NEWUSER | SIGCHLD;
    h->pid = clone(hold_namespace, h->stack + sizeof h->stack, flags, h);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (h->pid < 0) {
        rf_error_set(err, e, "create a user namespace for the id mapping");
        rf_userns_helper_release(h);
        return -1;
    }
    if (rf_userns_write_maps(h->pid, ids->uid_in, ids->uid_host, ids->gid_in, ids->gid_host, err) == 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int)h->pid);
        h->userns_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (h->userns_fd < 0)
            rf_error_set(err, errno, "open %s", path);
    }
    if (h->userns_fd < 0) {
        rf_userns_helper_release(h);
        return -1;
    }
    return 0;
}

int rf_userns_helper_netns(rf_userns_helper *h, rf_error **err)
{
    unsigned char e = EIO;
    ssize_t n;
    do
        n = read(h->ready[0], &e, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || e != 0)
        return rf_error_set(err, n == 1 ? e : EIO, "create the sandbox's network namespace%s",
                            n == 1 && e == EIO ? ": bring the loopback interface up" : "");
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)h->pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        rf_error_set(err, errno, "open %s", path);
    return fd;
}

void rf_userns_helper_release(rf_userns_helper *h)
{
    if (h->pid > 0) {
        (void)!write(h->sync[1], "", 1);
        /* Its stack is h->stack: return only once it has exited. */
        while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        h->pid = -1;
    }
    for (int i = 0; i < 2; i++) {
        if (h->sync[i] >= 0)
            close(h->sync[i]);
        if (h->ready[i] >= 0)
            close(h->ready[i]);
        h->sync[i] = h->ready[i] = -1;
    }
}
