/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The monitor: the command's process of the landlock backend's init, with
 * bwrap in place of the command. It hands bwrap the compiled filter in a
 * memfd, a status pipe and a block pipe holding one byte, then reads
 * bwrap's --json-status-fd ("exit-code" is the command's status). bwrap's
 * sandbox reads the byte after its last mount, just before the filter and
 * exec (--block-fd); if it is still there when bwrap is gone, bwrap failed
 * before the command ran, and the caller hears a setup error, never an
 * exit status the command did not give (bwrap exits 1 either way). No
 * allocation (see hostproc.h). */
#include "backend/bwrap/bwrap.h"
#include "backend/bwrap/runner.h"
#include "channel/report.h"
#include "backend/native/sandbox.h"
#include "backend/reaper.h"
#include "util/memfd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static _Noreturn void die(const rf_hostproc_ctx *c, const char *step, const char *detail, int errnum)
{
    rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, errnum, step, detail);
    _exit(RF_EXIT_FAILURE);
}

static int seccomp_memfd(const rf_hostproc_ctx *c)
{
    if (!c->seccomp_len)
        return -1;
    int fd = rf_memfd_with("ringfence-seccomp", c->seccomp_bpf, c->seccomp_len);
    if (fd < 0)
        die(c, "bwrap seccomp memfd", NULL, errno);
    return fd;
}

/* In bwrap's process: the two descriptors at the numbers in its argv
 * (dup2 clears close-on-exec; everything else stays close-on-exec). */
static _Noreturn void exec_bwrap(const rf_hostproc_ctx *c, int seccomp_fd, int status_fd, int block_fd)
{
    const rf_bwrap_runner *r = c->runner;
    /* Out of the way of the target numbers first. */
    int s = seccomp_fd >= 0 ? fcntl(seccomp_fd, F_DUPFD_CLOEXEC, 10) : -1;
    int w = fcntl(status_fd, F_DUPFD_CLOEXEC, 10);
    int b = fcntl(block_fd, F_DUPFD_CLOEXEC, 10);
    if (w < 0 || b < 0 || (seccomp_fd >= 0 && s < 0) || dup2(w, RF_BWRAP_STATUS_FD) < 0 ||
        dup2(b, RF_BWRAP_BLOCK_FD) < 0 || (s >= 0 && dup2(s, RF_BWRAP_SECCOMP_FD) < 0)) {
        rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, errno, "bwrap descriptors", NULL);
        _exit(RF_EXIT_FAILURE);
    }
    execve(RF_BWRAP_PATH, r->argv, r->envp);
    int e = errno;
    rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, e, "execute bwrap", RF_BWRAP_PATH);
    _exit(RF_EXIT_FAILURE);
}

/* The value after `"key":` in buf, or -1. bwrap writes one small JSON
 * object per line ({ "child-pid": 123 }, { "exit-code": 0 }). */
static long json_number(const char *buf, const char *key)
{
    const char *k = strstr(buf, key);
    if (!k)
        return -1;
    k = strchr(k + strlen(key), ':');
    if (!k)
        return -1;
    char *end = NULL;
    long v = strtol(k + 1, &end, 10);
    return end == k + 1 ? -1 : v;
}

/* Landlock scopes, no filesystem or TCP rights: a domain that handles no
 * filesystem access leaves mount(2) alone, so bwrap still builds its root,
 * while the command can neither signal nor reach the abstract unix sockets
 * of processes outside (ringfence, the user's session: with network host
 * they share the network namespace that holds those sockets). */
static void scope_ipc(const rf_hostproc_ctx *c)
{
    const rf_bwrap_runner *r = c->runner;
    if (!r->scope_ipc)
        return;
    struct { uint64_t handled_fs, handled_net, scoped; } attr = { 0, 0, 0x1 | 0x2 }; /* abstract unix, signal */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        die(c, "set no_new_privs", NULL, errno);
    int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0 || syscall(SYS_landlock_restrict_self, fd, 0) < 0)
        die(c, "landlock", "IPC scopes around bwrap", errno);
    close(fd);
}

static void write_proc_self(const rf_hostproc_ctx *c, const char *file, const char *text)
{
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? write(fd, text, strlen(text)) : -1;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (n != (ssize_t)strlen(text))
        die(c, "bwrap network namespace: id map", file, n < 0 ? e : EIO);
}

/* network: allowlist. bwrap cannot be handed a network namespace, so the
 * monitor makes one (with a user namespace of its own, mapping only its
 * ids, which it may as an unprivileged process), brings lo up, sends the
 * proxy's listener made in it to the caller, and bwrap runs without
 * --unshare-net: the command's only way out is that listener. The
 * monitor stays in the namespace to hand out sockets for --publish. */
static void own_network(const rf_hostproc_ctx *c)
{
    if (c->net_fd < 0)
        return;
    char map[64];
    unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
        die(c, "bwrap network namespace", "unshare(user, network)", errno);
    /* A root caller's monitor switched ids, so it is not dumpable and its
     * /proc/self files belong to root: dumpable only while it writes its
     * own maps, before anything else runs in the namespace. */
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
        die(c, "bwrap network namespace: id map", "dumpable", errno);
    snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
    write_proc_self(c, "/proc/self/uid_map", map);
    write_proc_self(c, "/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
    write_proc_self(c, "/proc/self/gid_map", map);
    if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        die(c, "bwrap network namespace: id map", "dumpable", errno);
    rf_setup_fail f = { 0 };
    if (rf_net_loopback_up(&f) < 0 || rf_net_send_proxy_listener(c->net_fd, &f) < 0)
        die(c, f.step, f.detail, f.errnum);
}

/* The signals init forwards to its command (native/init.c): here they
 * are for the command inside bwrap, which is ours to pass them to (bwrap
 * passes none on itself; the command runs in a session of its own).
 * bwrap's two processes are left alone, so bwrap reports the command's
 * own status. */
static int forwarded_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < RF_INIT_N_FORWARDED; i++)
        sigaddset(&set, rf_init_forwarded[i]);
    return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Read bwrap's status pipe until it closes; meanwhile pass the forwarded
 * signals to bwrap's tree and answer --publish's requests for sockets of
 * the sandbox's network namespace. The exit code bwrap reported, or -1. */
static long read_status(const rf_hostproc_ctx *c, int status_fd)
{
    char buf[4096];
    size_t len = 0;
    long code = -1;
    int net = c->net_fd, sig = forwarded_signals();
    for (;;) {
        struct pollfd p[3] = { { .fd = status_fd, .events = POLLIN }, { .fd = sig, .events = POLLIN },
                               { .fd = net, .events = POLLIN } };
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        struct signalfd_siginfo si;
        if (sig >= 0 && p[1].revents && read(sig, &si, sizeof si) == (ssize_t)sizeof si)
            rf_reaper_signal_below(2, (int)si.ssi_signo); /* not bwrap and its pid 1: the command */
        if (net >= 0 && p[2].revents && rf_net_serve_socket_request(net) < 0) {
            close(net);
            net = -1;
        }
        if (!p[0].revents)
            continue;
        ssize_t n = read(status_fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (code < 0)
            code = json_number(buf, "\"exit-code\"");
        if (len > sizeof buf / 2) { /* keep the tail: only two small documents matter */
            memmove(buf, buf + len - 64, 64);
            len = 64;
        }
    }
    if (sig >= 0)
        close(sig);
    return code;
}

_Noreturn void rf_bwrap_monitor(const rf_hostproc_ctx *c)
{
    scope_ipc(c);
    own_network(c);
    int seccomp_fd = seccomp_memfd(c);
    int status[2], block[2];
    if (pipe2(status, O_CLOEXEC) < 0 || pipe2(block, O_CLOEXEC) < 0)
        die(c, "bwrap status pipe", NULL, errno);
    if (write(block[1], "g", 1) != 1)
        die(c, "bwrap block pipe", NULL, errno);
    close(block[1]);
    pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
    if (pid < 0)
        die(c, "fork bwrap", NULL, errno);
    if (pid == 0)
        exec_bwrap(c, seccomp_fd, status[1], block[0]);
    /* Blocked: the forwarded ones arrive through read_status's signalfd;
     * bwrap's status is the one to report. */
    sigset_t mask;
    sigfillset(&mask);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    close(status[1]);
    if (seccomp_fd >= 0)
        close(seccomp_fd);
    long code = read_status(c, status[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int unread = 0;
    if (ioctl(block[0], FIONREAD, &unread) < 0)
        unread = 0;
    if (unread > 0) {
        char detail[160];
        snprintf(detail, sizeof detail, "bwrap (%s %d) before it started the command; its message is above",
                 WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        die(c, "bwrap", detail, ECHILD);
    }
    if (code >= 0)
        _exit((int)(code & 0xff));
    /* bwrap itself was killed (the tree kill): report that signal. */
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, WTERMSIG(st));
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(WTERMSIG(st));
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : RF_EXIT_FAILURE);
}
