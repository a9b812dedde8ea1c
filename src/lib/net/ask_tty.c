/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --ask tty: the question on the caller's terminal, which ringfence opens
 * itself (/dev/tty) outside the sandbox. Only with the command on a pty of
 * its own (checked by backend/common.c): then the command's /dev/tty and
 * TIOCSTI reach its pty, never this terminal, and while a question is up
 * the relay leaves the terminal's input to it (rf_tty_hold_input). The
 * relay has the terminal in raw mode, so one key is the answer. */
#include "net/ask.h"
#include "tty/tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static int ms_until(const struct timespec *deadline)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ms = (deadline->tv_sec - t.tv_sec) * 1000 + (deadline->tv_nsec - t.tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms > 3600000 ? 3600000 : (int)ms;
}

static void say(int fd, const char *text)
{
    (void)!write(fd, text, strlen(text));
}

/* A key as an answer: 1 with *out, 0 not an answer (wait for another). */
static int key_answer(char c, rf_ask_answer *out)
{
    static const struct { char key; bool allow; rf_ask_scope scope; } keys[] = {
        { 'y', true, RF_ASK_ONCE }, { 'r', true, RF_ASK_RUN }, { 'a', true, RF_ASK_ALWAYS },
        { 'n', false, RF_ASK_ONCE }, { 'N', false, RF_ASK_RUN }, { 3 /* Ctrl-C */, false, RF_ASK_ONCE },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (c == keys[i].key) {
            *out = (rf_ask_answer){ .allow = keys[i].allow, .scope = keys[i].scope };
            return 1;
        }
    return 0;
}

static int read_key(int fd, int stop_fd, const struct timespec *deadline, rf_ask_answer *out, const char **why)
{
    for (;;) {
        struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN } };
        int n = poll(pf, 2, ms_until(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            *why = "no answer in time";
            return -2;
        }
        if (n < 0 || pf[1].revents || (pf[0].revents & (POLLHUP | POLLERR))) {
            *why = "the terminal went away";
            return -1;
        }
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (r <= 0) {
            *why = "the terminal went away";
            return -1;
        }
        if (key_answer(c, out))
            return 0;
    }
}

int rf_ask_tty_ask(const rf_ask_question *q, int stop_fd, const struct timespec *deadline, rf_ask_answer *out,
                   const char **why)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = "no terminal to ask on";
        return -1;
    }
    rf_tty_hold_input(true);
    /* Keys typed before the question are not its answer. */
    (void)tcflush(fd, TCIFLUSH);
    char text[2048], what[640], command[416], who[96];
    rf_ask_printable(what, sizeof what, q->host); /* a name or a path the command chose */
    rf_ask_printable(command, sizeof command, q->command ? q->command : "?");
    if (q->who) /* its name is printable already (ask_who.c) */
        snprintf(who, sizeof who, "%s (pid %ld in the sandbox)", q->who->name, q->who->pid);
    else
        snprintf(who, sizeof who, "not known");
    if (!strcmp(q->protocol, "file"))
        snprintf(text, sizeof text,
                 "\r\n\033[1mringfence: the sandbox asks to read %s\033[0m, which it cannot see\r\n"
                 "  command: %s\r\n"
                 "  process: %s\r\n"
                 "  allow? y = this open, r = for this run, n = no, N = no for this run [%d s, then no] ",
                 what, command, who, ms_until(deadline) / 1000);
    else
        snprintf(text, sizeof text,
                 "\r\n\033[1mringfence: the sandbox asks to connect to %s:%u\033[0m (%s)\r\n"
                 "  command: %s\r\n"
                 "  process: %s\r\n"
                 "  allow? y = this connection, r = for this run, a = always (your answers.yaml), "
                 "n = no, N = no for this run [%d s, then no] ",
                 what, (unsigned)q->port, q->protocol, command, who, ms_until(deadline) / 1000);
    say(fd, text);
    int rc = read_key(fd, stop_fd, deadline, out, why);
    say(fd, rc < 0 ? (rc == -2 ? "no answer: refused\r\n" : "refused\r\n")
                   : out->allow ? (out->scope == RF_ASK_ONCE ? "allowed\r\n" : out->scope == RF_ASK_RUN ? "allowed for this run\r\n" : "allowed always\r\n")
                                : "refused\r\n");
    rf_tty_hold_input(false);
    close(fd);
    return rc;
}
