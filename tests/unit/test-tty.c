/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The terminal's pieces (src/lib/tty/, docs/terminal.md) without a
 * sandbox: the report channel hands a descriptor over and closes one
 * nobody asked for; a pty pair made by rf_pty_open; the relay between the
 * pty's master and a caller whose stdin and stdout are pipes (the --pty
 * mode with no terminal): bytes both ways intact, end-of-file on the
 * caller's input becomes the pty's EOF, the output drained at the end.
 * The relay uses the process's own fd 0 and 1, so it runs in a child.
 * The sink relay (the MCP exec tool's) reads a pipe of its own and hands
 * the output to a function: it runs here. */
#include "tap.h"
#include "channel/report.h"
#include "tty/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void test_channel(void)
{
    int sv[2];
    ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "a report channel");
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    struct rf_msg m;
    memset(&m, 0, sizeof m);
    m.type = RF_MSG_PTY;
    ok(rf_msg_send_with_fds(sv[0], &m, sizeof m, &null, 1) == 0, "a message with a descriptor is sent");
    struct rf_msg got;
    int fd = -1;
    is_int(rf_msg_recv_with_fd(sv[1], &got, &fd), 1, "and received");
    ok(got.type == RF_MSG_PTY && fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "with its descriptor, close-on-exec");
    if (fd >= 0)
        close(fd);
    int before = tap_count_fds();
    rf_msg_send_with_fds(sv[0], &m, sizeof m, &null, 1);
    is_int(rf_msg_recv(sv[1], &got), 1, "rf_msg_recv takes a message that carries a descriptor");
    is_int(tap_count_fds(), before, "and closes the descriptor nobody asked for (nothing leaks)");
    close(null);
    close(sv[0]);
    close(sv[1]);
}

/* The child: fd 0 and 1 are pipes; relay until the master is done. */
static int relay_child(int master)
{
    rf_tty *t = rf_tty_new(1u | 2u, NULL);
    if (!t || rf_tty_attach(t, master) < 0)
        return 2;
    for (int rounds = 0; rounds < 100000; rounds++) {
        struct pollfd pfd[RF_TTY_NFDS];
        rf_tty_pollfds(t, pfd);
        if (poll(pfd, RF_TTY_NFDS, 5000) <= 0)
            return 3;
        rf_tty_serve(t, pfd);
        if (!rf_tty_attached(t))
            break;
        struct pollfd m = { .fd = master, .events = 0 };
        if (poll(&m, 1, 0) == 1 && (m.revents & POLLHUP))
            break; /* the slave is closed: what is left is drained below */
    }
    rf_tty_finish(t);
    rf_tty_free(t);
    return 0;
}

static void test_relay(void)
{
    int master = -1, slave = -1;
    struct winsize ws = { .ws_row = 33, .ws_col = 111 };
    if (!ok(rf_pty_open(&ws, &master, &slave) == 0, "rf_pty_open makes a pair")) {
        printf("#   %s\n", strerror(errno));
        return;
    }
    struct winsize got;
    ok(ioctl(slave, TIOCGWINSZ, &got) == 0 && got.ws_row == 33 && got.ws_col == 111,
       "with the window size asked for");
    struct termios raw;
    tcgetattr(slave, &raw);
    raw.c_oflag &= ~(tcflag_t)OPOST; /* bytes out as they are; input stays canonical for VEOF */
    raw.c_lflag &= ~(tcflag_t)ECHO;
    tcsetattr(slave, TCSANOW, &raw);
    int in[2], out[2];
    if (pipe(in) < 0 || pipe(out) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        close(slave);
        _exit(relay_child(master));
    }
    close(master);
    close(in[0]);
    close(out[1]);
    /* Caller → pty: a line, then the end of the caller's input. */
    ok(write(in[1], "typed line\n", 11) == 11, "the caller types a line");
    close(in[1]);
    char buf[256] = "";
    ssize_t n = read(slave, buf, sizeof buf - 1);
    ok(n == 11 && !memcmp(buf, "typed line\n", 11), "the command reads it from the pty");
    is_int(read(slave, buf, sizeof buf), 0, "the caller's input ending is the pty's EOF");
    /* pty → caller: 1 MiB, more than the relay's buffer, then the end. */
    static char big[1 << 20];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 7 + 3);
    size_t sent = 0, recvd = 0;
    bool same = true;
    /* Never block in write: a blocked writer stops reading the relay's
     * output, and relay and test would wait on each other. */
    fcntl(slave, F_SETFL, fcntl(slave, F_GETFL) | O_NONBLOCK);
    while (recvd < sizeof big) {
        struct pollfd p[2] = { { .fd = sent < sizeof big ? slave : -1, .events = POLLOUT },
                               { .fd = out[0], .events = POLLIN } };
        if (poll(p, 2, 5000) <= 0)
            break;
        if (p[0].revents & POLLOUT) {
            n = write(slave, big + sent, sizeof big - sent < 4096 ? sizeof big - sent : 4096);
            sent += n > 0 ? (size_t)n : 0;
        }
        if (p[1].revents & (POLLIN | POLLHUP)) { /* HUP: the relay is gone */
            n = read(out[0], buf, sizeof buf);
            if (n <= 0)
                break;
            same &= !memcmp(buf, big + recvd, (size_t)n);
            recvd += (size_t)n;
        }
    }
    close(slave);
    is_int(recvd, sizeof big, "1 MiB written on the pty reaches the caller's stdout");
    ok(same, "intact, in order");
    int st = -1;
    waitpid(pid, &st, 0);
    if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the relay ends once the pty's side is closed"))
        printf("#   wait status %#x\n", st);
    close(out[0]);
}

struct sunk {
    size_t n;
    bool same;
};

static void sink_out(void *ud, const char *buf, size_t n)
{
    struct sunk *k = ud;
    for (size_t i = 0; i < n; i++)
        k->same &= buf[i] == (char)((k->n + i) * 5 + 1);
    k->n += n;
}

/* One round of the relay and of a non-blocking writer on the slave. */
static bool sink_round(rf_tty *t, int slave, const char *big, size_t size, size_t *sent, int ms)
{
    struct pollfd pfd[RF_TTY_NFDS + 1];
    rf_tty_pollfds(t, pfd);
    pfd[RF_TTY_NFDS] = (struct pollfd){ .fd = *sent < size ? slave : -1, .events = POLLOUT };
    if (poll(pfd, RF_TTY_NFDS + 1, ms) <= 0)
        return false;
    rf_tty_serve(t, pfd);
    if (pfd[RF_TTY_NFDS].revents & POLLOUT) {
        ssize_t n = write(slave, big + *sent, size - *sent < 4096 ? size - *sent : 4096);
        *sent += n > 0 ? (size_t)n : 0;
    }
    return true;
}

static void test_sink(void)
{
    int master = -1, slave = -1, in[2];
    if (rf_pty_open(NULL, &master, &slave) < 0 || pipe2(in, O_CLOEXEC) < 0)
        return;
    struct termios tio;
    tcgetattr(slave, &tio);
    tio.c_oflag &= ~(tcflag_t)OPOST;
    tio.c_lflag &= ~(tcflag_t)ECHO;
    tcsetattr(slave, TCSANOW, &tio);
    ok(write(in[1], "abc", 3) == 3, "the stdin text, without a newline");
    close(in[1]);
    struct sunk k = { 0, true };
    rf_tty_sink sink = { .in = in[0], .out = sink_out, .ud = &k, .size = { .ws_row = 24, .ws_col = 80 } };
    rf_tty *t = rf_tty_new_sink(1u | 2u | 4u, &sink, NULL);
    struct winsize ws;
    rf_tty_size(t, &ws);
    ok(ws.ws_row == 24 && ws.ws_col == 80, "the sink's window size for the pty");
    ok(rf_tty_attach(t, master) == 0, "attached");
    static char big[256 << 10];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 5 + 1);
    size_t sent = 0;
    /* The relay types the text, then two VEOFs (after a partial line);
     * until it has nothing left to do, then the command's side reads. */
    for (int i = 0; i < 20 && sink_round(t, slave, big, 0, &sent, 100); i++)
        ;
    char buf[64] = "";
    ssize_t got = read(slave, buf, sizeof buf);
    ok(got == 3 && !memcmp(buf, "abc", 3), "the pty reads the text (the first VEOF ends the partial line)");
    is_int(read(slave, buf, sizeof buf), 0, "then end of file (the second)");
    fcntl(slave, F_SETFL, fcntl(slave, F_GETFL) | O_NONBLOCK);
    while (sent < sizeof big && sink_round(t, slave, big, sizeof big, &sent, 5000))
        ;
    close(slave);
    rf_tty_finish(t);
    is_int(k.n, sizeof big, "256 KiB written on the pty reach the sink, the rest at rf_tty_finish");
    ok(k.same, "intact, in order");
    rf_tty_free(t);
    close(in[0]);
}

int main(void)
{
    test_channel();
    test_relay();
    test_sink();
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
