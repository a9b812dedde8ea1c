/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A route header's value, fetched on the host when a request needs it:
 * from the caller's environment, a file only the caller can read, or the
 * output of a command (cached for RF_ROUTE_CMD_TTL_S, for tokens that an
 * OAuth helper refreshes). Fetched per request rather than at start, so a
 * rotated key is picked up and a missing one is a 502 that names the
 * source, not a sandbox that fails to start. Errors say which source and
 * what is wrong with it; they never quote the value. */
#include "net/route.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void rf_route_secret_wipe(char *line)
{
    if (line) {
        explicit_bzero(line, strlen(line));
        free(line);
    }
}

void rf_route_secret_clear(rf_route_secret *s)
{
    free(s->header);
    free(s->source);
    rf_route_secret_wipe(s->cached);
    free(s->failed);
    pthread_mutex_destroy(&s->lock);
    memset(s, 0, sizeof *s);
}

__attribute__((format(printf, 1, 2))) static char *why_f(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *w = NULL;
    int n = vasprintf(&w, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : w;
}

static time_t mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec;
}

/* Regular, owned by the caller, not readable or writable by group and
 * others: a token file anyone else can read (or replace) is refused. */
static char *from_file(const char *path, char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        *why = why_f("file %s cannot be read (%s)", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    const char *bad = !S_ISREG(st.st_mode)        ? "is not a regular file"
                      : st.st_uid != geteuid()    ? "is not owned by you"
                      : (st.st_mode & 077)        ? "is readable or writable by others (chmod 600 it)"
                      : st.st_size > RF_ROUTE_SECRET_MAX ? "is larger than 8 KiB"
                                                  : NULL;
    char *buf = bad ? NULL : calloc(1, RF_ROUTE_SECRET_MAX + 1);
    ssize_t n = buf ? read(fd, buf, RF_ROUTE_SECRET_MAX) : -1;
    close(fd);
    if (n < 0) {
        *why = why_f("file %s %s", path, bad ? bad : "cannot be read");
        free(buf);
        return NULL;
    }
    return buf;
}

/* Run `sh -c command` on the host; its standard output is the token. */
static char *from_cmd(const char *command, char **why)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        *why = why_f("cmd:%s could not be started (%s)", command, strerror(errno));
        return NULL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = { (char *)"sh", (char *)"-c", (char *)command, NULL };
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        *why = why_f("cmd:%s could not be started (%s)", command, strerror(rc));
        return NULL;
    }
    char *buf = calloc(1, RF_ROUTE_SECRET_MAX + 1);
    size_t len = 0;
    time_t deadline = mono_s() + RF_ROUTE_CMD_TIMEOUT_S;
    struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
    while (buf && len < RF_ROUTE_SECRET_MAX && mono_s() < deadline && poll(&pf, 1, 1000) >= 0) {
        if (!pf.revents)
            continue;
        ssize_t n = read(pfd[0], buf + len, RF_ROUTE_SECRET_MAX - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(pfd[0]);
    kill(pid, SIGKILL); /* a helper that outlived its output or deadline */
    int st = 0;
    waitpid(pid, &st, 0);
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok || !buf) {
        char code[32];
        snprintf(code, sizeof code, WIFEXITED(st) ? "exit status %d" : "killed by signal %d",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        *why = why_f("cmd:%s failed (%s)", command, code);
        rf_route_secret_wipe(buf);
        return NULL;
    }
    return buf;
}

/* A failure is kept for a few seconds too: a helper that fails slowly
 * (up to its 30 s deadline) would otherwise be run again for each of the
 * requests queued behind it, one after the other. */
static char *from_cmd_cached(rf_route_secret *s, const char *command, char **why)
{
    pthread_mutex_lock(&s->lock);
    time_t now = mono_s();
    if (s->cached && now - s->cached_at >= RF_ROUTE_CMD_TTL_S) {
        rf_route_secret_wipe(s->cached);
        s->cached = NULL;
    }
    if (!s->cached && s->failed && now - s->failed_at < RF_ROUTE_CMD_RETRY_S) {
        *why = strdup(s->failed);
        pthread_mutex_unlock(&s->lock);
        return NULL;
    }
    if (!s->cached) {
        free(s->failed);
        s->failed = NULL;
        s->cached = from_cmd(command, why);
        s->cached_at = s->failed_at = mono_s();
        if (!s->cached && *why)
            s->failed = strdup(*why);
    }
    char *v = s->cached ? strdup(s->cached) : NULL;
    pthread_mutex_unlock(&s->lock);
    return v;
}

/* Trailing newline and spaces go (files and commands end with one);
 * anything else that could end a header line is refused. */
static int clean(char *v, const char *src, char **why)
{
    size_t n = strlen(v);
    while (n && (v[n - 1] == '\n' || v[n - 1] == '\r' || v[n - 1] == ' ' || v[n - 1] == '\t'))
        v[--n] = '\0';
    if (n == 0) {
        *why = why_f("%s is empty", src);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
            *why = why_f("%s holds a control character (CR, LF, NUL...) and cannot be a header value", src);
            return -1;
        }
    return 0;
}

/* "basic:USER:" → "Basic base64(USER:token)". */
static char *basic(const char *user, size_t ulen, const char *token)
{
    size_t plain_len = ulen + 1 + strlen(token);
    char *plain = malloc(plain_len + 1), *out = malloc(6 + 4 * ((plain_len + 2) / 3) + 1);
    if (!plain || !out) {
        free(plain);
        free(out);
        return NULL;
    }
    snprintf(plain, plain_len + 1, "%.*s:%s", (int)ulen, user, token);
    memcpy(out, "Basic ", 6);
    EVP_EncodeBlock((unsigned char *)out + 6, (unsigned char *)plain, (int)plain_len);
    explicit_bzero(plain, plain_len);
    free(plain);
    return out;
}

static char *fetch(rf_route_secret *s, const char *src, char **why)
{
    if (!strncmp(src, "env:", 4)) {
        const char *v = getenv(src + 4);
        if (!v)
            *why = why_f("environment variable %s is not set (export it before starting ringfence)", src + 4);
        return v ? strdup(v) : NULL;
    }
    if (!strncmp(src, "file:", 5))
        return from_file(src + 5, why);
    return from_cmd_cached(s, src + 4, why);
}

char *rf_route_secret_line(rf_route_secret *s, char **why)
{
    *why = NULL;
    const char *src = s->source, *user = NULL;
    size_t ulen = 0;
    bool bearer = !strncmp(src, "bearer:", 7);
    if (bearer) {
        src += 7;
    } else if (!strncmp(src, "basic:", 6)) {
        user = src + 6;
        ulen = strcspn(user, ":");
        src = user + ulen + 1;
    }
    char *raw = fetch(s, src, why);
    if (!raw || clean(raw, strncmp(src, "cmd:", 4) ? src : "cmd's output", why) < 0) {
        rf_route_secret_wipe(raw);
        return NULL;
    }
    char *value = user ? basic(user, ulen, raw) : NULL, *line = NULL;
    if (user && !value) {
        rf_route_secret_wipe(raw);
        *why = why_f("out of memory");
        return NULL;
    }
    if (asprintf(&line, "%s: %s%s\r\n", s->header, bearer ? "Bearer " : "", value ? value : raw) < 0)
        line = NULL;
    rf_route_secret_wipe(raw);
    rf_route_secret_wipe(value);
    if (!line && !*why)
        *why = why_f("out of memory");
    return line;
}
