/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One client connection to the proxy's /route/NAME/... paths, served by
 * the handshake thread that accepted it, for as long as the client keeps
 * it alive: read a request head, check it, add the route's credentials,
 * send it to the upstream over TLS (one upstream connection per client
 * connection, reused across requests), stream the request body and then
 * the response back. Bodies are never held whole: each read is written on
 * at once, so server-sent events reach the client as they are sent, and a
 * body of any size costs one 16 KiB buffer. A thread per connection keeps
 * the streaming simple; the proxy's connection cap (1024) bounds them. */
#include "net/proxy-internal.h"
#include "net/route.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define IO_TIMEOUT_MS (RF_NET_IDLE_S * 1000)
#define CONNECT_TIMEOUT_MS (RF_NET_HANDSHAKE_S * 1000)

/* An idle kept-alive connection should cost little (issue 28: 64 KiB):
 * the client's read-ahead (the handshake's buffer at first) lives from
 * the first byte of a request to the end of its response, the upstream's
 * for a response, and bodies go through a buffer that lives as long as
 * the body. */
#define BODY_CHUNK (64 * 1024)

typedef struct io {
    int fd;
    SSL *ssl;
    char *buf; /* RF_ROUTE_HEAD_MAX bytes read ahead: a head, or the start of a body */
    size_t len;
} io;

typedef struct session {
    rf_net_proxy *p;
    io client, up;
    char **client_buf;        /* the caller's pointer to client.buf */
    const rf_route *up_route; /* whom `up` is connected to */
    uint64_t sent, received;  /* of the current request */
    int status;               /* of the current request's answer (0: none) */
} session;

/* 1: ready; 0: timeout or the proxy stopping. */
static int wait_io(const session *s, int fd, short events, int timeout_ms)
{
    struct pollfd pf[2] = { { .fd = fd, .events = events }, { .fd = s->p->stop_fd, .events = POLLIN } };
    int n;
    do
        n = poll(pf, 2, timeout_ms);
    while (n < 0 && errno == EINTR);
    return n > 0 && !pf[1].revents;
}

/* >0: bytes; 0: end of stream; -1: error, timeout or stopping. */
static ssize_t io_read(const session *s, io *c, char *dst, size_t n)
{
    for (;;) {
        if (c->ssl) {
            int r = SSL_read(c->ssl, dst, n > INT32_MAX ? INT32_MAX : (int)n);
            if (r > 0)
                return r;
            int e = SSL_get_error(c->ssl, r);
            if (e == SSL_ERROR_ZERO_RETURN)
                return 0;
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                return -1;
            if (!wait_io(s, c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, IO_TIMEOUT_MS))
                return -1;
            continue;
        }
        ssize_t r = recv(c->fd, dst, n, 0);
        if (r >= 0)
            return r;
        if (errno != EAGAIN && errno != EINTR)
            return -1;
        if (errno == EAGAIN && !wait_io(s, c->fd, POLLIN, IO_TIMEOUT_MS))
            return -1;
    }
}

static int io_write(const session *s, io *c, const char *src, size_t n)
{
    while (n) {
        ssize_t w;
        if (c->ssl) {
            int r = SSL_write(c->ssl, src, n > INT32_MAX ? INT32_MAX : (int)n);
            int e = r > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, r);
            if (e != SSL_ERROR_NONE && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                return -1;
            if (e != SSL_ERROR_NONE &&
                !wait_io(s, c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, IO_TIMEOUT_MS))
                return -1;
            w = r > 0 ? r : 0;
        } else {
            w = send(c->fd, src, n, MSG_NOSIGNAL);
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                return -1;
            if (w < 0 && errno == EAGAIN && !wait_io(s, c->fd, POLLOUT, IO_TIMEOUT_MS))
                return -1;
            w = w < 0 ? 0 : w;
        }
        src += w;
        n -= (size_t)w;
    }
    return 0;
}

static void io_consume(io *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
}

/* The upstream's read-ahead, when a response is expected. */
static int up_buf(session *s)
{
    if (!s->up.buf && !(s->up.buf = malloc(RF_ROUTE_HEAD_MAX)))
        return -1;
    return 0;
}

/* Between responses nothing is read ahead: give the buffer back. */
static void up_idle(session *s)
{
    if (s->up.len == 0) {
        free(s->up.buf);
        s->up.buf = NULL;
    }
}

static void up_close(session *s)
{
    if (s->up.ssl) {
        SSL_free(s->up.ssl);
        s->up.ssl = NULL;
    }
    if (s->up.fd >= 0)
        close(s->up.fd);
    s->up.fd = -1;
    s->up.len = 0;
    free(s->up.buf);
    s->up.buf = NULL;
    s->up_route = NULL;
}

static void note(session *s, rf_route *r, int kind, const char *line)
{
    rf_net_proxy *p = s->p;
    pthread_mutex_lock(&p->lock);
    if (kind == 0) {
        r->requests++;
        r->up += s->sent;
        r->down += s->received;
    } else if (kind == 1) {
        r->refusals++;
        p->blocked_total++;
    } else {
        r->errors++;
        p->failed_total++;
    }
    pthread_mutex_unlock(&p->lock);
    if (line)
        rf_net_log(p, line);
}

/* A refusal or an error, to the client (the agent reads the body), and
 * the connection ends: the request's body, if any, was not read. */
static void answer(session *s, int status, const char *body)
{
    s->status = status;
    const char *text = status == 403 ? "Forbidden" : status == 404 ? "Not Found" : status == 502 ? "Bad Gateway"
                       : status == 431 ? "Request Header Fields Too Large" : status == 417 ? "Expectation Failed"
                                                                                          : "Bad Request";
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                      "X-Ringfence-Route: %s\r\nConnection: close\r\n\r\n",
                      status, text, strlen(body), status == 403 ? "refused" : "error");
    if (io_write(s, &s->client, head, (size_t)hl) == 0)
        io_write(s, &s->client, body, strlen(body));
}

__attribute__((format(printf, 4, 5))) static void refuse(session *s, rf_route *r, int status, const char *fmt,
                                                         ...)
{
    char body[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    answer(s, status, body);
    if (r)
        note(s, r, status == 403 ? 1 : 2, body);
}

static int connect_tcp(session *s, const rf_route *r, char **why)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    const rf_net_host *mapped = rf_net_rules_host(&s->p->rules, r->url.host);
    if (mapped) { /* --add-host: the user's own mapping, as for the allowlist */
        memcpy(&ss, &mapped->addr, mapped->addr_len);
        len = mapped->addr_len;
        ((struct sockaddr_in *)&ss)->sin_port = htons(r->url.port); /* same offset in sockaddr_in6 */
    } else {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        char service[8];
        snprintf(service, sizeof service, "%u", (unsigned)r->url.port);
        if (getaddrinfo(r->url.host, service, &hints, &res) != 0 || !res) {
            *why = strdup("the upstream's name does not resolve");
            return -1;
        }
        memcpy(&ss, res->ai_addr, res->ai_addrlen);
        len = res->ai_addrlen;
        freeaddrinfo(res);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int e = 0, one = 1;
    socklen_t el = sizeof e;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&ss, len) < 0 &&
        (errno != EINPROGRESS || !wait_io(s, fd, POLLOUT, CONNECT_TIMEOUT_MS) ||
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e != 0)) {
        *why = strdup(e ? strerror(e) : "cannot connect to the upstream");
        close(fd);
        return -1;
    }
    if (fd < 0)
        *why = strdup(strerror(errno));
    else
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* A kept connection that is readable between requests was closed by the
 * upstream (or says something unasked): start a fresh one. */
static bool up_alive(session *s, const rf_route *r)
{
    if (s->up.fd < 0 || s->up_route != r)
        return false;
    struct pollfd pf = { .fd = s->up.fd, .events = POLLIN };
    return poll(&pf, 1, 0) == 0;
}

static int up_open(session *s, const rf_route *r, char **why)
{
    if (up_alive(s, r))
        return 0;
    up_close(s);
    int fd = connect_tcp(s, r, why);
    if (fd < 0)
        return -1;
    s->up.fd = fd;
    if (r->url.tls && !(s->up.ssl = rf_route_tls_connect(r->tls, fd, r->url.host, CONNECT_TIMEOUT_MS, why))) {
        up_close(s);
        return -1;
    }
    s->up_route = r;
    return 0;
}

static bool is_secret_field(const rf_route *r, const char *line, size_t len)
{
    for (size_t i = 0; i < r->n_secrets; i++) {
        size_t hl = strlen(r->secrets[i].header);
        if (len > hl && line[hl] == ':' && !strncasecmp(line, r->secrets[i].header, hl))
            return true;
    }
    return false;
}

/* The head for the upstream: origin-form target under the route's
 * prefix, its Host, the client's fields without the route's own, the real
 * credentials, the framing. Holds secrets: wiped by the caller. */
static char *upstream_head(session *s, rf_route *r, const rf_route_req *q, size_t *out_len)
{
    size_t cap = q->head_len + 1024 + strlen(r->url.prefix);
    char *lines[RF_ROUTE_HEADERS_MAX] = { 0 };
    for (size_t i = 0; i < r->n_secrets; i++) {
        char *why = NULL;
        if (!(lines[i] = rf_route_secret_line(&r->secrets[i], &why))) {
            char what[700];
            snprintf(what, sizeof what, "header %s: %s", r->secrets[i].header, why ? why : "out of memory");
            refuse(s, r, 502, "ringfence: network: route %s: %s\n", r->name, what);
            free(why);
            for (size_t j = 0; j < i; j++)
                rf_route_secret_wipe(lines[j]);
            return NULL;
        }
        cap += strlen(lines[i]);
    }
    char *h = malloc(cap), *w = h;
    if (h) {
        /* In the client's version: a 1.1 upstream may send a 1.1 client a
         * chunked body, which a 1.0 client cannot read. */
        w += sprintf(w, "%.*s %s%.*s HTTP/1.%c\r\nHost: %s", (int)q->method_len, q->method, r->url.prefix,
                     (int)(q->path_len ? q->path_len : 1), q->path_len ? q->path : "/", q->http10 ? '0' : '1',
                     r->url.host);
        if (r->url.port != (r->url.tls ? 443 : 80))
            w += sprintf(w, ":%u", (unsigned)r->url.port);
        w += sprintf(w, "\r\n");
        for (size_t i = 0; i < q->n_fields; i++)
            if (!is_secret_field(r, q->fields[i], q->field_len[i])) {
                memcpy(w, q->fields[i], q->field_len[i]);
                w += q->field_len[i];
            }
        for (size_t i = 0; i < r->n_secrets; i++)
            w += sprintf(w, "%s", lines[i]);
        if (q->body == RF_BODY_CHUNKED)
            w += sprintf(w, "Transfer-Encoding: chunked\r\n");
        else if (q->has_length) /* 0 too: some servers want a POST's length even when empty */
            w += sprintf(w, "Content-Length: %llu\r\n", (unsigned long long)q->length);
        w += sprintf(w, "\r\n");
        *out_len = (size_t)(w - h);
    }
    for (size_t i = 0; i < r->n_secrets; i++)
        rf_route_secret_wipe(lines[i]);
    return h;
}

/* How much of from->buf (its read-ahead) belongs to the body. */
static ssize_t body_part(rf_chunked *ck, const io *from, rf_body_kind kind, uint64_t left)
{
    if (kind == RF_BODY_CHUNKED)
        return rf_chunked_feed(ck, from->buf, from->len);
    return (ssize_t)(kind == RF_BODY_LENGTH && from->len > left ? left : from->len);
}

/* Copy a body from `from` to `to`, each read written on at once. A body
 * of known length is read in BODY_CHUNK pieces, never past its end; a
 * chunked one through from->buf, whose bytes past the body's end (the
 * next request, pipelined) stay there. */
static int relay_body(session *s, io *from, io *to, rf_body_kind kind, uint64_t length, uint64_t *count)
{
    rf_chunked ck = { 0 };
    uint64_t left = length;
    char *chunk = kind == RF_BODY_CHUNKED ? NULL : malloc(BODY_CHUNK);
    int rc = kind == RF_BODY_CHUNKED || chunk ? 1 : -1;
    while (rc > 0) {
        const char *data = from->buf;
        ssize_t take = 0;
        if (from->len) {
            take = body_part(&ck, from, kind, left);
        } else {
            size_t want = chunk ? (kind == RF_BODY_LENGTH && left < BODY_CHUNK ? (size_t)left : BODY_CHUNK)
                                : RF_ROUTE_HEAD_MAX;
            ssize_t n = io_read(s, from, chunk ? chunk : from->buf, want);
            if (n <= 0) {
                rc = n == 0 && kind == RF_BODY_CLOSE ? 0 : -1;
                break;
            }
            if (chunk) {
                data = chunk;
                take = n;
            } else {
                from->len = (size_t)n;
                take = body_part(&ck, from, kind, left);
            }
        }
        if (take < 0 || io_write(s, to, data, (size_t)take) < 0) {
            rc = -1;
            break;
        }
        *count += (uint64_t)take;
        if (data == from->buf)
            io_consume(from, (size_t)take);
        left -= kind == RF_BODY_LENGTH ? (uint64_t)take : 0;
        if ((kind == RF_BODY_LENGTH && left == 0) || (kind == RF_BODY_CHUNKED && ck.done))
            rc = 0;
    }
    free(chunk);
    return rc;
}

/* Read a head into c->buf with `parse` deciding when it is whole. */
static int read_head(session *s, io *c, bool head_req, rf_route_resp *resp)
{
    for (;;) {
        int rc = rf_route_parse_response(c->buf, c->len, head_req, resp);
        if (rc != 0)
            return rc;
        ssize_t n = io_read(s, c, c->buf + c->len, RF_ROUTE_HEAD_MAX - c->len);
        if (n <= 0)
            return -1;
        c->len += (size_t)n;
    }
}

/* The response: 1xx heads passed on, then the final head and its body.
 * 1: the connection may serve another request. */
static int relay_response(session *s, rf_route *r, bool head_req)
{
    rf_route_resp resp;
    for (;;) {
        if (up_buf(s) < 0 || read_head(s, &s->up, head_req, &resp) < 0) {
            refuse(s, r, 502, "ringfence: network: route %s: %s\n", r->name, "the upstream's response is malformed or missing");
            return -1;
        }
        if (resp.status == 101) {
            refuse(s, r, 502, "ringfence: network: route %s: %s\n", r->name, "the upstream switched protocols, unasked");
            return -1;
        }
        if (io_write(s, &s->client, s->up.buf, resp.head_len) < 0)
            return -1;
        s->received += resp.head_len;
        io_consume(&s->up, resp.head_len);
        if (resp.status >= 200) {
            s->status = resp.status;
            break;
        }
    }
    if (resp.body != RF_BODY_NONE && relay_body(s, &s->up, &s->client, resp.body, resp.length, &s->received) < 0)
        return -1;
    if (resp.close || resp.body == RF_BODY_CLOSE)
        up_close(s);
    else
        up_idle(s);
    return resp.body != RF_BODY_CLOSE;
}

static int forward(session *s, rf_route *r, const rf_route_req *q)
{
    char *why = NULL;
    if (up_open(s, r, &why) < 0) {
        refuse(s, r, 502, "ringfence: network: route %s: the upstream cannot be reached: %s\n", r->name,
               why ? why : "out of memory");
        free(why);
        return -1;
    }
    size_t hl = 0;
    bool head_req = q->method_len == 4 && !memcmp(q->method, "HEAD", 4);
    char *head = upstream_head(s, r, q, &hl);
    if (!head)
        return -1;
    int rc = io_write(s, &s->up, head, hl);
    explicit_bzero(head, hl);
    free(head);
    s->sent += hl;
    io_consume(&s->client, q->head_len);
    if (rc == 0 && q->expect_continue && !q->http10) /* 1.0 knows no 100 (RFC 9110 10.1.1) */
        rc = io_write(s, &s->client, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    if (rc == 0 && q->body != RF_BODY_NONE)
        rc = relay_body(s, &s->client, &s->up, q->body, q->length, &s->sent);
    if (rc < 0) {
        note(s, r, 2, NULL);
        return -1;
    }
    rc = relay_response(s, r, head_req); /* q points into consumed bytes now */
    if (q->http10)
        up_close(s); /* a 1.0 request asked for no keep-alive: the upstream may close at any time */
    if (rc >= 0)
        note(s, r, 0, NULL);
    return rc;
}

/* The client's read-ahead: freed between requests, back when the next
 * one's first bytes can be read. */
static int client_buf(session *s)
{
    if (s->client.buf)
        return 0;
    if (!wait_io(s, s->client.fd, POLLIN, IO_TIMEOUT_MS) || !(s->client.buf = malloc(RF_ROUTE_HEAD_MAX)))
        return -1;
    *s->client_buf = s->client.buf;
    return 0;
}

static void client_idle(session *s)
{
    if (s->client.len == 0) {
        free(s->client.buf);
        s->client.buf = *s->client_buf = NULL;
    }
}

/* The request's route.request record (net/audit.c): taken before it is
 * forwarded, since forwarding consumes the bytes q points into. */
typedef struct req_note {
    char route[RF_ROUTE_NAME_MAX + 1];
    char method[33];
    char *path; /* malloc'd */
    size_t path_len;
} req_note;

static int record(session *s, req_note *n)
{
    int rc = rf_net_audit_route(s->p, n->route, n->method, strlen(n->method), n->path ? n->path : "/",
                                n->path ? n->path_len : 1, s->status, s->sent, s->received);
    free(n->path);
    n->path = NULL;
    return rc;
}

static void note_request(req_note *n, const char *name, const rf_route_req *q)
{
    snprintf(n->route, sizeof n->route, "%s", name);
    size_t ml = q->method_len < sizeof n->method ? q->method_len : sizeof n->method - 1;
    memcpy(n->method, q->method ? q->method : "", q->method ? ml : 0);
    n->method[q->method ? ml : 0] = '\0';
    n->path_len = q->path_len;
    n->path = q->path_len ? strndup(q->path, q->path_len) : NULL;
}

/* One request. 1: keep going; else the connection ends. */
static int serve_one(session *s)
{
    rf_route_req q;
    int rc;
    if (client_buf(s) < 0)
        return -1;
    while ((rc = rf_route_parse_request(s->client.buf, s->client.len, &q)) == 0) {
        ssize_t n = io_read(s, &s->client, s->client.buf + s->client.len, RF_ROUTE_HEAD_MAX - s->client.len);
        if (n <= 0)
            return -1;
        s->client.len += (size_t)n;
    }
    char name[RF_ROUTE_NAME_MAX + 1] = "?", what[600];
    if (q.name_len && q.name_len <= RF_ROUTE_NAME_MAX)
        snprintf(name, sizeof name, "%.*s", (int)q.name_len, q.name);
    rf_route *r = q.name_len ? rf_route_find(&s->p->routes, q.name, q.name_len) : NULL;
    req_note note = { 0 };
    s->sent = s->received = 0;
    s->status = 0;
    if (rc < 0) {
        refuse(s, r, q.status, "ringfence: network: route %s: refused a request: %s\n", name, q.error);
        if (!r)
            rf_net_log(s->p, "ringfence: network: route: refused a malformed request\n");
        snprintf(note.route, sizeof note.route, "%s", name);
        snprintf(note.method, sizeof note.method, "?"); /* malformed: nothing of it is kept */
        (void)record(s, &note);
        return -1;
    }
    note_request(&note, name, &q);
    if (!r) {
        refuse(s, NULL, 404, "ringfence: network: route %s: no such route\n", name);
        (void)record(s, &note);
        return -1;
    }
    const char *reason = rf_route_check(r, q.method, q.method_len, q.path, q.path_len);
    if (reason) {
        snprintf(what, sizeof what, "%.*s %.*s", (int)q.method_len, q.method, (int)(q.path_len > 300 ? 300 : q.path_len),
                 q.path_len ? q.path : "/");
        refuse(s, r, 403, "ringfence: network: route %s: refused %s (not in the route's allow rules)\n", r->name,
               what);
        (void)record(s, &note);
        return -1;
    }
    rc = forward(s, r, &q) > 0 && q.keep_alive ? 1 : -1;
    /* A request whose record cannot be written ends the connection: no
     * further request goes through unrecorded. */
    if (record(s, &note) < 0)
        rc = -1;
    client_idle(s);
    return rc;
}

void rf_net_route_serve(rf_net_proxy *p, int fd, char **buf, size_t len)
{
    _Static_assert(RF_NET_HEAD_MAX >= RF_ROUTE_HEAD_MAX, "the handshake's buffer holds a route's head");
    session *s = calloc(1, sizeof *s);
    if (!s)
        return;
    s->p = p;
    s->client = (io){ .fd = fd, .buf = *buf, .len = len };
    s->client_buf = buf;
    s->up.fd = -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    while (!atomic_load(&p->stopping) && serve_one(s) > 0)
        ;
    up_close(s);
    free(s);
}
