/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proxy of one sandbox: a loop thread that accepts (on the listening
 * socket made inside the sandbox's network namespace, and on the host's
 * published ports), starts a handshake thread per client, and relays for
 * every connection; the statistics behind the status JSON's "network"
 * object; the log of blocked attempts. */
#include "net/proxy-internal.h"
#include "limits/limits.h"
#include "channel/report.h"
#include "util/error.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static void log_blocked(rf_net_proxy *p, const char *host, uint16_t port, const char *reason)
{
    if (p->log_fd < 0 || p->logged > RF_NET_MAX_LOG_LINES)
        return;
    char line[512];
    int n = ++p->logged > RF_NET_MAX_LOG_LINES
                ? snprintf(line, sizeof line, "ringfence: network: more blocked attempts; see the status JSON\n")
                : port == 0 ? snprintf(line, sizeof line, "ringfence: network: refused a connection to %s (%s)\n",
                                       host, reason)
                            : snprintf(line, sizeof line, "ringfence: network: blocked connect to %s:%u (%s)\n",
                                       host, (unsigned)port, reason);
    if (n > 0 && write(p->log_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
        /* nowhere left to say it */
    }
}

void rf_net_log(rf_net_proxy *p, const char *line)
{
    pthread_mutex_lock(&p->lock);
    if (p->log_fd >= 0 && p->logged <= RF_NET_MAX_LOG_LINES) {
        const char *more = "ringfence: network: more blocked attempts; see the status JSON\n";
        const char *text = ++p->logged > RF_NET_MAX_LOG_LINES ? more : line;
        if (write(p->log_fd, text, strlen(text)) < 0) {
            /* nowhere left to say it */
        }
    }
    pthread_mutex_unlock(&p->lock);
}

size_t rf_net_note(rf_net_proxy *p, const char *host, uint16_t port, const char *reason)
{
    size_t idx = SIZE_MAX;
    pthread_mutex_lock(&p->lock);
    if (reason) {
        p->blocked_total++;
        log_blocked(p, host, port, reason);
    } else {
        p->allowed_total++;
    }
    for (size_t i = 0; i < p->n_dests && idx == SIZE_MAX; i++)
        if (p->dests[i].port == port && p->dests[i].reason == reason && !strcmp(p->dests[i].host, host))
            idx = i;
    if (idx == SIZE_MAX && p->n_dests < RF_NET_MAX_DESTS) {
        char *h = strdup(host);
        if (h) {
            idx = p->n_dests++;
            p->dests[idx] = (rf_net_dest){ .host = h, .port = port, .reason = reason };
        }
    }
    if (idx == SIZE_MAX)
        p->dests_truncated = true;
    else
        p->dests[idx].count++;
    pthread_mutex_unlock(&p->lock);
    return idx;
}

void rf_net_note_failed(rf_net_proxy *p)
{
    pthread_mutex_lock(&p->lock);
    p->failed_total++;
    pthread_mutex_unlock(&p->lock);
}

void rf_net_add_bytes(rf_net_proxy *p, size_t dest, uint64_t up, uint64_t down)
{
    pthread_mutex_lock(&p->lock);
    p->up_total += up;
    p->down_total += down;
    if (dest < p->n_dests) {
        p->dests[dest].up += up;
        p->dests[dest].down += down;
    }
    pthread_mutex_unlock(&p->lock);
}

static void proxy_destroy(rf_net_proxy *p)
{
    /* Relays a handshake handed over after the loop stopped. */
    rf_net_relay *r;
    while (read(p->handoff[0], &r, sizeof r) == (ssize_t)sizeof r)
        rf_net_relay_free(r);
    for (size_t i = 0; i < p->n_listeners; i++)
        close(p->listeners[i].fd);
    int fds[] = { p->epfd, p->stop_fd, p->handoff[0], p->handoff[1], p->socket_chan };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    for (size_t i = 0; i < p->n_dests; i++)
        free(p->dests[i].host);
    free(p->dests);
    free(p->chunk);
    rf_net_relay_pipes_free(p);
    rf_net_rules_clear(&p->rules);
    rf_route_table_clear(&p->routes);
    rf_net_ask_free(p->ask);
    rf_net_audit_destroy(p);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->chan_lock);
    pthread_cond_destroy(&p->sessions_done);
    free(p);
}

void rf_net_unref(rf_net_proxy *p)
{
    pthread_mutex_lock(&p->lock);
    bool last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (last)
        proxy_destroy(p);
}

static void set_accepting(rf_net_proxy *p, bool on)
{
    if (p->accept_paused == !on)
        return;
    for (size_t i = 0; i < p->n_listeners; i++) {
        struct epoll_event e = { .events = on ? EPOLLIN : 0, .data.ptr = &p->listeners[i].tag };
        epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->listeners[i].fd, &e);
    }
    p->accept_paused = !on;
}

/* A client beyond the connection cap is closed at once (it gets an error
 * now rather than a hang); beyond the handshake cap, accepting pauses and
 * the kernel's backlog holds the rest. */
static void accept_clients(rf_net_proxy *p, rf_net_listener *l)
{
    for (;;) {
        pthread_mutex_lock(&p->lock);
        bool busy = p->handshakes >= RF_NET_MAX_HANDSHAKES;
        pthread_mutex_unlock(&p->lock);
        if (busy) {
            set_accepting(p, false);
            return;
        }
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        pthread_mutex_lock(&p->lock);
        bool full = p->conns >= RF_NET_MAX_CONNS;
        if (full) {
            p->blocked_total++;
            log_blocked(p, l->publish ? l->label : "the proxy", 0, "too many connections, at most 1024");
        } else {
            p->conns++;
            p->handshakes++;
            p->refs++;
        }
        pthread_mutex_unlock(&p->lock);
        if (full) {
            close(fd);
            continue;
        }
        rf_net_client *c = malloc(sizeof *c);
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        int rc = c ? (*c = (rf_net_client){ .proxy = p, .fd = fd, .via = l },
                      pthread_create(&t, &attr, rf_net_handshake_main, c))
                   : ENOMEM;
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            free(c);
            close(fd);
            pthread_mutex_lock(&p->lock);
            p->conns--;
            p->handshakes--;
            p->refs--;
            pthread_mutex_unlock(&p->lock);
            return;
        }
    }
}

void rf_net_wake_accept(rf_net_proxy *p, bool at_cap)
{
    rf_net_relay *wake = NULL;
    if (at_cap && write(p->handoff[1], &wake, sizeof wake) < 0) {
        /* the loop is gone when stopping: nothing to wake */
    }
}

static void take_handoffs(rf_net_proxy *p)
{
    rf_net_relay *r;
    while (read(p->handoff[0], &r, sizeof r) == (ssize_t)sizeof r) {
        if (r && rf_net_relay_add(p, r) < 0) {
            rf_net_relay_free(r);
            pthread_mutex_lock(&p->lock);
            p->conns--;
            pthread_mutex_unlock(&p->lock);
        }
    }
    set_accepting(p, true);
}

static void *loop_main(void *arg)
{
    rf_net_proxy *p = arg;
    struct epoll_event ev[64];
    int timeout = 5000;
    while (!atomic_load(&p->stopping)) {
        int n = epoll_wait(p->epfd, ev, 64, timeout);
        for (int i = 0; i < n && !atomic_load(&p->stopping); i++) {
            rf_net_tag *t = ev[i].data.ptr;
            uintptr_t other;
            if (!t)
                continue; /* its relay closed earlier in this batch */
            if (t->kind == RF_NET_TAG_LISTENER)
                accept_clients(p, t->obj);
            else if (t->kind == RF_NET_TAG_HANDOFF)
                take_handoffs(p);
            else if (t->kind == RF_NET_TAG_RELAY && rf_net_relay_event(p, t, ev[i].events, &other))
                /* Both sides of a relay can be in one batch (both ends hung
                 * up at once): the other's event would use the freed relay. */
                for (int j = i + 1; j < n; j++)
                    if ((uintptr_t)ev[j].data.ptr == other)
                        ev[j].data.ptr = NULL;
        }
        rf_net_relay_sweep(p, false);
        timeout = rf_net_stats_write(p, false);
    }
    rf_net_relay_sweep(p, true);
    return NULL;
}

static int watch(rf_net_proxy *p, int fd, rf_net_tag *tag)
{
    struct epoll_event e = { .events = EPOLLIN, .data.ptr = tag };
    return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e);
}

static int add_listener(rf_net_proxy *p, int fd, bool publish, uint16_t sandbox_port, const char *label)
{
    rf_net_listener *l = &p->listeners[p->n_listeners];
    *l = (rf_net_listener){ .tag = { .kind = RF_NET_TAG_LISTENER, .obj = l }, .fd = fd, .publish = publish,
                            .sandbox_port = sandbox_port };
    snprintf(l->label, sizeof l->label, "%s", label ? label : "");
    p->n_listeners++;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
        return -1;
    return watch(p, fd, &l->tag);
}

static rf_net_proxy *proxy_new(const rf_net_policy *policy, int log_fd, rf_ask_fn ask_fn, void *ask_data,
                               rf_error **err)
{
    rf_net_proxy *p = calloc(1, sizeof *p);
    if (!p) {
        rf_error_set(err, ENOMEM, "network proxy");
        return NULL;
    }
    p->epfd = p->stop_fd = p->handoff[0] = p->handoff[1] = p->socket_chan = -1;
    rf_net_audit_init(p);
    pthread_mutex_init(&p->chan_lock, NULL);
    p->log_fd = log_fd;
    p->refs = 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->sessions_done, NULL);
    p->dests = calloc(RF_NET_MAX_DESTS, sizeof *p->dests);
    p->chunk = malloc(RF_NET_RELAY_CHUNK);
    if (!p->dests || !p->chunk || rf_net_rules_build(policy, &p->rules) < 0) {
        rf_error_set(err, errno ? errno : ENOMEM, "network: the allowlist");
        proxy_destroy(p);
        return NULL;
    }
    char *why = NULL;
    if (rf_route_table_build(&p->routes, policy->routes, &why) < 0) {
        rf_error_set(err, 0, "network: %s", why ? why : "routes: out of memory");
        rf_error_hint_set(err, "check the route's CA file (--route-ca NAME:FILE, a PEM bundle) and URL");
        free(why);
        proxy_destroy(p);
        return NULL;
    }
    p->epfd = epoll_create1(EPOLL_CLOEXEC);
    p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (p->epfd < 0 || p->stop_fd < 0 || pipe2(p->handoff, O_CLOEXEC | O_NONBLOCK) < 0) {
        rf_error_set(err, errno, "network proxy: epoll");
        proxy_destroy(p);
        return NULL;
    }
    if (policy->ask && !(p->ask = rf_net_ask_new(policy, p->stop_fd, ask_fn, ask_data))) {
        rf_error_set(err, errno ? errno : EINVAL, "network: asking (on_blocked: ask): no socket:PATH, no callback");
        proxy_destroy(p);
        return NULL;
    }
    p->stop_tag = (rf_net_tag){ .kind = RF_NET_TAG_STOP };
    p->handoff_tag = (rf_net_tag){ .kind = RF_NET_TAG_HANDOFF };
    if (watch(p, p->stop_fd, &p->stop_tag) < 0 || watch(p, p->handoff[0], &p->handoff_tag) < 0) {
        rf_error_set(err, errno, "network proxy: epoll");
        proxy_destroy(p);
        return NULL;
    }
    return p;
}

rf_net_proxy *rf_net_proxy_start(const rf_net_policy *policy, int listen_fd, int log_fd, rf_ask_fn ask_fn,
                                 void *ask_data, rf_error **err)
{
    rf_net_proxy *p = proxy_new(policy, log_fd, ask_fn, ask_data, err);
    if (!p) {
        if (listen_fd >= 0)
            close(listen_fd);
        return NULL;
    }
    if (listen_fd >= 0 && add_listener(p, listen_fd, false, 0, NULL) < 0) {
        rf_error_set(err, errno, "network proxy: listen");
        proxy_destroy(p);
        return NULL;
    }
    /* Every relay holds two sockets, and a pipe per direction while a
     * receiver lags: room for the cap if the hard limit allows (short of
     * it, a relay copies instead of splicing). */
    (void)rf_limits_raise_nofile(6 * RF_NET_MAX_CONNS + 256);
    return p;
}

/* Bind the host side of each publication; the loop starts here (after
 * the listeners exist, so none is added under its feet). */
static int bind_published(const char *spec, uint16_t *sandbox_port, rf_error **err)
{
    char addr[64];
    unsigned hport, sport;
    const char *last = strrchr(spec, ':');
    const char *mid = last;
    while (mid > spec && mid[-1] != ':')
        mid--;
    size_t al = mid > spec ? (size_t)(mid - 1 - spec) : 0;
    if (!last || al >= sizeof addr || sscanf(mid, "%u:%u", &hport, &sport) != 2)
        return rf_error_set(err, EINVAL, "publish %s: malformed", spec);
    memcpy(addr, spec, al);
    addr[al] = '\0';
    struct sockaddr_storage ss = { 0 };
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    socklen_t len = sizeof *a4;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)hport);
    } else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)hport);
        len = sizeof *a6;
    } else {
        return rf_error_set(err, EINVAL, "publish %s: bad address", spec);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        rf_error_set(err, e, "publish: cannot listen on %s:%u", addr, hport);
        return rf_error_hint_set(err, e == EADDRINUSE ? "another program uses that port; choose another HOST_PORT"
                                                      : "check the address (default 127.0.0.1)");
    }
    *sandbox_port = (uint16_t)sport;
    return fd;
}

int rf_net_sandbox_socket(rf_net_proxy *p)
{
    pthread_mutex_lock(&p->chan_lock);
    int fd = -1;
    if (p->socket_chan >= 0 && send(p->socket_chan, "S", 1, MSG_NOSIGNAL) == 1)
        fd = rf_msg_recv_fd(p->socket_chan);
    pthread_mutex_unlock(&p->chan_lock);
    return fd;
}

int rf_net_proxy_publish(rf_net_proxy *p, char *const *publish, int socket_chan, rf_error **err)
{
    p->socket_chan = socket_chan;
    for (size_t i = 0; publish && publish[i]; i++) {
        if (p->n_listeners >= 1 + RF_NET_MAX_PUBLISH)
            return rf_error_set(err, E2BIG, "publish: at most %d ports", RF_NET_MAX_PUBLISH);
        uint16_t sport = 0;
        int fd = bind_published(publish[i], &sport, err);
        if (fd < 0)
            return -1;
        char label[64];
        snprintf(label, sizeof label, "%.*s", (int)(strrchr(publish[i], ':') - publish[i]), publish[i]);
        if (add_listener(p, fd, true, sport, label) < 0)
            return rf_error_set(err, errno, "publish %s", publish[i]);
    }
    return 0;
}

void rf_net_proxy_set_command(rf_net_proxy *p, char *const *argv)
{
    rf_net_ask_set_command(p->ask, argv);
}

int rf_net_proxy_run(rf_net_proxy *p, rf_error **err)
{
    int rc = pthread_create(&p->loop, NULL, loop_main, p);
    if (rc != 0)
        return rf_error_set(err, rc, "network proxy: thread");
    p->loop_started = true;
    return 0;
}

/* Route connections see the stop on their next wait and end, closing
 * their upstream connections: wait for them (briefly: a cmd: source may
 * be running), so the report's counts are final and nothing of theirs
 * outlives the sandbox. */
static void wait_sessions(rf_net_proxy *p)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += RF_NET_SESSION_END_MS / 1000;
    pthread_mutex_lock(&p->lock);
    while (p->sessions > 0 && pthread_cond_timedwait(&p->sessions_done, &p->lock, &until) == 0)
        ;
    pthread_mutex_unlock(&p->lock);
}

void rf_net_proxy_stop(rf_net_proxy *p)
{
    if (!p || atomic_exchange(&p->stopping, true))
        return;
    uint64_t one = 1;
    if (write(p->stop_fd, &one, sizeof one) < 0) {
        /* the loop also sees `stopping` within its 5 s poll */
    }
    rf_net_audit_detach(p); /* after `stopping`: a record being written ends first */
    if (p->loop_started)
        pthread_join(p->loop, NULL);
    p->loop_started = false;
    wait_sessions(p);
}

void rf_net_proxy_free(rf_net_proxy *p)
{
    if (!p)
        return;
    rf_net_proxy_stop(p);
    rf_net_unref(p); /* handshake threads still running hold their own */
}

static json_t *dests_json(const rf_net_proxy *p, bool allowed)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->n_dests; i++) {
        const rf_net_dest *d = &p->dests[i];
        if ((d->reason == NULL) != allowed)
            continue;
        json_t *o = allowed ? json_pack("{s:s, s:i, s:I, s:I, s:I}", "host", d->host, "port", (int)d->port,
                                        "connections", (json_int_t)d->count, "bytes_sent", (json_int_t)d->up,
                                        "bytes_received", (json_int_t)d->down)
                            : json_pack("{s:s, s:i, s:s, s:I}", "host", d->host, "port", (int)d->port, "reason",
                                        d->reason, "attempts", (json_int_t)d->count);
        json_array_append_new(a, o);
    }
    return a;
}

/* Per route: requests, bytes, refusals; names only, never a header. */
static json_t *routes_json(const rf_net_proxy *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->routes.n; i++) {
        const rf_route *r = &p->routes.routes[i];
        json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "name", r->name, "requests",
                                           (json_int_t)r->requests, "refusals", (json_int_t)r->refusals, "errors",
                                           (json_int_t)r->errors, "bytes_sent", (json_int_t)r->up,
                                           "bytes_received", (json_int_t)r->down));
    }
    return a;
}

char *rf_net_proxy_report(rf_net_proxy *p)
{
    pthread_mutex_lock(&p->lock);
    json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:b}", "mode", "allowlist", "connections",
                          (json_int_t)p->allowed_total, "blocked", (json_int_t)p->blocked_total, "failed",
                          (json_int_t)p->failed_total, "published_connections", (json_int_t)p->published_total,
                          "bytes_sent", (json_int_t)p->up_total, "bytes_received", (json_int_t)p->down_total,
                          "allowed", dests_json(p, true), "blocked_destinations", dests_json(p, false),
                          "truncated", p->dests_truncated);
    if (o && p->routes.n)
        json_object_set_new(o, "routes", routes_json(p));
    pthread_mutex_unlock(&p->lock);
    if (o && p->ask)
        json_object_set_new(o, "asked", rf_net_ask_report(p->ask));
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return s;
}
