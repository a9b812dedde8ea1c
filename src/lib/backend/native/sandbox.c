/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The setup child: one linear sequence that reads like the checklist it is.
 * Once namespaces are half built nothing is recoverable, so every failure is
 * reported to the caller as {step, errno, detail} and the child _exits with
 * RF_EXIT_FAILURE; setup failure is never confused with the command's own
 * exit status. No allocation from here on (see sandbox.h). */
#include "channel/report.h"
#include "backend/native/sandbox.h"
#include "limits/limits.h"
#include "tty/tty.h"
#include "util/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Noreturn void die(rf_native_ctx *c, const rf_setup_fail *f)
{
    errno = f->errnum;
    rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, f->errnum, f->step, f->detail);
    _exit(RF_EXIT_FAILURE);
}

static int setup_stdio(rf_native_ctx *c, rf_setup_fail *f)
{
    for (int i = 0; i < 3; i++)
        if (c->stdio[i] >= 0 && c->stdio[i] != i && dup2(c->stdio[i], i) < 0)
            return rf_fail(f, "stdio", NULL);
    /* A stream that will be the pty holds /dev/null until then, never the
     * caller's own descriptor: that may be the caller's terminal. */
    if (!c->pty_streams)
        return 0;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0)
        return rf_fail(f, "stdio", "/dev/null");
    for (int i = 0; i < 3; i++)
        if ((c->pty_streams & (1u << i)) && dup2(null, i) < 0)
            return rf_fail(f, "stdio", "/dev/null");
    if (null > 2)
        close(null);
    return 0;
}

/* A terminal of the command's own (tty/): a pty from the sandbox's devpts,
 * its master to the caller (the relay), its slave kept for the command.
 * After the last identity change, so the slave belongs to the command's
 * uid, and before seccomp. */
static int open_pty(rf_native_ctx *c, rf_setup_fail *f)
{
    if (!c->pty_streams)
        return 0;
    int master = -1;
    if (rf_pty_open(&c->pty_size, &master, &c->pty_slave) < 0)
        return rf_fail(f, "open a pseudo-terminal", "/dev/ptmx");
    struct rf_msg m;
    memset(&m, 0, sizeof m);
    m.type = RF_MSG_PTY;
    int rc = rf_msg_send_with_fds(c->sock, &m, sizeof m, &master, 1);
    close(master);
    return rc < 0 ? rf_fail(f, "hand the pseudo-terminal to the caller", NULL) : 0;
}

/* Close every inherited descriptor above 2 except the ones we still need:
 * a leaked fd is a hole through every other wall. */
static int close_inherited(rf_native_ctx *c, rf_setup_fail *f)
{
    enum { N = 5 };
    int keep[N] = { c->sock, c->userns_fd, c->owner_userns_fd, c->net_fd, c->fault_fd };
    for (int i = 0; i < N; i++) /* ascending, -1 first */
        for (int j = i + 1; j < N; j++)
            if (keep[j] < keep[i]) {
                int t = keep[i];
                keep[i] = keep[j];
                keep[j] = t;
            }
    unsigned lo = 3;
    for (int i = 0; i < N; i++) {
        if (keep[i] < 0)
            continue;
        if ((unsigned)keep[i] > lo && syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0) < 0)
            return rf_fail(f, "close inherited descriptors", NULL);
        lo = (unsigned)keep[i] + 1;
    }
    if (syscall(SYS_close_range, lo, UINT_MAX, 0) < 0)
        return rf_fail(f, "close inherited descriptors", NULL);
    return 0;
}

/* Wait for the caller's "go" (it writes our id maps first). EOF means the
 * caller died before we started: then nobody would ever wait for us. */
static int wait_for_go(rf_native_ctx *c, rf_setup_fail *f)
{
    struct rf_msg m;
    if (rf_msg_recv(c->sock, &m) != 1 || m.type != RF_MSG_GO) {
        errno = ECANCELED;
        return rf_fail(f, "wait for the caller", NULL);
    }
    return 0;
}

/* The parent-death signal is cleared by every credential change, so it is
 * set again after the last one, then the caller is checked to still be
 * there (it could have died in between). */
static int die_with_caller(rf_native_ctx *c, rf_setup_fail *f)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        return rf_fail(f, "set parent-death signal", NULL);
    struct pollfd p = { .fd = c->sock, .events = POLLIN };
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) {
        errno = ECANCELED;
        return rf_fail(f, "caller gone", NULL);
    }
    return 0;
}

/* EPERM in a UTS namespace of our own can only be a container's seccomp
 * filter (podman's and docker's default deny sethostname without
 * CAP_SYS_ADMIN): the namespace is still the sandbox's, so the host's
 * name cannot be changed from inside; the command sees the container's
 * name instead of "ringfence" (docs/containers.md). */
static int set_hostname(const rf_plan *plan, rf_setup_fail *f)
{
    if (sethostname(plan->hostname, strlen(plan->hostname)) == 0 && setdomainname("(none)", 6) == 0)
        return 0;
    if (errno == EPERM && (plan->clone_flags & CLONE_NEWUTS))
        return 0;
    return rf_fail(f, "set hostname", plan->hostname);
}

/* Unprivileged caller, instance with a subordinate id of its own: setup ran
 * as the caller (mapped to 65534 by userns.c); the command runs as the
 * instance's id (uid_inside here), without the caller's supplementary
 * groups. Raw calls: see enter_mapped_identity. */
static int enter_instance_identity(const rf_plan *plan, rf_setup_fail *f)
{
    if (getuid() == plan->uid_inside && getgid() == plan->gid_inside)
        return 0; /* the usual case: the caller's own uid is the only one mapped */
    gid_t g = plan->gid_inside;
    uid_t u = plan->uid_inside;
    if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, g, g, g) < 0 ||
        syscall(SYS_setresuid, u, u, u) < 0)
        return rf_fail(f, "switch to the instance's identity", NULL);
    return 0;
}

/* Root caller: leave real root for the mapped user namespace, where uid 0
 * is an unprivileged host id and the namespaces built above are owned by
 * the host's user namespace, hence out of the sandbox's reach for good. */
static int enter_mapped_identity(rf_native_ctx *c, rf_setup_fail *f)
{
    if (c->userns_fd < 0)
        return enter_instance_identity(c->plan, f);
    if (setns(c->userns_fd, CLONE_NEWUSER) < 0)
        return rf_fail(f, "enter the mapped user namespace", NULL);
    close(c->userns_fd);
    c->userns_fd = -1;
    /* Raw system calls: glibc's setresuid() would signal every thread it
     * knows of, and after clone3 in a multithreaded caller it still knows
     * the caller's threads, which are not here: it would wait for ever. */
    gid_t g = c->plan->gid_inside;
    uid_t u = c->plan->uid_inside;
    if (syscall(SYS_setresgid, g, g, g) < 0 || syscall(SYS_setresuid, u, u, u) < 0)
        return rf_fail(f, "switch to the mapped identity", NULL);
    return 0;
}

/* The caller's session keyring is inherited across clone, and a key in it
 * is readable by whoever possesses it, whatever its uid: a fresh, empty
 * session keyring keeps the caller's tokens and tickets out. Joined before
 * a root caller changes identity, so root's key quota pays for it, not the
 * shared unprivileged id. No keys in this kernel: nothing to leak. Only
 * when the filter lets key system calls through (plan->new_keyring): else
 * no key can be reached, and /proc/keys, which would list the descriptions
 * of the keys it possesses, is masked (plan_mounts.c). */
static int new_session_keyring(rf_setup_fail *f)
{
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
        return rf_fail(f, "join a new session keyring", NULL);
    return 0;
}

/* pid 1 is a copy of the caller's process: its memory holds the caller's
 * whole environment and /proc/1/environ shows it. Not dumpable, so the
 * command (same uid, no capabilities) cannot read or ptrace it. Set after
 * the last credential change, which would reset it; exec resets it for
 * the command. */
static int hide_init(rf_setup_fail *f)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return rf_fail(f, "make init non-dumpable", NULL);
    return 0;
}

static int block_signals(rf_setup_fail *f)
{
    sigset_t all;
    sigfillset(&all);
    if (sigprocmask(SIG_SETMASK, &all, NULL) < 0)
        return rf_fail(f, "block signals", NULL);
    return 0;
}

static _Noreturn void exec_command(rf_native_ctx *c)
{
    const rf_plan *plan = c->plan;
    if (c->pty_streams && rf_pty_take(c->pty_slave, c->pty_streams) < 0) {
        rf_msg_send(c->sock, RF_MSG_SETUP_ERROR, errno, "make the pseudo-terminal the controlling terminal",
                    "/dev/pts");
        _exit(RF_EXIT_FAILURE);
    }
    rf_init_before_exec();
    execve(plan->exec_path, plan->argv, plan->env);
    int e = errno;
    rf_msg_send(c->sock, RF_MSG_EXEC_ERROR, e, "execve", plan->exec_path);
    _exit(e == ENOENT ? RF_EXIT_NOT_FOUND : RF_EXIT_CANNOT_EXEC);
}

static int start_command(void *arg)
{
    exec_command(arg);
}

/* fn(arg) in a new process that shares our memory, on the stack ending
 * at stack_top, with `flags` besides (CLONE_VFORK, CLONE_FILES): no copy
 * of our address space is made, faulted in and torn down again. In
 * sanitizer builds (RF_SHARED_VM_CLONE) a copy instead, CLONE_VFORK
 * dropped: their runtimes keep per-thread state in the shared memory.
 * Raw clones, not fork(): glibc's fork() takes the malloc, stdio and
 * atfork locks, which another thread of a multithreaded caller may have
 * held at the moment of clone3; in this copy nobody would release them.
 * Nor the vfork() function: under AddressSanitizer its interceptor maps
 * memory, which the memory rlimit just applied can refuse. */
pid_t rf_clone_sharing(int (*fn)(void *), void *arg, int flags, void *stack_top)
{
    if (!RF_SHARED_VM_CLONE) {
        pid_t pid = (pid_t)syscall(SYS_clone, (flags & ~CLONE_VFORK) | SIGCHLD, NULL, NULL, NULL, 0);
        if (pid == 0)
            _exit(fn(arg));
        return pid;
    }
    return clone(fn, stack_top, CLONE_VM | flags | SIGCHLD, arg);
}

/* A process for the command: CLONE_VFORK as posix_spawn does, we
 * suspended until it has exec'd or exited, so its stack can be ours. fn
 * must only exec or _exit. */
pid_t rf_command_clone(int (*fn)(void *), void *arg)
{
    _Alignas(16) char stack[65536]; /* the child's; unused once it has exec'd */
    return rf_clone_sharing(fn, arg, CLONE_VFORK, stack + sizeof stack);
}

/* Every wall up, then the command started (or, a warm pool's, awaited):
 * the sandbox's setup, in order. Never inlined into rf_sandbox_child: its
 * frame is large (the command process's stack, path buffers), and init
 * gives it back below its own small one once setup is done
 * (rf_shed_stack). Returns the command's pid, 0 for a pool's. */
static __attribute__((noinline)) pid_t set_up(rf_native_ctx *c)
{
    const rf_plan *plan = c->plan;
    rf_setup_fail f = { 0 };

    rf_init_reset_signals();
    rf_init_own_umask();
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || setup_stdio(c, &f) < 0 ||
        close_inherited(c, &f) < 0 || wait_for_go(c, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "child-go");
    /* The caller has moved us into the sandbox's cgroups by now: a cgroup
     * namespace made here has them as its root. */
    if (c->late_cgroupns && unshare(CLONE_NEWCGROUP) < 0 && rf_fail(&f, "cgroup namespace", NULL) < 0)
        die(c, &f);
    /* The network first: the caller waits for the proxy's socket. Without
     * a proxy, a helper makes the namespace while the mounts are built. */
    rf_net_maker net = { .pid = -1, .fd = -1, .pid_counter = -1 };
    if (c->late_netns) {
        if (rf_net_start_namespace(&net, c->sock, &f) < 0)
            die(c, &f);
    } else if ((plan->clone_flags & CLONE_NEWNET) && rf_net_loopback_up(&f) < 0)
        die(c, &f);
    if (c->net_fd >= 0 && rf_net_send_proxy_listener(c->net_fd, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "network");
    /* Mounts: sources first (they may live under /tmp, which the new root
     * is attached over), then the root, then pivot_root. */
    if (rf_mount_capture_sources(plan, c->srcs, c->etc_cache, c->userns_fd, c->owner_userns_fd, &f) < 0)
        die(c, &f);
    if (c->owner_userns_fd >= 0) { /* its one use: the workspace's idmap */
        close(c->owner_userns_fd);
        c->owner_userns_fd = -1;
    }
    rf_fault_child_point(c->fault_fd, c->sock, "mount-sources");
    if (rf_mount_build_root(plan, c->srcs, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "pivot-root"); /* every mount made, then pivot_root */
    for (size_t i = 0; i <= plan->n_mounts; i++) {
        if (c->srcs[i].fd >= 0)
            close(c->srcs[i].fd);
        if (i < plan->n_mounts && c->srcs[i].upper_fd >= 0)
            close(c->srcs[i].upper_fd);
    }
    /* Before the identity changes: joining takes the capabilities over the
     * namespace's owner. Until here only the setup above ran in the host's
     * network namespace, and none of it uses the network. */
    if (c->late_netns && rf_net_join_namespace(&net, &f) < 0)
        die(c, &f);
    if (set_hostname(plan, &f) < 0 || (plan->new_keyring && new_session_keyring(&f) < 0))
        die(c, &f);
    /* Identity before chdir: the working directory is entered with the
     * permissions the command will have. */
    if (enter_mapped_identity(c, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "identity"); /* parent-death signal cleared here */
    if (die_with_caller(c, &f) < 0)
        die(c, &f);
    if (chdir(plan->cwd) < 0 && rf_fail(&f, "enter working directory", plan->cwd) < 0)
        die(c, &f);
    if (rf_limits_apply(&plan->limits, &c->how, &f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "limits");
    if (open_pty(c, &f) < 0)
        die(c, &f);
    /* A new session: no controlling terminal, so no TIOCSTI injection into
     * the caller's terminal and no job-control signals from it. With a pty
     * (tty/), the command leads a session of its own on it. */
    if (setsid() < 0 && rf_fail(&f, "setsid", NULL) < 0)
        die(c, &f);
    /* Capabilities and no_new_privs, then Landlock, then seccomp last: the
     * filter would otherwise forbid the calls the steps before it need. */
    if (rf_caps_drop_all(&f) < 0 || hide_init(&f) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "caps");
    if (rf_confine_apply(c, &f) < 0) /* landlock, then seccomp */
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "seccomp");
    /* Forwarded signals and SIGCHLD stay blocked from here on, so none is
     * lost between the command's start and init's signalfd. */
    if (block_signals(&f) < 0)
        die(c, &f);
    /* A warm pool's sandbox: everything is up, and init waits for its
     * command on the report channel (deferred.c). Otherwise the command
     * starts now. */
    pid_t cmd = 0;
    if (plan->deferred)
        rf_init_await_command();
    else if ((cmd = rf_command_clone(start_command, c)) < 0 && rf_fail(&f, "start the command", NULL) < 0)
        die(c, &f);
    rf_fault_child_point(c->fault_fd, c->sock, "exec"); /* the command started (a pool's: awaited) */
    return cmd;
}

_Noreturn void rf_sandbox_child(rf_native_ctx *c)
{
    pid_t cmd = set_up(c);
    /* Nor its own stdio: a reader of the command's output then sees EOF
     * when the command's tree ends, not when init has exited too. */
    for (int i = 0; i < 3; i++)
        close(i);
    if (c->pty_slave >= 0)
        close(c->pty_slave); /* the command's alone: its end is the master's EOF */
    rf_init_serve_sockets(c->net_fd);
    rf_shed_release(c); /* a warm pool's: only c (on our stack) is read from here on */
    rf_init_release_stack_when_idle();
    rf_init_run(cmd, c->sock, NULL);
}
