/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox's init. It reaps every orphan, forwards the usual
 * termination signals to every process of the sandbox (forward()), stops
 * the whole tree when the caller asks, and exits with the command's status.
 *
 * Native backend (ops == NULL): init is pid 1 of a pid namespace. When it
 * exits, the kernel kills every process left in the namespace: that is what
 * ends double-forked and setsid'd children.
 * Landlock and none backends (ops set): init is a child subreaper on the
 * host; it finds and kills the tree itself (backend/reaper.c) before it
 * exits, and also when the caller goes away. */
#include "channel/report.h"
#include "backend/native/sandbox.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const int rf_init_forwarded[RF_INIT_N_FORWARDED] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static int socket_chan = -1;    /* rf_init_serve_sockets */
static bool awaiting_command;    /* rf_init_await_command */
static bool release_stack;       /* rf_init_release_stack_when_idle */

/* What the caller ignored or handled stays outside: a handler is the
 * caller's code, and an ignored signal would be inherited by the command
 * through exec (a server ignoring SIGPIPE, a shell's background job
 * ignoring SIGQUIT). An ignored SIGCHLD would even reap the command before
 * init could see it end. Every signal starts at its default, as after a
 * login; SIGKILL and SIGSTOP cannot be changed, and glibc keeps its own two
 * (EINVAL, ignored). */
void rf_init_reset_signals(void)
{
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &dfl, NULL);
}

static mode_t caller_umask = 022; /* rf_init_own_umask */

/* The sandbox's own mount points, device nodes and copies get exactly the
 * modes they are made with: under a root caller's umask 077 every
 * directory on the way to the workspace was 0700 and root's, which the
 * command's uid could not enter. The command gets the caller's umask
 * back (rf_init_before_exec). */
void rf_init_own_umask(void)
{
    caller_umask = umask(0);
}

void rf_init_before_exec(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    umask(caller_umask);
}

void rf_init_serve_sockets(int chan)
{
    socket_chan = chan;
}

void rf_init_await_command(void)
{
    awaiting_command = true;
}

void rf_init_release_stack_when_idle(void)
{
    release_stack = true;
}

typedef struct init_state {
    pid_t command;
    int sock;
    const rf_init_ops *ops;
    int status;
    bool done;
} init_state;

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

/* Stop everything but init: the caller asked, or it is gone. */
static void signal_all(init_state *s, int sig)
{
    if (!s->ops)
        kill(-1, sig); /* every process in the namespace but us */
    else if (sig == SIGKILL)
        s->ops->kill_all(s->command, &s->status, &s->done);
    else
        s->ops->signal_all(s->done ? 0 : s->command, sig);
}

/* The signals a terminal sends a whole foreground job (Ctrl-C, Ctrl-\\, a
 * hang-up) and the usual "stop" go to every process of the sandbox, as a
 * terminal's would: sent to the command alone, a shell waiting for its
 * child (sh -c 'sleep 20; echo x') holds SIGINT until the child ends, and
 * the child runs on. The others (SIGUSR1, SIGUSR2) are the command's own
 * protocol: to it alone. A runner (bwrap) is the command: it passes them
 * to the processes below its own (bwrap/child.c). */
static void forward(init_state *s, int sig)
{
    bool job = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
    if (!job || (s->ops && s->ops->terminate_command)) {
        kill(s->command, sig);
    } else if (s->ops) {
        s->ops->signal_all(s->command, sig); /* SIGCONT after it, as below */
    } else {
        kill(-1, sig); /* every process in the namespace but us */
        /* A stopped process (Ctrl-Z in a shell inside) would hold the
         * signal pending: the kernel sends SIGCONT after a hang-up too. */
        if (sig == SIGTERM || sig == SIGHUP)
            kill(-1, SIGCONT);
    }
}

static _Noreturn void caller_gone(init_state *s)
{
    if (s->ops)
        signal_all(s, SIGKILL);
    _exit(RF_EXIT_FAILURE);
}

static void handle_signal(init_state *s, int sfd)
{
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            if (reap(s->command, &s->status))
                s->done = true;
            continue;
        }
        /* The parent-death signal, or anyone's: only a new parent counts. */
        if (s->ops && sig == s->ops->parent_death_signal) {
            if (getppid() != s->ops->caller)
                caller_gone(s);
            continue;
        }
        for (size_t i = 0; i < RF_INIT_N_FORWARDED; i++)
            if (sig == rf_init_forwarded[i] && !s->done && s->command > 0)
                forward(s, sig);
    }
}

/* A warm pool's sandbox: the first message is the command. A channel
 * closed before it means the caller is gone; anything else ends the
 * sandbox as a failed setup would. */
static void start_awaited(init_state *s)
{
    rf_setup_fail f = { 0 };
    awaiting_command = false;
    s->command = rf_deferred_start(s->sock, &f);
    if (s->command > 0)
        return;
    if (f.errnum == ECANCELED)
        caller_gone(s);
    rf_msg_send(s->sock, RF_MSG_SETUP_ERROR, f.errnum, f.step, f.detail);
    _exit(RF_EXIT_FAILURE);
}

static void handle_message(init_state *s)
{
    struct rf_msg m;
    int r = rf_msg_recv(s->sock, &m);
    if (r <= 0)
        caller_gone(s);
    if (m.type == RF_MSG_TERMINATE && s->ops && s->ops->terminate_command && !s->done)
        kill(s->command, SIGTERM);
    else if (m.type == RF_MSG_TERMINATE)
        signal_all(s, SIGTERM);
    else if (m.type == RF_MSG_KILL)
        signal_all(s, SIGKILL);
}

_Noreturn void rf_init_run(pid_t command, int sock, const rf_init_ops *ops)
{
    init_state s = { .command = command, .sock = sock, .ops = ops };
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (size_t i = 0; i < RF_INIT_N_FORWARDED; i++)
        sigaddset(&mask, rf_init_forwarded[i]);
    if (ops)
        sigaddset(&mask, ops->parent_death_signal);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0 && awaiting_command)
        start_awaited(&s); /* no signalfd: block for the command, then wait for it */
    s.done = sfd < 0; /* without a signalfd, fall back to a plain wait */
    if (s.done)
        while (waitpid(s.command, &s.status, 0) < 0 && errno == EINTR)
            ;
    while (!s.done) {
        /* A negative fd is ignored by poll. */
        struct pollfd p[3] = { { .fd = sfd, .events = POLLIN }, { .fd = sock, .events = POLLIN },
                               { .fd = socket_chan, .events = POLLIN } };
        /* The stack goes back only once the sandbox has been idle a
         * while: most commands have ended by then, and reading
         * /proc/self/maps and the madvise were a tenth of a millisecond of
         * every start (rf_init_release_stack_when_idle). */
        int n = poll(p, 3, release_stack ? RF_INIT_IDLE_MS : -1);
        if (n == 0 && release_stack) {
            release_stack = false;
            rf_shed_stack();
        }
        if (n <= 0)
            continue;
        if (p[0].revents & POLLIN)
            handle_signal(&s, sfd);
        if ((p[1].revents & (POLLIN | POLLHUP)) && awaiting_command)
            start_awaited(&s);
        else if (p[1].revents & (POLLIN | POLLHUP))
            handle_message(&s);
        /* Closed: the caller needs no more sockets (or is gone, which the
         * report channel says too). Stop watching, or poll would spin. */
        if (p[2].revents && ((p[2].revents & POLLIN) ? rf_net_serve_socket_request(socket_chan) < 0 : true))
            socket_chan = -1;
    }
    /* What the command left running dies with it, before the status is
     * reported: whoever reads the status knows no process of the tree is
     * left. What remains after that is the kernel's teardown of the
     * namespaces as init exits, which no process can see any more. */
    if (ops) {
        signal_all(&s, SIGKILL);
    } else {
        kill(-1, SIGKILL);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
            ;
    }
    struct rusage ru;
    rf_msg_send_status(sock, s.status, getrusage(RUSAGE_CHILDREN, &ru) == 0 ? &ru : NULL);
    if (WIFEXITED(s.status))
        _exit(WEXITSTATUS(s.status));
    _exit(RF_EXIT_SIGNAL_BASE + WTERMSIG(s.status));
}
