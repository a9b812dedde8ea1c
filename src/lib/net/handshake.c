/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One client of the proxy, from accept to relay: read its request (HTTP
 * CONNECT, an absolute-URI HTTP request, or SOCKS5), check the name it
 * asked for, resolve it here on the host, check every address, connect,
 * answer, and hand both sockets to the relay loop. A thread per client
 * keeps this simple (blocking DNS); their number is capped by proxy.c and
 * each step has a deadline, so a slow or silent client costs one thread
 * for at most RF_NET_HANDSHAKE_S seconds. */
#include "net/proxy-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct hs {
    rf_net_proxy *p;
    int fd;
    bool routed; /* served as a credential route: no longer a handshake */
    char *buf; /* RF_NET_HEAD_MAX bytes; a route connection takes it over */
    size_t len;
    struct timespec deadline;
} hs;

static int ms_left(const struct timespec *deadline)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ms = (deadline->tv_sec - t.tv_sec) * 1000 + (deadline->tv_nsec - t.tv_nsec) / 1000000;
    return ms < 0 ? 0 : (int)ms;
}

/* Wait for fd (or the proxy stopping) until the deadline. 1: ready. */
static int wait_fd(hs *h, int fd, short events)
{
    struct pollfd pf[2] = { { .fd = fd, .events = events }, { .fd = h->p->stop_fd, .events = POLLIN } };
    for (;;) {
        int n = poll(pf, 2, ms_left(&h->deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || pf[1].revents)
            return 0;
        return 1;
    }
}

/* Read more of the request into h->buf. 1: got some; 0: EOF, timeout,
 * full. The socket is non-blocking: a request usually arrives with the
 * connection, so reading comes first and waiting only if nothing came. */
static int read_more(hs *h)
{
    while (h->len < RF_NET_HEAD_MAX) {
        ssize_t n = recv(h->fd, h->buf + h->len, RF_NET_HEAD_MAX - h->len, 0);
        if (n > 0) {
            h->len += (size_t)n;
            return 1;
        }
        if (n == 0 || (errno != EINTR && errno != EAGAIN) || (errno == EAGAIN && !wait_fd(h, h->fd, POLLIN)))
            return 0;
    }
    return 0;
}

static void send_all(int fd, const void *data, size_t len)
{
    const char *d = data;
    while (len) {
        ssize_t n = send(fd, d, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the deadline is the client's problem; it is non-blocking */
        d += n;
        len -= (size_t)n;
    }
}

static void consume(hs *h, size_t n)
{
    memmove(h->buf, h->buf + n, h->len - n);
    h->len -= n;
}

/* The addresses to try: the user's own mapping, the literal, or DNS on
 * the host. A name that leads to a private address is refused unless the
 * policy allows private addresses: that is how DNS rebinding and requests
 * for cloud metadata end. Returns the count kept (max `max`) or -1 with
 * *reason. */
static int resolve(const rf_net_rules *rules, const char *host, uint16_t port, struct sockaddr_storage *out,
                   socklen_t *lens, int max, const char **reason)
{
    const rf_net_host *mapped = rf_net_rules_host(rules, host);
    if (mapped) {
        memcpy(&out[0], &mapped->addr, mapped->addr_len);
        lens[0] = mapped->addr_len;
        ((struct sockaddr_in *)&out[0])->sin_port = htons(port); /* same offset in sockaddr_in6 */
        return 1;
    }
    bool literal = rf_net_is_ip_literal(host);
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = literal ? AI_NUMERICHOST : 0 };
    struct addrinfo *res = NULL;
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    if (getaddrinfo(host, service, &hints, &res) != 0 || !res) {
        *reason = "name does not resolve";
        return -1;
    }
    int n = 0;
    bool dropped = false;
    for (struct addrinfo *a = res; a && n < max; a = a->ai_next) {
        if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) || a->ai_addrlen > sizeof out[0])
            continue;
        /* An IP literal is in allow_domains by name: the user chose it. */
        if (!literal && !rules->allow_private && rf_net_addr_is_private(a->ai_addr)) {
            dropped = true;
            continue;
        }
        memcpy(&out[n], a->ai_addr, a->ai_addrlen);
        lens[n++] = a->ai_addrlen;
    }
    freeaddrinfo(res);
    if (n == 0)
        *reason = dropped ? "resolves to a private address (allow_private_addresses)" : "no usable address";
    return n ? n : -1;
}

static int connect_one(hs *h, const struct sockaddr *sa, socklen_t len)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, sa, len) == 0)
        return fd;
    if (errno == EINPROGRESS && wait_fd(h, fd, POLLOUT)) {
        int e = 0;
        socklen_t el = sizeof e;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)
            return fd;
    }
    close(fd);
    return -1;
}

/* The verdict, then the connection, then its record (net/audit.c).
 * Returns the upstream fd, or -1 with *reason set when refused (NULL when
 * allowed but unreachable). */
static int open_upstream(hs *h, char *host, uint16_t port, const char *protocol, size_t *dest,
                         const char **reason)
{
    rf_net_ip_canonical(host, RF_NET_NAME_MAX + 1);
    *reason = rf_net_check_name(&h->p->rules, host, port);
    /* Only a name allow_domains does not match is asked about: deny_domains,
     * IP literals and ports stay refused without a question, and an
     * allowed name still goes through the address checks below. */
    rf_ask_who who;
    bool asked = false, known = false;
    if (*reason && h->p->ask && !strcmp(*reason, "not in allow_domains")) {
        known = rf_ask_who_of_connection(h->fd, &who) == 0;
        asked = true;
        *reason = rf_net_ask_decide(h->p->ask, host, port, protocol, known ? &who : NULL);
        clock_gettime(CLOCK_MONOTONIC, &h->deadline); /* the wait was the user's, not the client's */
        h->deadline.tv_sec += RF_NET_HANDSHAKE_S;
    }
    struct sockaddr_storage addrs[8];
    socklen_t lens[8];
    int n = *reason ? -1 : resolve(&h->p->rules, host, port, addrs, lens, 8, reason);
    *dest = rf_net_note(h->p, host, port, n < 0 ? *reason : NULL);
    int fd = -1;
    for (int i = 0; i < n && fd < 0; i++)
        fd = connect_one(h, (struct sockaddr *)&addrs[i], lens[i]);
    if (n >= 0 && fd < 0)
        rf_net_note_failed(h->p);
    /* A question's answer already named the process; else looked up now.
     * An allowed connection whose record cannot be written goes nowhere. */
    if (rf_net_audit_connection(h->p, h->fd, host, port, protocol, n < 0 ? *reason : NULL, fd >= 0, asked,
                                known ? &who : NULL) < 0 && fd >= 0) {
        close(fd);
        *reason = "the audit trail cannot be written";
        return -1;
    }
    return fd;
}

static void http_refuse(hs *h, int status, const char *what, const char *host, uint16_t port, const char *why)
{
    char body[512], head[256];
    int bl = host ? snprintf(body, sizeof body, "ringfence: network: %s %s:%u (%s)\n", what, host, (unsigned)port, why)
                  : snprintf(body, sizeof body, "ringfence: network: %s\n", why);
    if (bl < 0 || bl >= (int)sizeof body)
        bl = (int)sizeof body - 1;
    const char *text = status == 403 ? "Forbidden" : status == 502 ? "Bad Gateway" : status == 431 ? "Request Header Fields Too Large" : "Bad Request";
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                      "X-Ringfence-Network: %s\r\nConnection: close\r\n\r\n",
                      status, text, bl, status == 403 ? "blocked" : "error");
    send_all(h->fd, head, (size_t)hl);
    send_all(h->fd, body, (size_t)bl);
}

static int hand_off(hs *h, int upstream, size_t dest, const char *first, size_t first_len)
{
    rf_net_relay *r = rf_net_relay_new(h->fd, upstream, dest, first, first_len);
    if (!r)
        return -1;
    if (atomic_load(&h->p->stopping) || write(h->p->handoff[1], &r, sizeof r) != (ssize_t)sizeof r) {
        rf_net_relay_disown(r); /* both descriptors are the caller's to close, once */
        return -1;
    }
    h->fd = -1;
    return 0;
}

/* "METHOD /route/...": a request for a route, not a proxy request. Its
 * thread serves the connection from now on, so it gives its handshake
 * slot back (the connection cap still counts it). */
static bool route_request(hs *h)
{
    const char *sp = memchr(h->buf, ' ', h->len);
    size_t plen = strlen(RF_ROUTE_PATH);
    if (!sp || (size_t)(h->buf + h->len - sp - 1) < plen || memcmp(sp + 1, RF_ROUTE_PATH, plen))
        return false;
    rf_net_proxy *p = h->p;
    pthread_mutex_lock(&p->lock);
    bool wake = p->handshakes-- >= RF_NET_MAX_HANDSHAKES;
    p->sessions++;
    pthread_mutex_unlock(&p->lock);
    h->routed = true;
    rf_net_wake_accept(p, wake);
    rf_net_route_serve(p, h->fd, &h->buf, h->len);
    pthread_mutex_lock(&p->lock);
    if (--p->sessions == 0)
        pthread_cond_broadcast(&p->sessions_done);
    pthread_mutex_unlock(&p->lock);
    return true;
}

static void serve_http(hs *h)
{
    /* Enough of the request line to tell a route from a proxy request. */
    while (h->len < 16 && !memchr(h->buf, '\n', h->len) && read_more(h))
        ;
    if (route_request(h))
        return;
    rf_net_request req;
    rf_net_parse_result pr;
    while ((pr = rf_net_parse_http(h->buf, h->len, &req)) == RF_NET_PARSE_MORE && read_more(h))
        ;
    if (pr != RF_NET_PARSE_OK) {
        if (pr == RF_NET_PARSE_BAD)
            http_refuse(h, req.http_status, NULL, NULL, 0, req.error);
        rf_net_request_clear(&req);
        return;
    }
    size_t dest;
    const char *reason;
    int up = open_upstream(h, req.host, req.port, req.kind == RF_NET_HTTP_CONNECT ? "connect" : "http", &dest,
                           &reason);
    if (up < 0) {
        http_refuse(h, reason ? 403 : 502, reason ? "blocked connect to" : "cannot connect to", req.host, req.port,
                    reason ? reason : "connection failed");
    } else {
        consume(h, req.consumed);
        if (req.kind == RF_NET_HTTP_CONNECT) {
            static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
            send_all(h->fd, ok, sizeof ok - 1);
        } else {
            /* The rewritten head goes first, then what followed it. */
            char *joined = realloc(req.forward, req.forward_len + h->len + 1);
            if (joined) {
                memcpy(joined + req.forward_len, h->buf, h->len);
                req.forward = joined;
                req.forward_len += h->len;
                h->len = 0;
            }
        }
        const char *first = req.kind == RF_NET_HTTP_CONNECT ? h->buf : req.forward;
        size_t first_len = req.kind == RF_NET_HTTP_CONNECT ? h->len : req.forward_len;
        if (hand_off(h, up, dest, first, first_len) < 0)
            close(up);
    }
    rf_net_request_clear(&req);
}

static void socks_reply(hs *h, unsigned char code)
{
    unsigned char r[10] = { 5, code, 0, 1, 0, 0, 0, 0, 0, 0 };
    send_all(h->fd, r, sizeof r);
}

static void serve_socks(hs *h)
{
    size_t used;
    bool no_auth = false;
    rf_net_parse_result pr;
    while ((pr = rf_net_parse_socks_greeting((unsigned char *)h->buf, h->len, &used, &no_auth)) ==
               RF_NET_PARSE_MORE && read_more(h))
        ;
    if (pr != RF_NET_PARSE_OK || !no_auth) {
        if (pr == RF_NET_PARSE_OK)
            send_all(h->fd, "\x05\xff", 2); /* no acceptable method */
        return;
    }
    send_all(h->fd, "\x05\x00", 2);
    consume(h, used);
    rf_net_request req;
    int code;
    while ((pr = rf_net_parse_socks_request((unsigned char *)h->buf, h->len, &req, &code)) == RF_NET_PARSE_MORE &&
           read_more(h))
        ;
    if (pr != RF_NET_PARSE_OK) {
        if (pr == RF_NET_PARSE_BAD)
            socks_reply(h, (unsigned char)code);
        return;
    }
    size_t dest;
    const char *reason;
    int up = open_upstream(h, req.host, req.port, "socks5", &dest, &reason);
    if (up < 0) {
        socks_reply(h, reason ? 2 /* not allowed by ruleset */ : 5 /* refused */);
        return;
    }
    socks_reply(h, 0);
    consume(h, req.consumed);
    if (hand_off(h, up, dest, h->buf, h->len) < 0)
        close(up);
}

/* --publish: a connection from the host to a server inside the sandbox,
 * through a socket made in the sandbox's network namespace. */
static void serve_publish(hs *h, const rf_net_listener *l)
{
    rf_net_proxy *p = h->p;
    int s = rf_net_sandbox_socket(p);
    size_t dest = SIZE_MAX; /* counted in published_total, not as a destination */
    pthread_mutex_lock(&p->lock);
    p->published_total++;
    pthread_mutex_unlock(&p->lock);
    struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(l->sandbox_port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (s >= 0) {
        fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
        int r = connect(s, (struct sockaddr *)&in, sizeof in);
        int e = 0;
        socklen_t el = sizeof e;
        if (r == 0 || (errno == EINPROGRESS && wait_fd(h, s, POLLOUT) &&
                       getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)) {
            if (hand_off(h, s, dest, NULL, 0) == 0)
                return;
        }
        close(s);
    }
    rf_net_note_failed(p);
}

void *rf_net_handshake_main(void *arg)
{
    rf_net_client *c = arg;
    rf_net_proxy *p = c->proxy;
    hs *h = calloc(1, sizeof *h);
    bool handed = false, routed = false;
    if (h && !(h->buf = malloc(RF_NET_HEAD_MAX))) {
        free(h);
        h = NULL;
    }
    if (h) {
        h->p = p;
        h->fd = c->fd;
        clock_gettime(CLOCK_MONOTONIC, &h->deadline);
        h->deadline.tv_sec += RF_NET_HANDSHAKE_S;
        if (c->via->publish)
            serve_publish(h, c->via);
        else if (read_more(h))
            (h->buf[0] == 5 ? serve_socks : serve_http)(h);
        handed = h->fd < 0;
        routed = h->routed;
        if (h->fd >= 0)
            close(h->fd);
        free(h->buf);
        free(h);
    } else {
        close(c->fd);
    }
    free(c);
    pthread_mutex_lock(&p->lock);
    bool wake = !routed && p->handshakes-- >= RF_NET_MAX_HANDSHAKES;
    if (!handed)
        p->conns--; /* a relay gives its slot back when it closes */
    pthread_mutex_unlock(&p->lock);
    rf_net_wake_accept(p, wake);
    rf_net_unref(p);
    return NULL;
}
