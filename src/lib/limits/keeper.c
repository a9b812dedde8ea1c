/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The keeper: a forked process that outlives a crashed or SIGKILLed caller
 * just long enough to kill what is left of the sandbox and remove its
 * cgroups. The kernel removes no cgroup by itself (v1's release_agent is a
 * host-wide setting that is not ours to touch), so someone alive has to.
 *
 * It wakes on either of two events: the caller's pidfd becomes readable
 * (the caller process is gone, however it died), or the release pipe hits
 * EOF (rf_cgroup_destroy() closed it, or the caller exec'd: the pipe is
 * O_CLOEXEC). Between fork and _exit it makes system calls only, so it is
 * safe in a multithreaded caller. */
#include "limits/cgroup-private.h"

#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open_(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

static void keeper_quiet_signals(void)
{
    /* The caller's handlers must not run here, and a Ctrl-C to the
     * terminal's process group must not stop the cleanup. */
    struct sigaction sa = { .sa_handler = SIG_IGN };
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Close every fd except the ones in keep (any order, up to 2 + 2 per dir). */
static void keeper_close_others(const int *keep, size_t n)
{
    int sorted[2 + 2 * RF_CG_MAX_DIRS];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < 0)
            continue;
        size_t j = m++;
        for (; j > 0 && sorted[j - 1] > keep[i]; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = keep[i];
    }
    unsigned lo = 0;
    for (size_t i = 0; i < m; i++) {
        if ((unsigned)sorted[i] > lo)
            close_range(lo, (unsigned)sorted[i] - 1, 0);
        lo = (unsigned)sorted[i] + 1;
    }
    close_range(lo, ~0U, 0);
}

static __attribute__((noreturn)) void keeper_main(rf_cgroup *cg, int caller_pidfd, int release_fd)
{
    keeper_quiet_signals();
    setsid(); /* out of the caller's process group: kill -PGRP spares it */
    prctl(PR_SET_NAME, "rf-cgroup-keep", 0, 0, 0);
    int keep[2 + 2 * RF_CG_MAX_DIRS];
    size_t n = 0;
    keep[n++] = caller_pidfd;
    keep[n++] = release_fd;
    for (size_t i = 0; i < cg->n; i++) {
        keep[n++] = cg->dirs[i].fd;
        keep[n++] = cg->dirs[i].parent_fd;
    }
    /* Holding a copy of the sandbox's pipes would keep readers from EOF. */
    keeper_close_others(keep, n);

    struct pollfd p[2] = { { .fd = release_fd, .events = POLLIN },
                           { .fd = caller_pidfd, .events = POLLIN } };
    while (poll(p, caller_pidfd >= 0 ? 2 : 1, -1) < 0 && errno == EINTR)
        ;
    rf_cgroup_kill_and_remove(cg);
    _exit(0);
}

int rf_cgroup_keeper_start(rf_cgroup *cg, rf_error **err)
{
    if (cg->keeper_pid > 0 || cg->n == 0)
        return 0; /* nothing to keep */
    /* Opened before fork, so it names the caller even if it dies at once. */
    _cleanup_close_ int caller_pidfd = pidfd_open_(getpid());
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return rf_error_set(err, errno, "starting the cgroup keeper: pipe");
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        return rf_error_set(err, e, "starting the cgroup keeper: fork");
    }
    if (pid == 0)
        keeper_main(cg, caller_pidfd, pipefd[0]);
    close(pipefd[0]);
    cg->keeper_pid = pid;
    cg->keeper_release_fd = pipefd[1];
    /* The keeper only exits once released, so pid cannot be reused yet. */
    cg->keeper_pidfd = pidfd_open_(pid);
    return 0;
}

void rf_cgroup_keeper_release(rf_cgroup *cg)
{
    if (cg->keeper_release_fd >= 0)
        close(cg->keeper_release_fd);
    cg->keeper_release_fd = -1;
}

void rf_cgroup_keeper_stop(rf_cgroup *cg)
{
    if (cg->keeper_pid <= 0)
        return;
    rf_cgroup_keeper_release(cg);
    /* Reap through the pidfd: if the program's own SIGCHLD handler reaped
     * the keeper already, this fails with ECHILD instead of waiting for an
     * unrelated child that got the same pid. */
    if (cg->keeper_pidfd >= 0) {
        siginfo_t si;
        while (waitid((idtype_t)P_PIDFD, (id_t)cg->keeper_pidfd, &si, WEXITED) < 0 &&
               errno == EINTR)
            ;
        close(cg->keeper_pidfd);
    } else {
        while (waitpid(cg->keeper_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    cg->keeper_pidfd = -1;
    cg->keeper_pid = 0;
}
