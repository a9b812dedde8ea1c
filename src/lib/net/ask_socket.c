/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ask socket's transport: ringfence connects to the unix socket the
 * user (a harness, a GUI) listens on, checks that the listener is the
 * caller's own uid, writes one JSON line per question and reads JSON lines
 * until the answer with the question's id. One connection, kept: a
 * listener that closes after each answer gets a new one for the next
 * question. Anything unexpected is a refusal. */
#include "net/ask.h"
#include "util/unix.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int ms_until(const struct timespec *deadline)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ms = (deadline->tv_sec - t.tv_sec) * 1000 + (deadline->tv_nsec - t.tv_nsec) / 1000000;
    return ms < 0 ? 0 : ms > 3600000 ? 3600000 : (int)ms;
}

void rf_ask_socket_close(rf_ask_socket *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->len = 0;
}

/* Connect, and only to the caller's own uid: another user's listener at
 * that path must not decide for this sandbox. */
static int open_socket(rf_ask_socket *s, int stop_fd, const struct timespec *deadline, const char **why)
{
    struct sockaddr_un sa;
    if (rf_unix_addr(s->path, &sa) < 0) { /* resolve_ask.c refuses such a path first */
        *why = "the ask socket's path is too long";
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *why = "no socket";
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        struct pollfd pf[2] = { { .fd = fd, .events = POLLOUT }, { .fd = stop_fd, .events = POLLIN } };
        int e = 0;
        socklen_t el = sizeof e;
        if (errno != EAGAIN || poll(pf, 2, ms_until(deadline)) <= 0 || pf[1].revents ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
            close(fd);
            *why = "nobody listens on the ask socket";
            return -1;
        }
    }
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != getuid()) {
        close(fd);
        *why = "the ask socket's listener is not your user";
        return -1;
    }
    s->fd = fd;
    s->len = 0;
    return 0;
}

/* A connection kept from an earlier question: drop it if the listener
 * closed it, and forget late answers to questions that timed out. */
static void drain_stale(rf_ask_socket *s)
{
    char junk[512];
    for (;;) {
        ssize_t n = recv(s->fd, junk, sizeof junk, MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            rf_ask_socket_close(s);
        if (n < 0 && errno == EINTR)
            continue;
        break;
    }
    s->len = 0;
}

/* {"pid", "name"} of the process that asked, or null. */
static json_t *process_json(const rf_ask_who *who)
{
    return who ? json_pack("{s:I, s:s}", "pid", (json_int_t)who->pid, "name", who->name) : json_null();
}

static char *question_line(const rf_ask_question *q)
{
    bool file = !strcmp(q->protocol, "file");
    json_t *o = file ? json_pack("{s:i, s:s, s:I, s:s, s:s, s:s, s:i, s:s, s:o, s:s}", "version", 1, "type", "file",
                                 "id", (json_int_t)q->id, "path", q->host, "access", "read", "host", "", "port", 0,
                                 "protocol", "file", "process", process_json(q->who), "command",
                                 q->command ? q->command : "")
                  : json_pack("{s:i, s:s, s:I, s:s, s:i, s:s, s:o, s:s}", "version", 1, "type", "network", "id",
                          (json_int_t)q->id, "host", q->host, "port", (int)q->port, "protocol", q->protocol,
                          "process", process_json(q->who), "command", q->command ? q->command : "");
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    char *line = NULL;
    if (s && asprintf(&line, "%s\n", s) < 0)
        line = NULL;
    free(s);
    return line;
}

static int send_line(int fd, const char *line)
{
    size_t len = strlen(line);
    while (len) {
        ssize_t n = send(fd, line, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            if (poll(&pf, 1, 1000) > 0)
                continue;
        }
        if (n <= 0)
            return -1;
        line += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 1: an answer to `id` in *out; 0: a line about something else (skipped);
 * -1: an answer to `id` that is not valid (a refusal). */
static int parse_answer(const char *line, uint64_t id, rf_ask_answer *out)
{
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
    json_t *jid = json_object_get(o, "id");
    if (!json_is_integer(jid) || (uint64_t)json_integer_value(jid) != id) {
        json_decref(o);
        return 0;
    }
    const char *d = json_string_value(json_object_get(o, "decision"));
    const char *sc = json_string_value(json_object_get(o, "scope"));
    int rc = -1;
    if (d && (!strcmp(d, "allow") || !strcmp(d, "deny"))) {
        out->allow = !strcmp(d, "allow");
        out->scope = RF_ASK_ONCE;
        rc = 1;
        if (sc && !strcmp(sc, "run"))
            out->scope = RF_ASK_RUN;
        else if (sc && !strcmp(sc, "always"))
            out->scope = RF_ASK_ALWAYS;
        else if (sc && strcmp(sc, "once"))
            rc = -1; /* an unknown scope: not a decision we understood */
    }
    json_decref(o);
    return rc;
}

/* Read lines until the answer. 1: answered; 0: the listener closed
 * without answering; -1: *why. */
static int read_answer(rf_ask_socket *s, uint64_t id, int stop_fd, const struct timespec *deadline,
                       rf_ask_answer *out, const char **why, const char **by)
{
    for (;;) {
        char *nl;
        while ((nl = memchr(s->buf, '\n', s->len))) {
            *nl = '\0';
            int rc = parse_answer(s->buf, id, out);
            size_t used = (size_t)(nl + 1 - s->buf);
            memmove(s->buf, nl + 1, s->len - used);
            s->len -= used;
            if (rc != 0) {
                *why = "the answer was not understood";
                return rc;
            }
        }
        if (s->len == sizeof s->buf) {
            *why = "an answer line longer than 4096 bytes";
            return -1;
        }
        struct pollfd pf[2] = { { .fd = s->fd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN } };
        int n = poll(pf, 2, ms_until(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n > 0 && pf[1].revents)) {
            *by = n == 0 ? "timeout" : "stopped";
            *why = n == 0 ? "no answer in time" : "the sandbox ended";
            return -1;
        }
        ssize_t r = recv(s->fd, s->buf + s->len, sizeof s->buf - s->len, MSG_DONTWAIT);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return 0;
        s->len += (size_t)r;
    }
}

int rf_ask_socket_ask(rf_ask_socket *s, const rf_ask_question *q, int stop_fd, const struct timespec *deadline,
                      rf_ask_answer *out, const char **why)
{
    const char *by = "socket";
    char *line = question_line(q);
    int rc = -1;
    *why = "out of memory";
    /* Twice at most: a kept connection may have been closed by now. */
    for (int attempt = 0; line && attempt < 2; attempt++) {
        if (s->fd >= 0)
            drain_stale(s);
        if (s->fd < 0 && open_socket(s, stop_fd, deadline, why) < 0)
            break;
        if (send_line(s->fd, line) < 0) {
            rf_ask_socket_close(s);
            *why = "the ask socket closed";
            continue;
        }
        int got = read_answer(s, q->id, stop_fd, deadline, out, why, &by);
        if (got == 1) {
            rc = 0;
            break;
        }
        rf_ask_socket_close(s); /* a late answer must not be read as the next one's */
        if (got < 0)
            break;
        *why = "the ask socket closed without answering";
    }
    free(line);
    return rc < 0 && !strcmp(by, "timeout") ? -2 : rc;
}
