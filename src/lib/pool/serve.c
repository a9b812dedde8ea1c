/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A warm pool on a unix socket (`ringfence serve`, `run --via`).
 *
 * The socket is SOCK_SEQPACKET, mode 0600, and each client's uid
 * (SO_PEERCRED) must be the server's: a sandboxed command runs as the
 * serving user, so only that user may ask for one. One request per
 * connection:
 *   client → server  "RFP1", the policy key, cwd, argv; fds 0, 1, 2 attached
 *                    (or "RFP2": some streams a pty, see wire.h)
 *   client → server  "K" + signal number, to forward a signal (repeatable)
 *   server → client  RFP2 only: "T" with the pty's master attached, before
 *                    the status (none if the sandbox could not make one)
 *   server → client  "S" + the status JSON, or "E" + an error message
 * A pty's master goes to the client that asked for it and nowhere else:
 * the server closes its copy once sent, so the client's relay is its only
 * holder (docs/terminal.md). A request made under another policy (another
 * key) is refused, never run under the pool's. A client that goes away
 * has its sandbox hung up (SIGHUP to every process, as a closing terminal
 * does), and killed a second later. A server told to stop ends the
 * commands in flight as `ringfence run` ends its own on SIGTERM (SIGTERM
 * to every process, SIGKILL after the policy's kill_grace), answers their
 * clients with the status, and reaps every sandbox before it returns. */
#include "pool/keydiff.h"
#include "pool/pool.h"
#include "pool/sock.h"
#include "pool/wire.h"
#include "model/policy.h"
#include "channel/report.h"
#include "proc/proc.h"
#include "tty/tty.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/unix.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The policy's JSON, sorted and compact, without what may differ between
 * two runs of one policy. Built from the policy's JSON value directly: the
 * same text as dumping it, parsing it back and dumping that (json_pack's
 * values survive the round trip unchanged), at a third of the instructions
 * on the client's path of every `run --via` (docs/performance.md). */
RF_EXPORT char *rf_policy_key(const rf_policy *policy)
{
    json_t *o = policy ? rf_policy_to_json_value(policy) : NULL;
    if (!o)
        return NULL;
    json_object_del(o, "caller_cwd");
    json_object_del(o, "warnings");
    char *key = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return key;
}

/* ── The server ─────────────────────────────────────────────────────── */

typedef struct served {
    rf_pool *pool;
    char *key;
    unsigned refs; /* the server's own, and each request's */
} served;

typedef struct watch watch;

typedef struct server {
    pthread_mutex_t lock;
    pthread_cond_t ended; /* a connection's thread is done */
    served *current;
    unsigned active; /* connections being served */
    unsigned reading; /* ...of which still reading their request */
    bool stopping;
    watch *running;  /* the commands in flight, to end them on stop */
    /* The configuration check (see maybe_reload): one at a time, whether
     * the accept loop's or a refused request's. */
    pthread_mutex_t reload_lock;
    rf_pool_reload_fn reload;
    void *reload_ud;
    size_t size;
} server;

typedef struct client {
    server *srv;
    int conn;
} client;

static void served_put(server *s, served *sp)
{
    pthread_mutex_lock(&s->lock);
    bool last = --sp->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (last) {
        rf_pool_free(sp->pool);
        free(sp->key);
        free(sp);
    }
}

static void reply(int conn, char kind, const char *text)
{
    size_t n = strlen(text);
    char *buf = malloc(n + 1);
    if (!buf)
        return;
    buf[0] = kind;
    memcpy(buf + 1, text, n);
    send(conn, buf, n + 1, MSG_NOSIGNAL);
    free(buf);
}

struct watch {
    int conn;
    rf_proc *proc;
    atomic_bool done; /* the status is in: the connection's end is ours */
    watch *next;      /* in server.running */
};

/* In flight: a stopping server ends it (and one that starts as the server
 * stops is ended at once). */
static void track(server *s, watch *w)
{
    pthread_mutex_lock(&s->lock);
    w->next = s->running;
    s->running = w;
    if (s->stopping)
        rf_proc_terminate(w->proc);
    pthread_mutex_unlock(&s->lock);
}

/* Before its proc is freed: the stopping server no longer reaches it. */
static void untrack(server *s, watch *w)
{
    pthread_mutex_lock(&s->lock);
    for (watch **p = &s->running; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    pthread_mutex_unlock(&s->lock);
}

#define GONE_GRACE_MS 1000

/* The client went away mid-run (killed, its terminal closed): a hang-up
 * to every process of the sandbox, as a closing terminal sends, and what
 * is still there a second later is killed. */
static void client_gone(watch *w)
{
    rf_proc_kill(w->proc, SIGHUP);
    struct pollfd pf = { .fd = w->proc->pidfd, .events = POLLIN };
    int n;
    do
        n = poll(&pf, 1, GONE_GRACE_MS);
    while (n < 0 && errno == EINTR);
    if (n == 0 && !atomic_load(&w->done))
        rf_proc_kill(w->proc, SIGKILL);
}

/* Signals the client forwards, and its going away (then the command goes). */
static void *watch_main(void *arg)
{
    watch *w = arg;
    char msg[8];
    for (;;) {
        ssize_t n = recv(w->conn, msg, sizeof msg, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0 && !atomic_load(&w->done))
                client_gone(w);
            return NULL;
        }
        int sig;
        if (n == 1 + (ssize_t)sizeof sig && msg[0] == 'K') {
            memcpy(&sig, msg + 1, sizeof sig);
            if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT || sig == SIGUSR1 ||
                sig == SIGUSR2 || sig == SIGKILL)
                rf_proc_kill(w->proc, sig);
        }
    }
}

/* A pty's master to the client that asked for it, then our copy closed:
 * the client's relay is its only holder outside the sandbox. None when
 * the sandbox ended first (its status says why). */
static void pass_master(int conn, rf_proc *proc)
{
    int master = rf_proc_take_pty(proc, 10000);
    if (master < 0)
        return;
    (void)rf_msg_send_with_fds(conn, "T", 1, &master, 1); /* a client gone: the watcher ends the run */
    close(master);
}

/* The current pool, with a reference; NULL once the server stops. */
static served *served_get(server *s)
{
    pthread_mutex_lock(&s->lock);
    served *sp = s->current;
    if (sp)
        sp->refs++;
    pthread_mutex_unlock(&s->lock);
    return sp;
}

static void maybe_reload(server *s);

/* The pool for a request's key. A client that read a configuration file
 * just edited presents the new key before the server's periodic check saw
 * the edit: check now, rather than refuse it for the server's lag. */
static served *served_for(server *s, const char *key)
{
    served *sp = served_get(s);
    if (!sp || !strcmp(key, sp->key))
        return sp;
    served_put(s, sp);
    maybe_reload(s);
    return served_get(s);
}

static void refuse_other_policy(int conn, const char *ours, const char *theirs)
{
    char what[600], msg[800];
    if (rf_pool_key_diff(ours, theirs, what, sizeof what))
        snprintf(msg, sizeof msg,
                 "this pool serves another policy: the request's differs from the server's in %s; start ringfence "
                 "serve with the same options, configuration and workspace, or run without --via",
                 what);
    else
        snprintf(msg, sizeof msg, "this pool serves another policy: the request's options, configuration or "
                                  "workspace differ from the server's (start ringfence serve with the same ones, or "
                                  "run without --via)");
    reply(conn, 'E', msg);
}

static void run_request(server *s, int conn, const rf_pool_wire_request *wr, const int fds[3])
{
    served *sp = served_for(s, wr->key);
    if (!sp) {
        reply(conn, 'E', "the server is stopping");
        return;
    }
    if (strcmp(wr->key, sp->key)) {
        refuse_other_policy(conn, sp->key, wr->key);
        served_put(s, sp);
        return;
    }
    int io[3];
    for (int i = 0; i < 3; i++)
        io[i] = (wr->tty.streams & (1u << i)) ? RF_STDIO_PTY : fds[i];
    /* A pty's terminal type is its user's (wire.c lets only a name pass). */
    char term[8 + RF_POOL_TERM_MAX] = "";
    char *env_add[] = { term, NULL };
    if (wr->tty.streams && *wr->tty.term)
        snprintf(term, sizeof term, "TERM=%s", wr->tty.term);
    rf_pool_request req = { .argv = wr->argv, .cwd = *wr->cwd ? wr->cwd : NULL, .stdio = { io[0], io[1], io[2] },
                            .env_add = *term ? env_add : NULL };
    rf_error *err = NULL;
    rf_proc *proc = rf_pool_start(sp->pool, &req, wr->tty.streams ? &wr->tty.size : NULL, &err);
    if (!proc) {
        reply(conn, 'E', rf_error_message(err));
        rf_error_free(err);
        served_put(s, sp);
        return;
    }
    watch w = { .conn = conn, .proc = proc };
    track(s, &w);
    pthread_t t;
    bool watching = pthread_create(&t, NULL, watch_main, &w) == 0;
    if (wr->tty.streams)
        pass_master(conn, proc);
    rf_status st;
    if (rf_proc_wait(proc, &st, &err) == 0) {
        char *json = rf_status_to_json(&st);
        reply(conn, 'S', json ? json : "{}");
        free(json);
        rf_status_clear(&st);
    } else {
        reply(conn, 'E', rf_error_message(err));
        rf_error_free(err);
    }
    atomic_store(&w.done, true);
    shutdown(conn, SHUT_RDWR); /* ends the watcher */
    if (watching)
        pthread_join(t, NULL);
    untrack(s, &w);
    rf_proc_free(proc);
    served_put(s, sp);
}

/* Only the serving user: the command would run with that user's powers. */
static bool peer_allowed(int conn)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid();
}

static void *client_main(void *arg)
{
    client *c = arg;
    char *buf = malloc(RF_POOL_REQ_MAX);
    rf_pool_wire_request *req = calloc(1, sizeof *req);
    /* Room for more descriptors than a request carries: extra ones are
     * received and closed (rf_pool_wire_take_fds), not left in the server. */
    union {
        char b[CMSG_SPACE(8 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = buf, .iov_len = RF_POOL_REQ_MAX };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
    struct timeval tv = { .tv_sec = 10 };
    setsockopt(c->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssize_t n = buf && req ? recvmsg(c->conn, &mh, MSG_CMSG_CLOEXEC) : -1;
    pthread_mutex_lock(&c->srv->lock);
    c->srv->reading--;
    pthread_cond_broadcast(&c->srv->ended);
    pthread_mutex_unlock(&c->srv->lock);
    tv.tv_sec = 0;
    setsockopt(c->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int fds[3] = { -1, -1, -1 };
    bool parsed = n > 0 && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && rf_pool_wire_parse(buf, (size_t)n, req) == 0;
    /* Taken (or closed) whatever the request: none is left behind. */
    int nfds = n > 0 ? rf_pool_wire_take_fds(&mh, parsed ? req->tty.streams : 0, fds) : 0;
    /* Read first, then judge: the refusal is then read before the close. */
    if (!peer_allowed(c->conn))
        reply(c->conn, 'E', "refused: only the user who started ringfence serve may use its pool");
    else if (!parsed || nfds != rf_pool_wire_nfds(req->tty.streams))
        reply(c->conn, 'E', "malformed request");
    else
        run_request(c->srv, c->conn, req, fds);
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    close(c->conn);
    free(buf);
    free(req);
    pthread_mutex_lock(&c->srv->lock);
    c->srv->active--;
    pthread_cond_broadcast(&c->srv->ended);
    pthread_mutex_unlock(&c->srv->lock);
    free(c);
    return NULL;
}

#define RELOAD_CHECK_MS 1000

/* Rebuild the pool when reload() says the configuration changed. */
static void maybe_reload(server *s)
{
    char *key = NULL;
    rf_policy *policy = NULL;
    pthread_mutex_lock(&s->reload_lock);
    if (!s->reload || s->reload(s->reload_ud, &key, &policy) <= 0 || !key || !policy) {
        pthread_mutex_unlock(&s->reload_lock);
        free(key);
        rf_policy_free(policy);
        return;
    }
    rf_error *err = NULL;
    served *sp = calloc(1, sizeof *sp);
    if (sp && (sp->pool = rf_pool_new(policy, s->size, &err))) {
        sp->key = key;
        sp->refs = 1;
        pthread_mutex_lock(&s->lock);
        served *old = s->current;
        if (old) /* else the server stopped meanwhile */
            s->current = sp;
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_unlock(&s->reload_lock);
        served_put(s, old ? old : sp); /* freed once its last request ends */
    } else {
        pthread_mutex_unlock(&s->reload_lock);
        free(sp);
        free(key);
    }
    rf_error_free(err);
    rf_policy_free(policy);
}

static void start_client(server *s, int conn)
{
    client *c = malloc(sizeof *c);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&s->lock);
    s->active++;
    s->reading++;
    pthread_mutex_unlock(&s->lock);
    if (!c || (*c = (client){ .srv = s, .conn = conn }, pthread_create(&t, &attr, client_main, c)) != 0) {
        free(c);
        close(conn);
        pthread_mutex_lock(&s->lock);
        s->active--;
        s->reading--;
        pthread_mutex_unlock(&s->lock);
    }
    pthread_attr_destroy(&attr);
}

/* How long a stopping server waits for its connections. A client still
 * silent past STOP_WAIT_S is not worth waiting out (its request timeout
 * is 10 s); a connection past its request is: it is ending its command
 * (kill_grace, SIGKILL then) and, the last of them, freeing the pool,
 * whose idle sandboxes' run.end records are written then. A process that
 * exited under it would lose those records and leave the sandboxes to die
 * with it, so it is waited for up to STOP_SERVING_MAX_S. */
#define STOP_WAIT_S 5
#define STOP_SERVING_MAX_S 60

/* End the commands in flight and wait until every connection is done: its
 * client answered, its sandbox reaped (a sandbox left to exit with the
 * server would be nobody's child: a zombie until the host's init reaps it,
 * holding its user and pid namespaces). The last request frees the pool,
 * and its ready sandboxes with it. True when all are done. */
static bool stop_requests(server *s)
{
    struct timespec now, until, cap;
    clock_gettime(CLOCK_REALTIME, &now);
    until = cap = now;
    until.tv_sec += STOP_WAIT_S;
    cap.tv_sec += STOP_SERVING_MAX_S;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    for (watch *w = s->running; w; w = w->next)
        rf_proc_terminate(w->proc);
    int rc = 0;
    while (s->active && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->ended, &s->lock, &until);
    rc = 0;
    while (s->active > s->reading && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->ended, &s->lock, &cap);
    bool idle = s->active == 0;
    pthread_mutex_unlock(&s->lock);
    return idle;
}

/* Accept until told to stop, or until the socket's path no longer leads
 * to it: then no client can ever reach this server, and it stops as told
 * (a test suite's scratch directory deleted, /tmp cleaned: servers left
 * running for hours, their ready sandboxes with them). The configuration
 * and the socket are checked about once a second, busy or idle (a steady
 * stream of requests used to keep an edit from being seen). */
static rf_pool_sock_state accept_loop(server *s, int lfd, const rf_pool_sock *sock, volatile int *stop)
{
    long long checked = rf_monotonic_ms();
    while (!*stop) {
        struct pollfd pf = { .fd = lfd, .events = POLLIN };
        int n = poll(&pf, 1, RELOAD_CHECK_MS);
        long long now = rf_monotonic_ms();
        if (now - checked >= RELOAD_CHECK_MS) {
            checked = now;
            /* First: a pool no client can reach is not worth rebuilding. */
            rf_pool_sock_state state = rf_pool_sock_check(sock);
            if (state > RF_POOL_SOCK_UNKNOWN)
                return state;
            maybe_reload(s);
        }
        int conn = n > 0 ? accept4(lfd, NULL, NULL, SOCK_CLOEXEC) : -1;
        if (conn >= 0)
            start_client(s, conn);
    }
    return RF_POOL_SOCK_OURS;
}

RF_EXPORT int rf_pool_serve(const char *socket_path, const rf_policy *policy, const char *policy_key, size_t size,
                            rf_pool_reload_fn reload, void *ud, volatile int *stop, rf_error **err)
{
    server *s = calloc(1, sizeof *s);
    served *first = calloc(1, sizeof *first);
    if (!s || !first || !(first->key = strdup(policy_key)) || !(first->pool = rf_pool_new(policy, size, err))) {
        if (first)
            free(first->key);
        free(first);
        free(s);
        return err && *err ? -1 : rf_error_set(err, ENOMEM, "serve");
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->reload_lock, NULL);
    pthread_cond_init(&s->ended, NULL);
    s->current = first;
    s->reload = reload;
    s->reload_ud = ud;
    s->size = size;
    first->refs = 1;
    rf_pool_sock sock;
    int lfd = rf_pool_sock_listen(socket_path, &sock, err);
    rf_pool_sock_state state = lfd >= 0 ? accept_loop(s, lfd, &sock, stop) : RF_POOL_SOCK_OURS;
    if (lfd >= 0) {
        close(lfd);
        rf_pool_sock_remove(&sock); /* not another server's, now at the path */
    }
    /* The idle sandboxes go now, or with the last request; a request that
     * comes after is told the server is stopping. */
    pthread_mutex_lock(&s->lock);
    served *last = s->current;
    s->current = NULL;
    pthread_mutex_unlock(&s->lock);
    served_put(s, last);
    bool idle = stop_requests(s);
    if (idle) {
        pthread_cond_destroy(&s->ended);
        pthread_mutex_destroy(&s->reload_lock);
        free(s);
    } /* else a connection still runs: the process is about to exit with it */
    if (lfd < 0)
        return -1;
    return state > RF_POOL_SOCK_UNKNOWN ? (rf_pool_sock_gone_error(&sock, state, err), 1) : 0;
}

/* ── The client ─────────────────────────────────────────────────────── */

static volatile sig_atomic_t client_sock = -1;

static void forward_signal(int sig)
{
    char msg[1 + sizeof(int)] = { 'K' };
    memcpy(msg + 1, &sig, sizeof sig);
    if (client_sock >= 0)
        send(client_sock, msg, sizeof msg, MSG_NOSIGNAL);
}

/* The request, with our descriptors for the streams that are not the pty
 * (io's, or our own 0, 1, 2 where io says -1). */
static int send_request(int fd, const char *key, const char *cwd, char *const argv[], const rf_stdio *io,
                        const rf_pool_wire_tty *tty, rf_error **err)
{
    size_t len;
    unsigned streams = tty ? tty->streams : 0;
    char *buf = rf_pool_wire_encode(key, cwd, argv, tty, &len);
    if (!buf)
        return errno == E2BIG ? rf_error_set(err, E2BIG, "run --via: the command is too long for the pool "
                                                         "(over %d bytes or %d arguments)",
                                             RF_POOL_REQ_MAX, RF_POOL_REQ_MAX_ARGS)
                              : rf_error_set(err, errno, "run --via");
    const int own[3] = { io ? io->in_fd : -1, io ? io->out_fd : -1, io ? io->err_fd : -1 };
    int fds[3];
    size_t nfds = 0;
    for (int i = 0; i < 3; i++)
        if (!(streams & (1u << i)))
            fds[nfds++] = own[i] >= 0 ? own[i] : i;
    int rc = rf_msg_send_with_fds(fd, buf, len, fds, nfds);
    int e = errno;
    free(buf);
    return rc == 0 ? 0 : rf_error_set(err, e, "run --via: send the request");
}

static void status_from_json(const char *json, rf_status *out)
{
    json_t *o = json_loads(json, 0, NULL);
    out->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
    out->signal = (int)json_integer_value(json_object_get(o, "signal"));
    out->exited = json_is_true(json_object_get(o, "exited"));
    out->timed_out = json_is_true(json_object_get(o, "timed_out"));
    out->oom_killed = json_is_true(json_object_get(o, "oom_killed"));
    out->wall_seconds = json_number_value(json_object_get(o, "wall_seconds"));
    const char *e = json_string_value(json_object_get(o, "error"));
    out->setup_error = e ? strdup(e) : NULL;
    json_decref(o);
}

static int connect_pool(const char *socket_path, rf_error **err)
{
    int fd = rf_unix_connect(socket_path, SOCK_SEQPACKET);
    if (fd < 0 && errno == ENAMETOOLONG)
        return rf_error_set(err, ENAMETOOLONG, "run --via %s: path too long", socket_path);
    if (fd < 0) {
        rf_error_set(err, errno, "run --via %s: no pool answers there", socket_path);
        return rf_error_hint_set(err, "start one: ringfence serve --socket %s [run options]", socket_path);
    }
    return fd;
}

/* One message from the server, and the descriptor it carried (-1: none;
 * more than one is not the server's way: closed). */
static ssize_t recv_reply(int fd, char *buf, size_t size, int *ret_fd)
{
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = { .iov_base = buf, .iov_len = size };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
    ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    *ret_fd = -1;
    /* Room for one: the kernel closes what would not fit (MSG_CTRUNC). */
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
    return n;
}

/* Until the status: the relay (tty, may be NULL) served meanwhile, the
 * pty's master attached when the server passes it on. */
static ssize_t await_status(int fd, rf_tty *tty, char *buf)
{
    for (;;) {
        struct pollfd pfd[1 + RF_TTY_NFDS] = { { .fd = fd, .events = POLLIN } };
        rf_tty_pollfds(tty, pfd + 1);
        if (poll(pfd, 1 + RF_TTY_NFDS, -1) < 0) {
            if (errno == EINTR)
                continue; /* a forwarded signal */
            return -1;
        }
        rf_tty_serve(tty, pfd + 1);
        if (!pfd[0].revents)
            continue;
        int master;
        ssize_t n = recv_reply(fd, buf, RF_POOL_REQ_MAX, &master);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 1 && buf[0] == 'T' && master >= 0 && tty) {
            (void)rf_tty_attach(tty, master); /* a second one is refused (closed) */
            continue;
        }
        if (master >= 0)
            close(master);
        if (n == 1 && buf[0] == 'T')
            continue;
        return n;
    }
}

RF_EXPORT int rf_pool_client_run_stdio(const char *socket_path, const char *policy_key, char *const argv[],
                                       const char *cwd, const rf_stdio *stdio, rf_status *out, rf_error **err)
{
    memset(out, 0, sizeof *out);
    /* Our TERM for the pty, unless it is no terminal type's name: then the
     * pool's own (as a pty-less run has). */
    const char *term = getenv("TERM");
    rf_pool_wire_tty wt = { .streams = rf_tty_streams(stdio),
                            .term = term && rf_pool_wire_term_ok(term) ? term : "" };
    rf_tty *tty = wt.streams ? rf_tty_new(wt.streams, err) : NULL;
    if (wt.streams && !tty)
        return -1;
    if (tty)
        rf_tty_size(tty, &wt.size);
    int fd = connect_pool(socket_path, err);
    if (fd < 0) {
        rf_tty_free(tty);
        return -1;
    }
    if (send_request(fd, policy_key, cwd ? cwd : "", argv, stdio, &wt, err) < 0) {
        rf_tty_free(tty);
        /* The server may have refused before reading (another uid): its
         * reason is still there to read. */
        char why[512];
        ssize_t n = recv(fd, why, sizeof why - 1, MSG_DONTWAIT);
        close(fd);
        if (n > 1 && why[0] == 'E' && err) {
            why[n] = '\0';
            rf_error_free(*err);
            *err = NULL;
            return rf_error_set(err, 0, "run --via %s: %s", socket_path, why + 1);
        }
        return -1;
    }
    client_sock = fd;
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
    struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART }, old[6];
    for (int i = 0; i < 6; i++)
        sigaction(sigs[i], &sa, &old[i]);
    char *buf = malloc(RF_POOL_REQ_MAX + 1);
    ssize_t n = buf ? await_status(fd, tty, buf) : -1;
    /* The tree is gone: the rest of its output, and our terminal as it was. */
    rf_tty_finish(tty);
    rf_tty_free(tty);
    for (int i = 0; i < 6; i++)
        sigaction(sigs[i], &old[i], NULL);
    client_sock = -1;
    close(fd);
    int rc = 0;
    if (n <= 0) {
        rc = rf_error_set(err, n < 0 ? errno : ECONNRESET, "run --via %s: the pool went away", socket_path);
    } else {
        buf[n] = '\0';
        if (buf[0] == 'S')
            status_from_json(buf + 1, out);
        else
            rc = rf_error_set(err, 0, "run --via %s: %s", socket_path, buf + 1);
    }
    free(buf);
    return rc;
}

RF_EXPORT int rf_pool_client_run(const char *socket_path, const char *policy_key, char *const argv[],
                                 const char *cwd, rf_status *out, rf_error **err)
{
    return rf_pool_client_run_stdio(socket_path, policy_key, argv, cwd, NULL, out, err);
}
