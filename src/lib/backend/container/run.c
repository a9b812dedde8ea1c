/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The thin runner of the container backend. ringfence starts a supervisor
 * (its own session, like the landlock backend's init) that runs
 * `podman run --rm --name NAME ...` and speaks the native report protocol
 * (channel/report.h), so rf_proc waits, times out and kills it like
 * any other backend:
 *
 *   TERMINATE (timeout, first step)  `podman kill --signal=15 NAME`
 *   KILL (after the grace period)    `podman rm -f NAME`, then SIGKILL to
 *   or the channel closing           podman, then `rm -f` again: a podman
 *   (ringfence itself killed)        killed while creating the container
 *                                    leaves it behind
 *   other signals (SIGINT, ...)      `podman kill --signal=N NAME`
 *
 * podman's stderr passes through the supervisor, which keeps its last line:
 * exit codes 125-127 come from podman itself when that line is podman's
 * "Error: ...", and are then reported as ringfence's setup or exec error,
 * not as the command's status. The directory with the root and the seccomp
 * profile is removed before the status is sent.
 *
 * network: allowlist (podman run by root): before podman starts, a helper
 * child of the supervisor makes a network namespace, brings lo up, sends
 * the proxy's listener made in it to the caller (where the native
 * backend's proxy runs), and bind-mounts the namespace on DIR/netns, which
 * podman joins (--network ns:DIR/netns). The helper stays in the namespace
 * to hand out sockets for --publish, and dies with the supervisor. */
#include "backend/container/container.h"
#include "backend/backend.h"
#include "channel/report.h"
#include "backend/native/sandbox.h"
#include "proc/proc.h"
#include "seccomp/seccomp.h"
#include "util/error.h"
#include "util/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <unistd.h>

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH };

typedef struct sup {
    const struct rf_container_plan *c;
    int sock;
    pid_t tool;
    int errfd;         /* the tool's stderr, read end */
    char tail[512];    /* the end of what it wrote there */
    size_t tail_len;
    bool killed;       /* removed by force: KILL or the channel closed */
} sup;

static void run_quiet(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* `TOOL [--runtime=R] VERB [ARG...] NAME`, quietly, waited for. */
static void tool_verb(const struct rf_container_plan *c, const char *verb, const char *a1, const char *a2)
{
    char *argv[8];
    size_t n = 0;
    char runtime[64];
    argv[n++] = c->tool_path;
    if (c->runtime) {
        snprintf(runtime, sizeof runtime, "--runtime=%s", c->runtime);
        argv[n++] = runtime;
    }
    argv[n++] = (char *)verb;
    if (a1)
        argv[n++] = (char *)a1;
    if (a2)
        argv[n++] = (char *)a2;
    argv[n++] = c->name;
    argv[n] = NULL;
    run_quiet(argv);
}

/* `podman rm -f -t 0 NAME` (docker: `docker rm -f NAME`). */
static void remove_container(const struct rf_container_plan *c)
{
    tool_verb(c, "rm", "-f", c->opts.tool == RF_CT_PODMAN ? "--time=0" : NULL);
}

/* `podman kill --signal=N NAME`: rootless podman's --sig-proxy ends a
 * command killed by SIGTERM with status 0 (runc, cgroup v1, checked
 * here); podman kill gives 143 as it should. */
static void signal_container(const struct rf_container_plan *c, int sig)
{
    char arg[32];
    snprintf(arg, sizeof arg, "--signal=%d", sig);
    tool_verb(c, "kill", arg, NULL);
}

static void force_end(sup *s)
{
    if (s->killed)
        return;
    s->killed = true;
    remove_container(s->c);
    kill(s->tool, SIGKILL);
}

static void read_stderr(sup *s)
{
    char buf[4096];
    ssize_t n = read(s->errfd, buf, sizeof buf);
    if (n <= 0) {
        close(s->errfd);
        s->errfd = -1;
        return;
    }
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(2, buf + off, (size_t)(n - off));
        if (w <= 0)
            break; /* stderr gone: keep reading, so the tool never blocks */
        off += w;
    }
    size_t keep = (size_t)n >= sizeof s->tail ? sizeof s->tail - 1 : (size_t)n;
    if (s->tail_len + keep >= sizeof s->tail) {
        size_t drop = s->tail_len + keep - (sizeof s->tail - 1);
        memmove(s->tail, s->tail + drop, s->tail_len - drop);
        s->tail_len -= drop;
    }
    memcpy(s->tail + s->tail_len, buf + n - keep, keep);
    s->tail_len += keep;
    s->tail[s->tail_len] = 0;
}

static void on_message(sup *s)
{
    struct rf_msg m;
    int r = rf_msg_recv(s->sock, &m);
    if (r <= 0) { /* ringfence is gone: nobody will remove the container */
        close(s->sock);
        s->sock = -1;
        force_end(s);
    } else if (m.type == RF_MSG_TERMINATE) {
        signal_container(s->c, SIGTERM);
    } else if (m.type == RF_MSG_KILL) {
        force_end(s);
    }
}

/* Until the tool is reaped; returns its wait status. */
static int supervise(sup *s, int sigfd, int pidfd)
{
    for (;;) {
        struct pollfd p[4] = { { .fd = pidfd, .events = POLLIN }, { .fd = s->sock, .events = POLLIN },
                               { .fd = sigfd, .events = POLLIN }, { .fd = s->errfd, .events = POLLIN } };
        if (poll(p, 4, -1) < 0 && errno != EINTR)
            break;
        if (p[3].revents)
            read_stderr(s);
        if (p[1].revents)
            on_message(s);
        if (p[2].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof si) == sizeof si)
                signal_container(s->c, (int)si.ssi_signo);
        }
        if (p[0].revents & POLLIN)
            break;
    }
    int st = 0;
    while (waitpid(s->tool, &st, 0) < 0 && errno == EINTR)
        ;
    while (s->errfd >= 0)
        read_stderr(s);
    return st;
}

/* The last line podman wrote, when it is one of its own errors. */
static const char *tool_error(sup *s)
{
    while (s->tail_len && s->tail[s->tail_len - 1] == '\n')
        s->tail[--s->tail_len] = 0;
    char *line = strrchr(s->tail, '\n');
    line = line ? line + 1 : s->tail;
    return !strncmp(line, "Error: ", 7) ? line + 7 : NULL;
}

static void report(sup *s, int st)
{
    if (s->sock < 0)
        return;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    const char *e = code >= 125 && code <= 127 && !s->killed ? tool_error(s) : NULL;
    if (e && code == 125)
        rf_msg_send(s->sock, RF_MSG_SETUP_ERROR, EIO, "podman run", e);
    else if (e)
        rf_msg_send(s->sock, RF_MSG_EXEC_ERROR, code == 127 ? ENOENT : EACCES, NULL, e);
    else if (s->killed)
        rf_msg_send_status(s->sock, SIGKILL, NULL);
    else if (code > 128 && code < 128 + 65) /* the tool's 128+N: killed by N */
        rf_msg_send_status(s->sock, code - 128, NULL);
    else
        rf_msg_send_status(s->sock, code << 8, NULL);
}

static void start_tool(sup *s, const int stdio[3], const sigset_t *old)
{
    int errp[2];
    if (pipe2(errp, O_CLOEXEC) < 0)
        _exit(RF_EXIT_FAILURE);
    s->tool = fork();
    if (s->tool == 0) {
        sigprocmask(SIG_SETMASK, old, NULL);
        signal(SIGPIPE, SIG_DFL);
        for (int i = 0; i < 3; i++)
            if (stdio[i] >= 0 && stdio[i] != i && dup2(stdio[i], i) < 0)
                _exit(RF_EXIT_FAILURE);
        if (dup2(errp[1], 2) < 0)
            _exit(RF_EXIT_FAILURE);
        syscall(SYS_close_range, 3, ~0U, 0);
        execv(s->c->argv[0], s->c->argv);
        dprintf(2, "Error: cannot execute %s: %s\n", s->c->argv[0], strerror(errno));
        _exit(RF_EXIT_FAILURE);
    }
    close(errp[1]);
    s->errfd = errp[0];
    if (s->tool < 0)
        _exit(RF_EXIT_FAILURE);
}

/* The helper: in a network namespace of its own, until the supervisor
 * dies or the caller closes net_fd. Reports failure by exiting before it
 * writes `ready`. */
static __attribute__((noreturn)) void netns_helper(const struct rf_container_plan *c, int net_fd, int ready)
{
    rf_setup_fail f = { 0 };
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || unshare(CLONE_NEWNET) < 0 ||
        rf_net_loopback_up(&f) < 0 || rf_net_send_proxy_listener(net_fd, &f) < 0 ||
        mount("/proc/self/ns/net", c->netns_path, NULL, MS_BIND, NULL) < 0) {
        dprintf(2, "Error: network namespace for the proxy: %s\n", strerror(f.errnum ? f.errnum : errno));
        _exit(RF_EXIT_FAILURE);
    }
    if (write(ready, "r", 1) != 1)
        _exit(RF_EXIT_FAILURE);
    close(ready);
    for (;;) {
        struct pollfd p = { .fd = net_fd, .events = POLLIN };
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            _exit(0);
        if (p.revents && rf_net_serve_socket_request(net_fd) < 0)
            _exit(0);
    }
}

/* Start the helper and wait until the namespace is in place; its pid, or
 * -1 when it failed (its message is on stderr). */
static pid_t start_netns(const struct rf_container_plan *c, int net_fd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        netns_helper(c, net_fd, p[1]);
    }
    close(p[1]);
    close(net_fd); /* the helper's now: the caller sees it close if the helper dies */
    char b = 0;
    ssize_t n;
    while ((n = read(p[0], &b, 1)) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (pid > 0 && n == 1)
        return pid;
    if (pid > 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    return -1;
}

static __attribute__((noreturn)) void supervisor(const struct rf_container_plan *c, int sock, const int stdio[3],
                                                 int net_fd, int fault_fd)
{
    rf_init_reset_signals(); /* waits for podman: a caller's ignored SIGCHLD would lose its status */
    setsid(); /* the terminal's ^C reaches ringfence, which passes it on once */
    signal(SIGPIPE, SIG_IGN);
    if (stdio[2] >= 0 && dup2(stdio[2], 2) < 0)
        _exit(RF_EXIT_FAILURE);
    sigset_t set, old;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaddset(&set, forwarded[i]);
    sigprocmask(SIG_BLOCK, &set, &old);
    int sigfd = signalfd(-1, &set, SFD_CLOEXEC);
    sup s = { .c = c, .sock = sock, .errfd = -1 };
    pid_t helper = net_fd >= 0 ? start_netns(c, net_fd) : 0;
    if (helper < 0) {
        rf_msg_send(sock, RF_MSG_SETUP_ERROR, EIO, "network namespace for the proxy", c->netns_path);
        rf_container_dir_remove(c->dir);
        _exit(0);
    }
    if (helper > 0)
        rf_fault_child_point(fault_fd, sock, "netns"); /* bind-mounted on DIR/netns */
    start_tool(&s, stdio, &old);
    rf_fault_child_point(fault_fd, sock, "podman"); /* podman started, the container being made */
    int pidfd = (int)syscall(SYS_pidfd_open, s.tool, 0);
    int st = supervise(&s, sigfd, pidfd);
    if (s.killed)
        remove_container(c); /* created after the first rm, by a podman killed mid-way */
    if (helper > 0) {
        kill(helper, SIGKILL);
        while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    rf_container_dir_remove(c->dir);
    if (access(c->dir, F_OK) == 0) {
        /* podman run --rm can return while its cleanup still holds the
         * root; rm -f waits for that cleanup, then the removal holds. */
        remove_container(c);
        rf_container_dir_remove(c->dir);
    }
    report(&s, st);
    _exit(0);
}

static int write_seccomp(const rf_plan *plan, const struct rf_container_plan *c, rf_error **err)
{
    if (!c->seccomp_path)
        return 0;
    /* The plan's filter in OCI form (what `ringfence export` writes too). */
    rf_seccomp_request req = { .profile = plan->seccomp, .deny = plan->seccomp_deny,
                               .allow = plan->seccomp_allow, .deny_inet = plan->seccomp_deny_inet };
    json_t *sc = rf_seccomp_to_oci(&req);
    int r = sc ? json_dump_file(sc, c->seccomp_path, JSON_COMPACT) : -1;
    json_decref(sc);
    return r < 0 ? rf_error_set(err, EIO, "backend container: write the seccomp profile %s", c->seccomp_path) : 0;
}

/* The run's directory, locked (rootfs.c), with what podman is given: the
 * root, the seccomp profile, the network namespace's mount point. Returns
 * the lock's descriptor, which the supervisor inherits; -1 with ERR set. */
/* An empty file at path (the mount point of the network namespace). */
static int create_empty(const char *path, rf_error **err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return rf_error_set(err, errno, "backend container: create %s", path);
    close(fd);
    return 0;
}

static int prepare_host(const rf_plan *plan, const struct rf_container_plan *c, rf_error **err)
{
    char parent[4096];
    snprintf(parent, sizeof parent, "%s/container", plan->instance_root);
    int lock = rf_container_dir_make(parent, c->dir, err);
    if (lock < 0)
        return -1;
    if ((c->netns_path && create_empty(c->netns_path, err) < 0) ||
        (!c->image && rf_container_rootfs_make(plan, c->rootfs, err) < 0) || write_seccomp(plan, c, err) < 0) {
        rf_container_dir_remove(c->dir);
        close(lock);
        return -1;
    }
    return lock;
}

static rf_limits_report limits_how(const rf_plan *plan, const struct rf_container_plan *c)
{
    struct statfs sf;
    rf_limit_how cg = statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC ? RF_LIMIT_CGROUP_V2
                                                                                             : RF_LIMIT_CGROUP_V1;
    rf_limits_report how = { RF_LIMIT_NONE, RF_LIMIT_NONE, RF_LIMIT_NONE };
    if (c->opts.no_limits)
        return how;
    how.memory = plan->limits.memory_bytes ? cg : RF_LIMIT_NONE;
    how.pids = plan->limits.pids ? cg : RF_LIMIT_NONE;
    how.cpu = plan->limits.cpu > 0 ? cg : RF_LIMIT_NONE;
    return how;
}

rf_proc *rf_container_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    const struct rf_container_plan *c = plan->container;
    if (!c) {
        rf_error_set(err, EINVAL, "backend container: the plan has no container part");
        return NULL;
    }
    rf_placeholders *ph = NULL;
    int session_lock = -1;
    if (rf_backend_make_instance_dirs(plan, err) < 0 || rf_backend_session_open(plan, &session_lock, err) < 0)
        return NULL;
    rf_fault_point("instance-dirs");
    if (rf_placeholders_make(plan, &ph, err) < 0) {
        if (session_lock >= 0)
            close(session_lock);
        return NULL;
    }
    rf_fault_point("placeholders");
    int lock = prepare_host(plan, c, err);
    if (lock < 0) {
        rf_placeholders_remove(ph);
        if (session_lock >= 0)
            close(session_lock);
        return NULL;
    }
    rf_fault_point("container-dir");
    int fds[3] = { -1, -1, -1 };
    if (stdio)
        memcpy(fds, &stdio->in_fd, sizeof fds);
    int sv[2] = { -1, -1 }, nv[2] = { -1, -1 };
    pid_t pid = -1;
    bool proxy = c->netns_path != NULL;
    int fault_fd = rf_fault_arm();
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0 &&
        (!proxy || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, nv) == 0) && (pid = fork()) == 0) {
        close(sv[0]);
        if (nv[0] >= 0)
            close(nv[0]);
        supervisor(c, sv[1], fds, nv[1], fault_fd);
    }
    int e = errno;
    rf_fault_disarm_parent(fault_fd);
    close(lock); /* the supervisor holds the directory's lock from here */
    if (nv[1] >= 0)
        close(nv[1]);
    if (pid < 0 && sv[0] >= 0) {
        close(sv[0]);
        close(sv[1]);
    }
    int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    rf_proc *proc = pidfd >= 0 ? rf_proc_new(pid, pidfd, sv[0], &plan->limits) : NULL;
    if (pid > 0)
        close(sv[1]);
    if (!proc) {
        if (nv[0] >= 0)
            close(nv[0]);
        if (pid > 0) { /* the closed channel makes it remove what it started */
            close(sv[0]);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        rf_container_dir_remove(c->dir);
        rf_placeholders_remove(ph);
        if (session_lock >= 0)
            close(session_lock);
        rf_error_set(err, pid < 0 ? e : ENOMEM, "backend container: start the supervisor");
        return NULL;
    }
    proc->tree_via_init = true;
    proc->placeholders = ph;
    proc->session_lock = session_lock;
    proc->how = limits_how(plan, c);
    rf_fault_point("clone");
    if (nv[0] >= 0 && rf_backend_start_proxy(plan, proc, nv[0], err) < 0) {
        rf_proc_free(proc); /* the supervisor removes the container and the directory */
        return NULL;
    }
    if (nv[0] >= 0)
        rf_fault_point("proxy");
    rf_fault_point("spawned");
    return proc;
}
