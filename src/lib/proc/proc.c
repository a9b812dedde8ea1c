/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Waiting for a sandbox: poll its init's pidfd and the report channel,
 * enforce the timeout (SIGTERM to every process, a grace period, then
 * SIGKILL to init, which takes the whole pid namespace with it). */
#include "proc/proc.h"
#include "channel/report.h"
#include "net/net.h"
#include "observe/observe.h"
#include "tty/tty.h"
#include "proc/placeholder.h"
#include "util/error.h"
#include "util/stack.h"
#include "util/strv.h"
#include "audit/run.h"
#include "registry/registry.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

rf_proc *rf_proc_new(pid_t pid, int pidfd, int sock, const rf_limits *limits)
{
    rf_proc *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->usage = calloc(1, sizeof(struct rusage));
    if (!p->usage) {
        free(p);
        return NULL;
    }
    p->pid = pid;
    p->pidfd = pidfd;
    p->sock = sock;
    p->pty_master = -1;
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* -1: rf_proc_wait polls instead */
    p->session_lock = -1;
    p->limits = *limits;
    clock_gettime(CLOCK_MONOTONIC, &p->started);
    return p;
}

/* The report channel while init may still read or write it, else -1. */
static int live_sock(const rf_proc *p)
{
    return p->sock >= 0 && !atomic_load(&p->sock_eof) ? p->sock : -1;
}

static double now_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int send_signal(rf_proc *p, int sig)
{
    if (p->reaped)
        return 0;
    if (p->pidfd >= 0)
        return (int)syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0);
    return kill(p->pid, sig);
}

RF_EXPORT char *const *rf_proc_warnings(const rf_proc *p)
{
    return p ? p->warnings : NULL;
}

RF_EXPORT pid_t rf_proc_pid(const rf_proc *p)
{
    return p ? p->pid : -1;
}

/* Async-signal-safe: the CLI calls it from its signal handlers. Init
 * passes the signal on (init.c: forward()); SIGKILL ends the tree at once. */
RF_EXPORT int rf_proc_kill(rf_proc *p, int sig)
{
    if (sig == SIGKILL)
        atomic_store(&p->killed, true);
    int sock = live_sock(p);
    if (sig == SIGKILL && p->tree_via_init && !atomic_load(&p->reaped) && sock >= 0 &&
        rf_msg_send(sock, RF_MSG_KILL, 0, NULL, NULL) == 0)
        return 0;
    return send_signal(p, sig);
}

RF_EXPORT int rf_proc_terminate(rf_proc *p)
{
    if (atomic_load(&p->reaped) || atomic_exchange(&p->terminating, true))
        return 0;
    if (p->wake_fd >= 0) { /* write(2): still async-signal-safe */
        uint64_t one = 1;
        (void)!write(p->wake_fd, &one, sizeof one);
    }
    int sock = live_sock(p);
    if (sock < 0 || rf_msg_send(sock, RF_MSG_TERMINATE, 0, NULL, NULL) < 0)
        return send_signal(p, SIGTERM);
    return 0;
}

static void handle_message(rf_proc *p, const struct rf_msg *m)
{
    switch (m->type) {
    case RF_MSG_SETUP_ERROR:
        p->setup_errno = m->errnum;
        snprintf(p->setup_step, sizeof p->setup_step, "%s", m->step);
        snprintf(p->setup_error, sizeof p->setup_error, "sandbox setup failed at step '%s'%s%s: %s", m->step,
                 m->detail[0] ? " for " : "", m->detail, strerror(m->errnum));
        break;
    case RF_MSG_EXEC_ERROR:
        p->exec_errno = m->errnum ? m->errnum : EIO;
        snprintf(p->setup_error, sizeof p->setup_error, "cannot execute %s: %s", m->detail, strerror(m->errnum));
        break;
    case RF_MSG_EXIT:
        p->have_exit = true;
        p->exit_status = m->status;
        /* The tree's usage, as init measured it: init itself may still be
         * exiting (the kernel tearing the namespaces down). */
        p->usage->ru_utime = (struct timeval){ .tv_sec = m->utime_us / 1000000, .tv_usec = m->utime_us % 1000000 };
        p->usage->ru_stime = (struct timeval){ .tv_sec = m->stime_us / 1000000, .tv_usec = m->stime_us % 1000000 };
        p->usage->ru_maxrss = m->maxrss_kb;
        break;
    default:
        break;
    }
}

static void read_messages(rf_proc *p)
{
    struct rf_msg m;
    while (live_sock(p) >= 0) {
        struct pollfd pfd = { .fd = p->sock, .events = POLLIN };
        if (poll(&pfd, 1, 0) <= 0)
            return;
        int fd = -1;
        int r = rf_msg_recv_with_fd(p->sock, &m, &fd);
        if (r <= 0) {
            atomic_store(&p->sock_eof, true); /* closed in rf_proc_free */
            return;
        }
        /* The pty's master, made inside: the relay starts, or it is kept
         * for whoever relays (pty_hold). Unasked for, or a second one, it
         * is closed. */
        if (m.type == RF_MSG_PTY && fd >= 0 && p->tty)
            (void)rf_tty_attach(p->tty, fd);
        else if (m.type == RF_MSG_PTY && fd >= 0 && p->pty_hold && p->pty_master < 0 && !p->have_exit)
            p->pty_master = fd;
        else if (m.type == RF_MSG_OBSERVE && fd >= 0 && p->observer)
            (void)rf_observer_start(p->observer, fd); /* takes fd; on failure closed: calls fail, never hang */
        else if (fd >= 0)
            close(fd);
        handle_message(p, &m);
    }
}

int rf_proc_take_pty(rf_proc *p, int timeout_ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (p->pty_master < 0 && !p->have_exit && live_sock(p) >= 0) {
        int left = timeout_ms - (int)(now_since(&t0) * 1000);
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd pfd = { .fd = p->sock, .events = POLLIN };
        int n = poll(&pfd, 1, left);
        if (n < 0 && errno != EINTR)
            return -1;
        if (n > 0)
            read_messages(p);
    }
    int fd = p->pty_master;
    p->pty_master = -1;
    return fd;
}

/* Milliseconds until the next deadline, or -1 for none. */
static int next_timeout_ms(rf_proc *p, double *grace_at)
{
    double elapsed = now_since(&p->started);
    if (p->terminating && *grace_at > 0) {
        double left = *grace_at - elapsed;
        return left <= 0 ? 0 : (int)(left * 1000) + 1;
    }
    if (p->wake_fd < 0) /* no eventfd: look for a terminate every 100 ms */
        return 100;
    if (p->limits.timeout_s > 0 && !p->timed_out) {
        double left = p->limits.timeout_s - elapsed;
        return left <= 0 ? 0 : (int)(left * 1000) + 1;
    }
    return -1;
}

void rf_proc_release_stack_when_idle(rf_proc *p, double after_s)
{
    p->release_stack_at = after_s;
}

/* The poll's timeout, shortened to the stack's release if that comes
 * first (-1: none). */
static int until_release(const rf_proc *p, int timeout_ms)
{
    if (p->release_stack_at <= 0)
        return timeout_ms;
    double left = p->release_stack_at - now_since(&p->started);
    int ms = left <= 0 ? 0 : (int)(left * 1000) + 1;
    return timeout_ms < 0 || ms < timeout_ms ? ms : timeout_ms;
}

static void check_deadlines(rf_proc *p, double *grace_at)
{
    double elapsed = now_since(&p->started);
    if (p->limits.timeout_s > 0 && !p->timed_out && elapsed >= p->limits.timeout_s) {
        p->timed_out = true;
        rf_proc_terminate(p);
    }
    if (p->terminating && *grace_at == 0)
        *grace_at = elapsed + (p->limits.kill_grace_s > 0 ? p->limits.kill_grace_s : 0);
    if (p->terminating && *grace_at > 0 && elapsed >= *grace_at && !p->killed)
        rf_proc_kill(p, SIGKILL);
}


/* The watched descriptors, for poll (a negative fd is ignored by poll). */
static void watch_pollfds(const rf_proc_watch *watch, struct pollfd *pfd)
{
    for (size_t i = 0; i < RF_PROC_WATCH_MAX; i++)
        pfd[i] = (struct pollfd){ .fd = watch ? watch->fd[i] : -1, .events = POLLIN };
}

static void serve_watch(rf_proc_watch *watch, const struct pollfd *pfd)
{
    for (size_t i = 0; watch && i < RF_PROC_WATCH_MAX; i++)
        if (watch->fd[i] >= 0 && pfd[i].revents)
            watch->fd[i] = watch->ready(watch->ud, i);
}

void rf_proc_watch_finish(rf_proc_watch *watch)
{
    for (;;) {
        struct pollfd pfd[RF_PROC_WATCH_MAX];
        watch_pollfds(watch, pfd);
        bool open = false;
        for (size_t i = 0; i < RF_PROC_WATCH_MAX; i++)
            open |= pfd[i].fd >= 0;
        if (!open)
            return;
        if (poll(pfd, RF_PROC_WATCH_MAX, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        serve_watch(watch, pfd);
    }
}

/* Init's pidfd is readable: it has exited. */
static int reap_init(rf_proc *p, rf_error **err)
{
    read_messages(p); /* the last status may still be queued */
    int st;
    pid_t r = wait4(p->pid, &st, 0, p->usage);
    if (r == p->pid) {
        p->reaped = true;
        p->init_status = st;
    } else if (r < 0 && errno == ECHILD) {
        /* Reaped already: this process ignores SIGCHLD (the kernel
         * then reaps its children itself), or someone else waited.
         * The status is the one init reported, if it lived to. */
        p->reaped = true;
        p->init_status = RF_EXIT_FAILURE << 8;
    } else if (r < 0 && errno != EINTR) {
        return rf_error_set(err, errno, "wait for the sandbox");
    }
    return 0;
}

/* Until init reported the command's status (it does so only once every
 * process of the tree is gone) or init itself is gone. Reaping init, which
 * waits for the kernel to tear the namespaces down, is left to
 * rf_proc_free: a caller can answer first (the pool, the MCP server). */
int rf_proc_wait_raw(rf_proc *p, rf_proc_watch *watch, rf_error **err)
{
    enum { W = 3, T = 3 + RF_PROC_WATCH_MAX, N = T + RF_TTY_NFDS };
    double grace_at = 0;
    while (!p->reaped && !p->have_exit) {
        check_deadlines(p, &grace_at);
        int sock = live_sock(p);
        /* A negative fd is ignored by poll. */
        struct pollfd pfd[N] = {
            { .fd = p->pidfd, .events = POLLIN }, { .fd = sock, .events = POLLIN },
            { .fd = p->wake_fd, .events = POLLIN },
        };
        watch_pollfds(watch, pfd + W);
        rf_tty_pollfds(p->tty, pfd + T);
        int n = poll(pfd, N, until_release(p, next_timeout_ms(p, &grace_at)));
        if (p->release_stack_at > 0 && now_since(&p->started) >= p->release_stack_at) {
            p->release_stack_at = 0;
            rf_stack_release_below();
        }
        if (n < 0 && errno != EINTR)
            return rf_error_set(err, errno, "wait for the sandbox");
        if (n > 0) {
            serve_watch(watch, pfd + W);
            rf_tty_serve(p->tty, pfd + T);
        }
        if (n > 0 && (pfd[2].revents & POLLIN)) {
            uint64_t v;
            (void)!read(p->wake_fd, &v, sizeof v); /* the deadlines are checked next round */
        }
        if (n > 0 && sock >= 0 && pfd[1].revents)
            read_messages(p);
        if (n > 0 && (pfd[0].revents & POLLIN) && reap_init(p, err) < 0)
            return -1;
    }
    /* The tree is gone: the rest of its output, and the caller's terminal
     * as it was. */
    rf_tty_finish(p->tty);
    rf_observer_stop(p->observer);
    return 0;
}

RF_EXPORT char *rf_proc_observations(rf_proc *p)
{
    if (!p || !p->observer)
        return NULL;
    rf_observer_stop(p->observer);
    return rf_observer_report(p->observer);
}

RF_EXPORT void rf_proc_free(rf_proc *p)
{
    if (!p)
        return;
    if (!p->reaped) {
        /* Through init when it must kill the tree itself: it also does so
         * on seeing the channel close. */
        if (!p->tree_via_init || live_sock(p) < 0 ||
            rf_msg_send(p->sock, RF_MSG_KILL, 0, NULL, NULL) < 0)
            send_signal(p, SIGKILL);
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    rf_tty_free(p->tty); /* the caller's terminal as it was, on every way out */
    if (p->pty_master >= 0)
        close(p->pty_master);
    rf_observer_free(p->observer); /* after the kill: the listener is hung up */
    rf_net_proxy_free(p->net_proxy);
    rf_placeholders_remove(p->placeholders); /* the sandbox is gone: nothing holds them */
    if (p->pidfd >= 0)
        close(p->pidfd);
    if (p->sock >= 0)
        close(p->sock);
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    if (p->session_lock >= 0)
        close(p->session_lock); /* the sandbox is gone: the session may be applied */
    free(p->session);
    rf_audit_run_discard(p->audit); /* never waited for: killed above */
    rf_audit_run_free(p->audit);
    rf_registry_remove(p->registry_dir, p->id); /* after the kill above: it no longer runs */
    free(p->registry_dir);
    rf_strv_free(p->weakenings);
    rf_cgroup_destroy(p->cgroup);
    rf_strv_free(p->warnings);
    free(p->usage);
    free(p);
}
