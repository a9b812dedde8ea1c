/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `ringfence audit-daemon`: the system log's writer (system.h). One
 * SOCK_SEQPACKET socket (each record one message; SO_PEERCRED names the
 * sender), each message checked, stamped and chained by audit.c's own
 * append into a root-only log. Bounds, so that one user cannot starve
 * the others or fill the disk without limit: MAX_CONNS connections, at
 * most MAX_PER_UID of them one uid's, and a token bucket per uid
 * (RATE_PER_S, BURST, a token a TOKEN_BYTES); a uid out of tokens is simply not read until it
 * has some again, so its messages wait in its own sockets (its sends then
 * fail with EAGAIN, which its runs report) while everyone else's flow. */
#include "audit/audit.h"
#include "audit/system.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/printable.h"
#include "util/unix.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define MAX_PER_UID 16
#define RATE_PER_S 200.0
#define BURST 2000.0
/* A token pays for a record of up to TOKEN_BYTES; a larger one costs one
 * more for each further TOKEN_BYTES, so the bucket bounds bytes too: a
 * uid sending 64 KiB messages writes ~0.8 MiB/s, not 200 x 64 KiB. */
#define TOKEN_BYTES 4096

typedef struct conn {
    int fd;
    rf_audit_peer peer;
} conn;

typedef struct bucket {
    uid_t uid;
    bool used;
    double tokens;
    double at; /* monotonic seconds of the last refill */
} bucket;

typedef struct daemon_state {
    int listen_fd;
    char *dir;
    conn conns[MAX_CONNS];
    size_t n;
    bucket buckets[MAX_CONNS];
    char *buf;
} daemon_state;

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The uid's bucket, refilled; a uid with no connection left gives up its
 * slot (MAX_CONNS buckets are enough for MAX_CONNS connections). */
static bucket *bucket_of(daemon_state *d, uid_t uid)
{
    bucket *free_slot = NULL;
    for (size_t i = 0; i < MAX_CONNS; i++) {
        if (d->buckets[i].used && d->buckets[i].uid == uid) {
            bucket *b = &d->buckets[i];
            double t = now_s();
            b->tokens = b->tokens + (t - b->at) * RATE_PER_S;
            b->tokens = b->tokens > BURST ? BURST : b->tokens;
            b->at = t;
            return b;
        }
        if (!d->buckets[i].used && !free_slot)
            free_slot = &d->buckets[i];
    }
    if (!free_slot) { /* every slot a uid with a live connection: take the fullest */
        free_slot = &d->buckets[0];
        for (size_t i = 1; i < MAX_CONNS; i++)
            if (d->buckets[i].tokens > free_slot->tokens)
                free_slot = &d->buckets[i];
    }
    *free_slot = (bucket){ .uid = uid, .used = true, .tokens = BURST, .at = now_s() };
    return free_slot;
}

static size_t conns_of(const daemon_state *d, uid_t uid)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        k += d->conns[i].peer.uid == uid;
    return k;
}

/* A refusal is itself recorded, with the sender's credentials: someone
 * sending junk to the system log is worth knowing about. */
static void record_refusal(daemon_state *d, const rf_audit_peer *p, size_t len, const char *why)
{
    json_t *f = json_pack("{s:{s:I, s:I, s:I}, s:I, s:s}", "peer", "uid", (json_int_t)p->uid, "gid",
                          (json_int_t)p->gid, "pid", (json_int_t)p->pid, "bytes", (json_int_t)len, "reason", why);
    rf_error *err = NULL;
    if (!f || rf_audit_append_ex(d->dir, "audit.refused", f, false, NULL, &err) < 0)
        fprintf(stderr, "ringfence audit-daemon: could not record a refusal: %s\n", err ? rf_error_message(err) : "");
    rf_error_free(err);
    json_decref(f);
    /* why may quote the sender's bytes (jansson's "near '...'"): shown safely. */
    _cleanup_free_ char *shown = rf_visible(why, strlen(why), NULL);
    fprintf(stderr, "ringfence audit-daemon: refused a message from uid %u pid %d: %s\n", (unsigned)p->uid,
            (int)p->pid, shown ? shown : "(out of memory)");
}

static void take(daemon_state *d, const conn *c, size_t len)
{
    char why[256];
    json_t *rec = rf_audit_system_check(d->buf, len, &c->peer, why, sizeof why);
    if (!rec) {
        record_refusal(d, &c->peer, len, why);
        return;
    }
    _cleanup_free_ char *event = strdup(json_string_value(json_object_get(rec, "event")));
    rf_error *err = NULL;
    if (!event || rf_audit_append_ex(d->dir, event, rec, false, NULL, &err) < 0)
        fprintf(stderr, "ringfence audit-daemon: a record of uid %u is lost: %s\n", (unsigned)c->peer.uid,
                err ? rf_error_message(err) : "out of memory");
    rf_error_free(err);
    json_decref(rec);
}

static void drop(daemon_state *d, size_t i)
{
    close(d->conns[i].fd);
    d->conns[i] = d->conns[--d->n];
}

/* One message from connection i: false when it is closed. */
static bool read_one(daemon_state *d, size_t i)
{
    ssize_t n = recv(d->conns[i].fd, d->buf, RF_AUDIT_SYSTEM_MAX_RECORD + 1, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    if (n == 0)
        return false;
    bucket_of(d, d->conns[i].peer.uid)->tokens -= 1.0 + (double)((size_t)n / TOKEN_BYTES);
    take(d, &d->conns[i], (size_t)n); /* n > the buffer: check says too large */
    return true;
}

static void accept_one(daemon_state *d)
{
    int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
        close(fd);
        return;
    }
    rf_audit_peer p = { .uid = cr.uid, .gid = cr.gid, .pid = cr.pid };
    if (d->n >= MAX_CONNS || conns_of(d, p.uid) >= MAX_PER_UID) {
        /* Recorded within the uid's rate, like its records: a caller
         * that connects in a loop cannot fill the log with refusals. */
        bucket *b = bucket_of(d, p.uid);
        if (b->tokens >= 1) {
            b->tokens -= 1;
            record_refusal(d, &p, 0, d->n >= MAX_CONNS ? "too many connections" : "too many connections of this uid");
        }
        close(fd);
        return;
    }
    d->conns[d->n++] = (conn){ .fd = fd, .peer = p };
}

static void serve(daemon_state *d, const sigset_t *waitmask)
{
    struct pollfd fds[MAX_CONNS + 1];
    size_t which[MAX_CONNS + 1];
    while (!stopping) {
        nfds_t k = 0;
        bool throttled = false;
        if (d->n < MAX_CONNS) /* at the cap: new callers wait in the backlog */
            fds[k++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
        for (size_t i = 0; i < d->n; i++) {
            if (bucket_of(d, d->conns[i].peer.uid)->tokens < 1) {
                throttled = true;
                continue;
            }
            which[k] = i;
            fds[k++] = (struct pollfd){ .fd = d->conns[i].fd, .events = POLLIN };
        }
        struct timespec tick = { 0, 50 * 1000 * 1000 };
        int r = ppoll(fds, k, throttled ? &tick : NULL, waitmask);
        if (r <= 0)
            continue; /* EINTR: the signal set stopping */
        /* One message per ready connection a round: nobody goes first for long. */
        for (nfds_t j = k; j-- > 0;) {
            if (fds[j].fd == d->listen_fd || !fds[j].revents)
                continue;
            if (!read_one(d, which[j]))
                drop(d, which[j]);
        }
        if (d->n < MAX_CONNS && fds[0].fd == d->listen_fd && fds[0].revents & POLLIN)
            accept_one(d);
    }
}

/* systemd's socket activation, by hand (sd_listen_fds(3)): one socket,
 * fd 3, meant for this process. -1: not activated. */
static int activated_socket(rf_error **err)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds || atol(pid) != (long)getpid())
        return -1;
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    int type = 0, listening = 0;
    socklen_t l1 = sizeof type, l2 = sizeof listening;
    if (atol(fds) != 1 || getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &l1) < 0 ||
        getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l2) < 0 || type != SOCK_SEQPACKET || !listening)
        return rf_error_set(err, 0, "audit-daemon: systemd passed %s sockets; expected one listening "
                                    "SOCK_SEQPACKET socket (ringfence-audit.socket: ListenSequentialPacket=)", fds),
               -2;
    (void)fcntl(3, F_SETFD, FD_CLOEXEC);
    return 3;
}

/* Our own socket at path, reachable by every user (the daemon decides
 * what to take, and who sent it is the kernel's word). A socket a live
 * daemon answers on is not taken over. */
static int own_socket(const char *path, rf_error **err)
{
    struct sockaddr_un sa;
    if (path[0] != '/' || rf_unix_addr(path, &sa) < 0)
        return rf_error_set(err, 0, "audit-daemon: --socket %s: expected an absolute path shorter than %zu bytes",
                            path, sizeof sa.sun_path), -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return rf_error_set(err, errno, "audit-daemon: socket"), -1;
    struct stat st;
    if (lstat(path, &st) == 0) {
        int live = S_ISSOCK(st.st_mode) ? rf_unix_connect(path, SOCK_SEQPACKET) : -1;
        if (live >= 0)
            close(live);
        if (!S_ISSOCK(st.st_mode) || live >= 0) {
            close(fd);
            return rf_error_set(err, EEXIST, "audit-daemon: %s is %s", path,
                                S_ISSOCK(st.st_mode) ? "answered by another daemon" : "not a socket: refused"), -1;
        }
        unlink(path); /* a dead daemon's */
    }
    _cleanup_free_ char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash && slash != dir) {
        *slash = '\0';
        (void)mkdir(dir, 0755);
    }
    mode_t old = umask(0);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc < 0 || chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
        rf_error_set(err, errno, "audit-daemon: listen on %s", path);
        close(fd);
        return -1;
    }
    return fd;
}

char *rf_audit_system_dir(const char *log_path, rf_error **err)
{
    const char *slash = strrchr(log_path, '/');
    if (log_path[0] != '/' || !slash || strcmp(slash + 1, RF_AUDIT_LOG) || slash == log_path) {
        rf_error_set(err, 0, "system audit log %s: expected an absolute path whose name is " RF_AUDIT_LOG
                             " (its head and rotated files go beside it)", log_path);
        return NULL;
    }
    char *dir = strndup(log_path, (size_t)(slash - log_path));
    if (!dir)
        rf_error_set(err, ENOMEM, "audit");
    return dir;
}

/* The log's directory: ours, 0750, writable by nobody else (whoever can
 * write it can replace the log). */
static int prepare_dir(const char *dir, rf_error **err)
{
    if (mkdir(dir, 0750) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "audit-daemon: create %s", dir);
    struct stat st;
    if (lstat(dir, &st) < 0)
        return rf_error_set(err, errno, "audit-daemon: %s", dir);
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0027)) {
        rf_error_set(err, 0, "audit-daemon: %s must be a directory of uid %u that no group member or other user "
                             "can write or read (owner %u, mode %04o)", dir, (unsigned)geteuid(),
                     (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return rf_error_hint_set(err, "chown root:root %s && chmod 0750 %s", dir, dir);
    }
    return 0;
}

static bool may_run(void)
{
    if (geteuid() == 0)
        return true;
#ifdef RF_TEST_HOOKS
    const char *t = getenv("RINGFENCE_TEST_AUDIT_DAEMON_ANY_USER"); /* tests/security/audit-system.sh */
    if (t && !strcmp(t, "1"))
        return true;
#endif
    return false;
}

static int start(daemon_state *d, const char *socket_path, const char *log_path, bool *own, rf_error **err)
{
    if (!may_run()) {
        rf_error_set(err, EPERM, "audit-daemon: must run as root: the system log must be one no user can read "
                                 "or rewrite, and only root can keep it so");
        return rf_error_hint_set(err, "systemctl enable --now ringfence-audit.socket");
    }
    umask(027); /* the directory 0750 (group root may read), files 0600 (audit.c) */
    if (!(d->dir = rf_audit_system_dir(log_path ? log_path : RF_AUDIT_SYSTEM_LOG, err)) ||
        prepare_dir(d->dir, err) < 0)
        return -1;
    d->listen_fd = socket_path ? -1 : activated_socket(err);
    if (d->listen_fd == -2)
        return -1;
    *own = d->listen_fd < 0;
    if (*own && (d->listen_fd = own_socket(socket_path ? socket_path : RF_AUDIT_SYSTEM_SOCKET, err)) < 0)
        return -1;
    if (!(d->buf = malloc(RF_AUDIT_SYSTEM_MAX_RECORD + 1)))
        return rf_error_set(err, ENOMEM, "audit-daemon");
    return 0;
}

/* daemon.start and daemon.stop, in the chain itself: a gap between a
 * stop and the next start is a time records could not be received. */
static int own_record(daemon_state *d, const char *event, rf_error **err)
{
    json_t *f = json_pack("{s:I, s:I}", "pid", (json_int_t)getpid(), "uid", (json_int_t)geteuid());
    int rc = f ? rf_audit_append_ex(d->dir, event, f, false, NULL, err) : rf_error_set(err, ENOMEM, "audit-daemon");
    json_decref(f);
    return rc;
}

int rf_audit_daemon_run(const char *socket_path, const char *log_path, rf_error **err)
{
    daemon_state d = { .listen_fd = -1 };
    bool own = false;
    /* SIGTERM and SIGINT are held off except inside ppoll: a record in
     * hand is always finished, then the loop sees `stopping`. */
    sigset_t block, waitmask;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &waitmask);
    sigdelset(&waitmask, SIGTERM);
    sigdelset(&waitmask, SIGINT);
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    stopping = 0;
    int rc = start(&d, socket_path, log_path, &own, err);
    if (rc == 0)
        rc = own_record(&d, "daemon.start", err); /* a log it cannot write: refused at the start, named */
    if (rc == 0) {
        fprintf(stderr, "ringfence audit-daemon: logging to %s/" RF_AUDIT_LOG "\n", d.dir);
        serve(&d, &waitmask);
        rf_error *e = NULL;
        if (own_record(&d, "daemon.stop", &e) < 0)
            fprintf(stderr, "ringfence audit-daemon: %s\n", rf_error_message(e));
        rf_error_free(e);
    }
    for (size_t i = 0; i < d.n; i++)
        close(d.conns[i].fd);
    if (d.listen_fd >= 0)
        close(d.listen_fd);
    if (own && rc == 0)
        unlink(socket_path ? socket_path : RF_AUDIT_SYSTEM_SOCKET);
    free(d.dir);
    free(d.buf);
    return rc;
}
