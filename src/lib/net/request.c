/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The first bytes of a client connection: an HTTP proxy request head, or a
 * SOCKS5 greeting and request. Pure functions on a buffer (no I/O), so the
 * fuzzer can drive them (fuzz/fuzz-net-request.c). Everything not
 * understood is refused: the proxy never guesses where bytes should go. */
#include "net/net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void rf_net_request_clear(rf_net_request *r)
{
    free(r->forward);
    memset(r, 0, sizeof *r);
}

static rf_net_parse_result bad(rf_net_request *out, int status, const char *why)
{
    out->http_status = status;
    out->error = why;
    return RF_NET_PARSE_BAD;
}

/* Copy a host name or IP literal, lower-cased, checking its characters
 * (the same alphabet as the rules; '%' zone ids are refused). */
static int take_host(const char *s, size_t len, char *dst)
{
    if (len == 0 || len > RF_NET_NAME_MAX)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c != '-' && c != '.' && c != '_' && c != ':')
            return -1;
        dst[i] = (char)tolower(c);
    }
    dst[len] = '\0';
    if (len > 1 && dst[len - 1] == '.')
        dst[len - 1] = '\0';
    return 0;
}

/* "host:port", "[v6]:port", or (default_port != 0) either without a port. */
static int parse_authority(const char *s, size_t len, uint16_t default_port, rf_net_request *out)
{
    const char *host = s, *port = NULL;
    size_t hlen = len;
    if (len && s[0] == '[') {
        const char *end = memchr(s, ']', len);
        if (!end)
            return -1;
        host = s + 1;
        hlen = (size_t)(end - host);
        if ((size_t)(end + 1 - s) < len) {
            if (end[1] != ':')
                return -1;
            port = end + 2;
        }
        if (!memchr(host, ':', hlen))
            return -1; /* brackets are for v6 literals only */
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon) {
            hlen = (size_t)(colon - s);
            port = colon + 1;
        }
        if (memchr(host, ':', hlen))
            return -1;
    }
    if (take_host(host, hlen, out->host) < 0)
        return -1;
    if (port)
        return rf_net_parse_port(port, len - (size_t)(port - s), &out->port);
    if (!default_port)
        return -1;
    out->port = default_port;
    return 0;
}

/* A header the upstream must not see: the proxy's own (credentials) and
 * the connection's, which the proxy sets itself. */
static bool hop_header(const char *line, size_t len)
{
    return (len >= 6 && !strncasecmp(line, "proxy-", 6)) || (len >= 11 && !strncasecmp(line, "connection:", 11)) ||
           (len >= 11 && !strncasecmp(line, "keep-alive:", 11));
}

static const char close_header[] = "Connection: close\r\n";

/* METHOD http://authority[/path] VERSION: the head is rewritten with the
 * origin-form target, without Proxy-* headers, and with "Connection:
 * close": the client's connection to the proxy is tied to this one
 * upstream, so a second request (maybe for another host) must come on a
 * new connection, where it is checked again. */
static rf_net_parse_result parse_forward(const char *buf, size_t head_len, const char *target, size_t tlen,
                                         const char *line_end, rf_net_request *out)
{
    if (tlen < 7 || strncasecmp(target, "http://", 7))
        return bad(out, 400, "only http:// URLs can be forwarded; use CONNECT for https");
    const char *auth = target + 7, *end = target + tlen;
    const char *path = auth;
    while (path < end && *path != '/' && *path != '?')
        path++;
    const char *at = memchr(auth, '@', (size_t)(path - auth));
    if (at)
        return bad(out, 400, "credentials in the URL are not forwarded");
    if (parse_authority(auth, (size_t)(path - auth), 80, out) < 0)
        return bad(out, 400, "bad host or port in the URL");
    const char *method_end = memchr(buf, ' ', (size_t)(line_end - buf));
    out->forward = malloc(head_len + 2 + sizeof close_header);
    if (!out->forward)
        return bad(out, 500, "out of memory");
    char *w = out->forward;
    size_t mlen = (size_t)(method_end - buf) + 1;
    memcpy(w, buf, mlen);
    w += mlen;
    if (path == end || *path == '?')
        *w++ = '/';
    memcpy(w, path, (size_t)(end - path));
    w += end - path;
    memcpy(w, target + tlen, (size_t)(line_end - (target + tlen)));
    w += line_end - (target + tlen);
    /* Header lines: each ends with \r\n; the last one is the empty line. */
    for (const char *l = line_end; l < buf + head_len;) {
        const char *nl = memchr(l, '\n', (size_t)(buf + head_len - l));
        size_t ll = (size_t)(nl - l) + 1;
        if (ll == 2) { /* the empty line: our header goes just before it */
            memcpy(w, close_header, sizeof close_header - 1);
            w += sizeof close_header - 1;
        }
        if (!hop_header(l, ll)) {
            memcpy(w, l, ll);
            w += ll;
        }
        l += ll;
    }
    out->forward_len = (size_t)(w - out->forward);
    out->kind = RF_NET_HTTP_FORWARD;
    out->consumed = head_len;
    return RF_NET_PARSE_OK;
}

/* The head ends at the first empty line; bare \n line ends are refused
 * (request smuggling lives in such differences). */
static size_t head_length(const char *buf, size_t len)
{
    for (size_t i = 3; i < len; i++)
        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
            return i + 1;
    return 0;
}

rf_net_parse_result rf_net_parse_http(const char *buf, size_t len, rf_net_request *out)
{
    memset(out, 0, sizeof *out);
    /* A bare LF is refused as soon as it arrives: such a head would never
     * end with CRLF CRLF, and the client would wait for the deadline. */
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
            return bad(out, 400, "bare LF in the request head");
    size_t head = head_length(buf, len);
    if (!head)
        return len >= RF_NET_HEAD_MAX ? bad(out, 431, "request head too large") : RF_NET_PARSE_MORE;
    if (memchr(buf, '\0', head))
        return bad(out, 400, "NUL byte in the request head");
    const char *line_end = memchr(buf, '\n', head) + 1;
    const char *sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
    if (!sp1 || sp1 == buf)
        return bad(out, 400, "malformed request line");
    const char *target = sp1 + 1;
    const char *sp2 = memchr(target, ' ', (size_t)(line_end - target));
    if (!sp2 || sp2 == target || (size_t)(line_end - sp2) < 10 || strncmp(sp2 + 1, "HTTP/1.", 7))
        return bad(out, 400, "malformed request line");
    for (const char *c = buf; c < sp1; c++)
        if (!isupper((unsigned char)*c))
            return bad(out, 400, "malformed method");
    size_t tlen = (size_t)(sp2 - target);
    if ((size_t)(sp1 - buf) == 7 && !strncmp(buf, "CONNECT", 7)) {
        if (parse_authority(target, tlen, 0, out) < 0)
            return bad(out, 400, "CONNECT needs host:port");
        out->kind = RF_NET_HTTP_CONNECT;
        out->consumed = head;
        return RF_NET_PARSE_OK;
    }
    return parse_forward(buf, head, target, tlen, line_end, out);
}

rf_net_parse_result rf_net_parse_socks_greeting(const unsigned char *buf, size_t len, size_t *consumed,
                                                bool *no_auth)
{
    if (len < 2)
        return RF_NET_PARSE_MORE;
    if (buf[0] != 5 || buf[1] == 0)
        return RF_NET_PARSE_BAD;
    size_t need = 2 + (size_t)buf[1];
    if (len < need)
        return RF_NET_PARSE_MORE;
    *no_auth = memchr(buf + 2, 0, buf[1]) != NULL;
    *consumed = need;
    return RF_NET_PARSE_OK;
}

/* VER CMD RSV ATYP ADDR PORT. *socks_reply: the SOCKS error code to send
 * when the request is refused at parse time (7: command not supported, 8:
 * address type not supported, 1: general failure). */
rf_net_parse_result rf_net_parse_socks_request(const unsigned char *buf, size_t len, rf_net_request *out,
                                               int *socks_reply)
{
    memset(out, 0, sizeof *out);
    *socks_reply = 1;
    if (len < 5)
        return RF_NET_PARSE_MORE;
    if (buf[0] != 5 || buf[2] != 0)
        return bad(out, 400, "not a SOCKS5 request");
    size_t addr_len;
    switch (buf[3]) {
    case 1: addr_len = 4; break;
    case 3: addr_len = 1 + (size_t)buf[4]; break;
    case 4: addr_len = 16; break;
    default: *socks_reply = 8; return bad(out, 400, "SOCKS5 address type not supported");
    }
    if (len < 4 + addr_len + 2)
        return RF_NET_PARSE_MORE;
    if (buf[1] != 1) {
        *socks_reply = 7;
        return bad(out, 400, "only SOCKS5 CONNECT is supported");
    }
    const unsigned char *a = buf + 4;
    if (buf[3] == 3) {
        if (buf[4] == 0 || take_host((const char *)a + 1, buf[4], out->host) < 0 || strchr(out->host, ':'))
            return bad(out, 400, "bad SOCKS5 host name");
    } else if (!inet_ntop(buf[3] == 1 ? AF_INET : AF_INET6, a, out->host, sizeof out->host)) {
        return bad(out, 400, "bad SOCKS5 address");
    }
    out->port = (uint16_t)(buf[4 + addr_len] << 8 | buf[4 + addr_len + 1]);
    if (out->port == 0)
        return bad(out, 400, "SOCKS5 port 0");
    out->kind = RF_NET_SOCKS5;
    out->consumed = 4 + addr_len + 2;
    return RF_NET_PARSE_OK;
}
