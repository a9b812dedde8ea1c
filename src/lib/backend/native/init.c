/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pid 1 of the sandbox. It reaps every orphan (a pid namespace's init
 * inherits them), forwards the usual termination signals to the command,
 * stops the whole tree when the caller asks, and exits with the command's
 * status. When it exits, the kernel kills every process left in the
 * namespace: that is what ends double-forked and setsid'd children. */
#include "backend/native/report.h"
#include "backend/native/sandbox.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static bool reap(pid_t command, int *status)
{
    bool done = false;
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p <= 0)
            break;
        if (p == command) {
            *status = st;
            done = true;
        }
    }
    return done;
}

static void handle_signal(int sfd, pid_t command, int *status, bool *done)
{
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            if (reap(command, status))
                *done = true;
            continue;
        }
        for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
            if (sig == forwarded[i] && !*done)
                kill(command, sig);
    }
}

_Noreturn void rf_init_run(pid_t command, int sock)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaddset(&mask, forwarded[i]);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    int status = 0;
    bool done = sfd < 0; /* without a signalfd, fall back to a plain wait */
    if (done)
        while (waitpid(command, &status, 0) < 0 && errno == EINTR)
            ;
    while (!done) {
        struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = sock, .events = POLLIN } };
        if (poll(p, sock >= 0 ? 2 : 1, -1) < 0)
            continue;
        if (p[0].revents & POLLIN)
            handle_signal(sfd, command, &status, &done);
        if (sock >= 0 && (p[1].revents & (POLLIN | POLLHUP))) {
            struct rf_msg m;
            int r = rf_msg_recv(sock, &m);
            if (r == 1 && m.type == RF_MSG_TERMINATE)
                kill(-1, SIGTERM); /* every process in the namespace but us */
            else if (r <= 0)
                _exit(RF_EXIT_FAILURE); /* the caller is gone */
        }
    }
    rf_msg_send_status(sock, status);
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    _exit(RF_EXIT_SIGNAL_BASE + WTERMSIG(status));
}
