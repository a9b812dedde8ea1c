/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The relay outside: the only holder of the caller's terminal. It copies
 * the caller's input to the pty's master and the master's output to the
 * caller, one fixed buffer each way, poll-driven from rf_proc_wait: a
 * flood of output waits in the pty (the command blocks in write) while the
 * caller's side is slow, so nothing is lost and nothing grows. The
 * caller's terminal is in raw mode while it runs (every key, Ctrl-C and
 * Ctrl-Z included, reaches the pty, whose own line discipline makes the
 * signals inside) and restored on every way out. */
#include "tty/tty.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define RELAY_BUF 65536

struct rf_tty {
    unsigned streams;
    int in, out;          /* the caller's fd 0 / 1 or 2 (or our own description
                             of it, see own_output()), or -1 */
    bool out_owned;       /* out is ours: non-blocking, closed by us */
    int master;           /* -1 until attached, and once hung up */
    bool in_tty, raw;     /* in is a terminal; it is in raw mode now */
    struct termios saved; /* in's settings before raw mode */
    struct winsize size;
    bool in_eof, master_eof;
    size_t out_chunk;     /* most written to `out` per round: see out_chunk() */
    const rf_tty_sink *sink; /* output to sink->out instead of `out` */
    char last_in;         /* last byte passed in: an EOF needs a second VEOF after a partial line */
    int winch[2];         /* self-pipe of the SIGWINCH handler */
    bool winch_owned;
    struct sigaction old_winch;
    size_t to_len, to_off, from_len, from_off;
    char to_pty[RELAY_BUF], from_pty[RELAY_BUF];
};

/* The write end of the relay's SIGWINCH pipe, for the handler; one relay
 * at a time follows the window (they would all read the same fd 0). */
static atomic_int winch_fd = -1;
/* A question of the proxy on the caller's terminal (net/ask_tty.c): the
 * keys typed are its answer, so the relay leaves the terminal's input
 * alone while it is held; releasing wakes the relay through the SIGWINCH
 * pipe (a window check costs nothing). */
static atomic_int input_held;
/* Held by the relay from its check of input_held to the end of its read,
 * and by a question taking the input: a question never starts in the
 * middle of the relay's read. */
static pthread_mutex_t input_lock = PTHREAD_MUTEX_INITIALIZER;

void rf_tty_hold_input(bool hold)
{
    pthread_mutex_lock(&input_lock);
    atomic_fetch_add(&input_held, hold ? 1 : -1);
    pthread_mutex_unlock(&input_lock);
    int fd = atomic_load(&winch_fd);
    if (!hold && fd >= 0)
        (void)!write(fd, "", 1);
}

bool rf_tty_on_callers_terminal(const rf_tty *t)
{
    return t && t->in_tty && !t->sink;
}
static struct sigaction chained_winch;

static void on_winch(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    int fd = atomic_load(&winch_fd);
    if (fd >= 0)
        (void)!write(fd, "w", 1);
    if ((chained_winch.sa_flags & SA_SIGINFO) && chained_winch.sa_sigaction)
        chained_winch.sa_sigaction(sig, si, uc);
    else if (!(chained_winch.sa_flags & SA_SIGINFO) && chained_winch.sa_handler != SIG_DFL &&
             chained_winch.sa_handler != SIG_IGN)
        chained_winch.sa_handler(sig);
    errno = saved;
}

/* Output goes through a description of our own of the caller's stdout
 * (a terminal or a pipe opened again through /proc/self/fd): non-blocking
 * there without touching the caller's, which its shell shares. Where that
 * cannot be (a socket), the caller's own, blocking: a write to a pipe or a
 * terminal returns only when all of it is taken, so at most PIPE_BUF per
 * round after POLLOUT, and a slow reader never holds the wait loop for
 * long. A file takes all at once. */
static void own_output(rf_tty *t)
{
    struct stat st;
    t->out_chunk = PIPE_BUF;
    if (t->out < 0 || fstat(t->out, &st) < 0)
        return;
    if (S_ISREG(st.st_mode)) {
        t->out_chunk = RELAY_BUF;
        return;
    }
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
        return;
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", t->out);
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    t->out = fd;
    t->out_owned = true;
    t->out_chunk = RELAY_BUF;
}

rf_tty *rf_tty_new(unsigned streams, rf_error **err)
{
    rf_tty *t = calloc(1, sizeof *t);
    if (!t) {
        rf_error_set(err, ENOMEM, "terminal relay");
        return NULL;
    }
    t->streams = streams;
    t->in = (streams & 1u) ? 0 : -1;
    t->out = (streams & 2u) ? 1 : (streams & 4u) ? 2 : -1;
    t->master = -1;
    t->winch[0] = t->winch[1] = -1;
    t->in_tty = t->in >= 0 && isatty(t->in) && tcgetattr(t->in, &t->saved) == 0;
    int sized = t->in_tty ? t->in : t->out;
    if (sized < 0 || ioctl(sized, TIOCGWINSZ, &t->size) < 0)
        memset(&t->size, 0, sizeof t->size);
    own_output(t);
    return t;
}

rf_tty *rf_tty_new_sink(unsigned streams, const rf_tty_sink *sink, rf_error **err)
{
    rf_tty *t = calloc(1, sizeof *t);
    if (!t) {
        rf_error_set(err, ENOMEM, "terminal relay");
        return NULL;
    }
    t->streams = streams;
    t->sink = sink;
    t->in = (streams & 1u) ? sink->in : -1;
    t->out = -1;
    t->master = -1;
    t->winch[0] = t->winch[1] = -1;
    t->size = sink->size;
    return t;
}

void rf_tty_size(const rf_tty *t, struct winsize *ws)
{
    *ws = t->size;
}

bool rf_tty_attached(const rf_tty *t)
{
    return t && t->master >= 0;
}

static void follow_window(rf_tty *t)
{
    int expected = -1;
    if (!t->in_tty || pipe2(t->winch, O_CLOEXEC | O_NONBLOCK) < 0)
        return;
    if (!atomic_compare_exchange_strong(&winch_fd, &expected, t->winch[1])) {
        close(t->winch[0]);
        close(t->winch[1]);
        t->winch[0] = t->winch[1] = -1;
        return;
    }
    /* The previous action is known before ours can run: it is chained. */
    sigaction(SIGWINCH, NULL, &t->old_winch);
    chained_winch = t->old_winch;
    struct sigaction sa = { .sa_sigaction = on_winch, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGWINCH, &sa, NULL);
    t->winch_owned = true;
}

int rf_tty_attach(rf_tty *t, int master)
{
    if (t->master >= 0) {
        close(master); /* one pty per sandbox: a second is not ours */
        errno = EEXIST;
        return -1;
    }
    int fl = fcntl(master, F_GETFL);
    if (fl < 0 || fcntl(master, F_SETFL, fl | O_NONBLOCK) < 0) {
        close(master);
        return -1;
    }
    t->master = master;
    if (t->in_tty) {
        struct termios raw = t->saved;
        cfmakeraw(&raw);
        /* Still one byte at a time, and read() waits for it. */
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        t->raw = tcsetattr(t->in, TCSADRAIN, &raw) == 0;
    }
    follow_window(t);
    return 0;
}

void rf_tty_pollfds(const rf_tty *t, struct pollfd *pfd)
{
    for (int i = 0; i < RF_TTY_NFDS; i++)
        pfd[i] = (struct pollfd){ .fd = -1 };
    if (!rf_tty_attached(t))
        return;
    if (t->in >= 0 && !t->in_eof && t->to_len == 0 && atomic_load(&input_held) == 0)
        pfd[0] = (struct pollfd){ .fd = t->in, .events = POLLIN };
    short ev = (short)((t->from_len < RELAY_BUF && !t->master_eof ? POLLIN : 0) | (t->to_len > 0 ? POLLOUT : 0));
    if (ev)
        pfd[1] = (struct pollfd){ .fd = t->master, .events = ev };
    if (t->from_len > 0 && t->out >= 0)
        pfd[2] = (struct pollfd){ .fd = t->out, .events = POLLOUT };
    pfd[3] = (struct pollfd){ .fd = t->winch[0], .events = POLLIN };
}

/* The caller's input ended. A hung-up terminal: hang the pty up too (the
 * command's session gets SIGHUP). A pipe or file: the pty's end-of-file
 * character, twice after a partial line (the first only ends the line). */
static void input_ended(rf_tty *t)
{
    t->in_eof = true;
    if (t->in_tty) {
        close(t->master);
        t->master = -1;
        t->master_eof = true;
        t->to_len = t->from_len = 0;
        return;
    }
    struct termios tio;
    if (tcgetattr(t->master, &tio) < 0 || !(tio.c_lflag & ICANON))
        return;
    t->to_pty[0] = t->to_pty[1] = (char)tio.c_cc[VEOF];
    t->to_len = t->last_in && t->last_in != '\n' ? 2 : 1;
    t->to_off = 0;
}

static void read_input(rf_tty *t)
{
    ssize_t n = read(t->in, t->to_pty, sizeof t->to_pty);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        input_ended(t);
        return;
    }
    t->to_len = (size_t)n;
    t->to_off = 0;
    t->last_in = t->to_pty[n - 1];
}

/* The caller's input, unless a question holds it. The relay's poll may be
 * stale by now: a question that held the input meanwhile may have read the
 * key and let go, and a read of a blocking terminal with nothing in it
 * never returns (the run could not end: ask-tty.sh, 1 run in 10 under
 * load). So the input is polled again, and read, under the lock. */
static void read_input_unless_held(rf_tty *t)
{
    pthread_mutex_lock(&input_lock);
    struct pollfd pf = { .fd = t->in, .events = POLLIN };
    if (atomic_load(&input_held) == 0 && poll(&pf, 1, 0) > 0)
        read_input(t);
    pthread_mutex_unlock(&input_lock);
}

/* Append what the master has to the output buffer; true if anything came. */
static bool read_master(rf_tty *t)
{
    if (t->master_eof || t->master < 0 || t->from_len == RELAY_BUF)
        return false;
    ssize_t n = read(t->master, t->from_pty + t->from_len, RELAY_BUF - t->from_len);
    if (n > 0) {
        t->from_len += (size_t)n;
        if (t->out < 0 && !t->sink)
            t->from_len = t->from_off = 0; /* no stream of the caller's is the pty: dropped */
        return true;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
        t->master_eof = true; /* EIO: every slave descriptor is closed */
    return false;
}

static void close_output(rf_tty *t)
{
    if (t->out_owned && t->out >= 0)
        close(t->out);
    t->out_owned = false;
    t->out = -1;
}

/* Write what the output buffer holds; true if anything went. */
static bool write_output(rf_tty *t)
{
    size_t len = t->from_len - t->from_off;
    if (len > 0 && t->sink) { /* takes all of it, never blocks */
        t->sink->out(t->sink->ud, t->from_pty + t->from_off, len);
        t->from_len = t->from_off = 0;
        return true;
    }
    if (len == 0 || t->out < 0)
        return false;
    ssize_t n = write(t->out, t->from_pty + t->from_off, len < t->out_chunk ? len : t->out_chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return false;
    if (n < 0) {
        close_output(t); /* EPIPE, a full disk: the rest is dropped, the command runs on */
        t->from_len = t->from_off = 0;
        return false;
    }
    t->from_off += (size_t)n;
    if (t->from_off == t->from_len)
        t->from_len = t->from_off = 0;
    return true;
}

/* Output in a few rounds of read and write without a poll between them (a
 * pty hands out a few KiB per read); bounded, so the wait loop still sees
 * its deadlines and messages. A blocking output waits for POLLOUT. */
static void pump_output(rf_tty *t, bool out_ready)
{
    for (int round = 0; round < 32; round++) {
        bool moved = read_master(t);
        if (out_ready || t->out_owned || t->sink)
            moved |= write_output(t);
        out_ready = false;
        if (!moved)
            return;
    }
}

static void master_ready(rf_tty *t, short revents)
{
    if (t->to_len > 0 && (revents & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t n = write(t->master, t->to_pty + t->to_off, t->to_len - t->to_off);
        if (n > 0)
            t->to_off += (size_t)n;
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
            t->to_off = t->to_len; /* the slave side is gone: the input has no reader */
        if (t->to_off == t->to_len)
            t->to_len = t->to_off = 0;
    }
    if (revents & (POLLIN | POLLERR | POLLHUP))
        pump_output(t, false);
}

/* The window changed: the caller's size to the pty, whose kernel sends
 * SIGWINCH to the foreground process group inside. */
static void window_changed(rf_tty *t)
{
    char drain[64];
    while (read(t->winch[0], drain, sizeof drain) > 0)
        ;
    struct winsize ws;
    if (ioctl(t->in, TIOCGWINSZ, &ws) == 0 && t->master >= 0)
        (void)ioctl(t->master, TIOCSWINSZ, &ws);
}

void rf_tty_serve(rf_tty *t, const struct pollfd *pfd)
{
    if (!rf_tty_attached(t))
        return;
    if (pfd[3].fd >= 0 && pfd[3].revents)
        window_changed(t);
    if (pfd[0].fd >= 0 && pfd[0].revents)
        read_input_unless_held(t);
    if (pfd[1].fd >= 0 && pfd[1].revents && t->master >= 0)
        master_ready(t, pfd[1].revents);
    if (pfd[2].fd >= 0 && pfd[2].revents && t->out >= 0)
        pump_output(t, true);
}

static void restore(rf_tty *t)
{
    if (t->winch_owned) {
        sigaction(SIGWINCH, &t->old_winch, NULL);
        atomic_store(&winch_fd, -1);
        t->winch_owned = false;
    }
    for (int i = 0; i < 2; i++)
        if (t->winch[i] >= 0) {
            close(t->winch[i]);
            t->winch[i] = -1;
        }
    if (t->raw)
        (void)tcsetattr(t->in, TCSADRAIN, &t->saved);
    t->raw = false;
}

void rf_tty_finish(rf_tty *t)
{
    if (!rf_tty_attached(t)) {
        if (t)
            restore(t);
        return;
    }
    /* Every slave descriptor is closed (init reports the status once the
     * whole tree is gone): the master reads what is left, then EIO. */
    t->in_eof = true; /* t->in stays: the settings go back to it */
    t->to_len = 0;
    while (!t->master_eof || t->from_len > 0) {
        struct pollfd pfd[RF_TTY_NFDS];
        rf_tty_pollfds(t, pfd);
        pfd[3].fd = -1;
        /* Output not yet taken waits for its reader as long as a write
         * would (a pager read slowly); the master itself answers at once
         * (data or EIO), a second of nothing is only a safety net. */
        int n = poll(pfd, RF_TTY_NFDS, t->from_len > 0 ? -1 : 1000);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
        rf_tty_serve(t, pfd);
    }
    close(t->master);
    t->master = -1;
    restore(t);
    close_output(t);
}

void rf_tty_free(rf_tty *t)
{
    if (!t)
        return;
    restore(t);
    close_output(t);
    if (t->master >= 0)
        close(t->master);
    free(t);
}
