/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* HTTP/1.1 as a credential route sees it: the request head from the
 * sandbox, the response head from the upstream, and the end of a chunked
 * body. Pure functions on buffers (fuzz/fuzz-route-request.c). The request
 * side is strict on purpose: the proxy and the upstream must agree on
 * where each request ends, or a request the rules never saw could ride
 * inside another one's body (request smuggling). So anything two parsers
 * could read differently is refused: Content-Length with
 * Transfer-Encoding, two Content-Lengths, a transfer coding other than
 * chunked, obs-fold, bare LF, NUL and other control bytes, space before
 * the colon, and heads beyond 16 KiB or 100 fields. */
#include "net/route.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

static int bad(rf_route_req *out, int status, const char *why)
{
    out->status = status;
    out->error = why;
    return -1;
}

static bool is_tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool name_is(const char *line, size_t nlen, const char *name)
{
    return nlen == strlen(name) && !strncasecmp(line, name, nlen);
}

/* Decimal, digits only, at most 18 of them (no overflow, no sign). */
static int parse_length(const char *v, size_t len, uint64_t *out)
{
    if (len == 0 || len > 18)
        return -1;
    uint64_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)v[i]))
            return -1;
        n = n * 10 + (uint64_t)(v[i] - '0');
    }
    *out = n;
    return 0;
}

/* Does a comma-separated field value list `token` (case-insensitive)? */
static bool lists(const char *v, size_t len, const char *token)
{
    size_t tl = strlen(token);
    for (size_t i = 0; i < len;) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < len && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && !strncasecmp(v + s, token, tl))
            return true;
    }
    return false;
}

/* Fields the proxy never forwards: the connection's own (it manages both
 * connections itself), Host (the upstream's), Expect (answered here),
 * the framing (re-sent from what was parsed), and proxy credentials. */
static bool dropped_field(const char *line, size_t nlen)
{
    static const char *const names[] = { "host", "connection", "keep-alive", "proxy-connection",
                                         "proxy-authorization", "te", "trailer", "upgrade", "expect",
                                         "content-length", "transfer-encoding", NULL };
    for (size_t i = 0; names[i]; i++)
        if (name_is(line, nlen, names[i]))
            return true;
    return false;
}

typedef struct framing {
    int n_cl, n_te;
    bool chunked, close, keep_alive, http10;
} framing;

/* One field line (without CRLF): checks, framing, and whether to keep it. */
static int take_field(const char *l, size_t ll, framing *f, rf_route_req *out)
{
    if (ll && (l[0] == ' ' || l[0] == '\t'))
        return bad(out, 400, "obs-fold (a header line continued on the next) is refused");
    const char *colon = memchr(l, ':', ll);
    if (!colon || colon == l)
        return bad(out, 400, "malformed header line");
    size_t nlen = (size_t)(colon - l);
    for (size_t i = 0; i < nlen; i++)
        if (!is_tchar((unsigned char)l[i]))
            return bad(out, 400, "malformed header name (space before the colon?)");
    const char *v = colon + 1, *end = l + ll;
    for (const char *c = v; c < end; c++)
        if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
            return bad(out, 400, "control character in a header value");
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
    if (name_is(l, nlen, "content-length")) {
        if (++f->n_cl > 1 || parse_length(v, vlen, &out->length) < 0)
            return bad(out, 400, f->n_cl > 1 ? "more than one Content-Length" : "malformed Content-Length");
    } else if (name_is(l, nlen, "transfer-encoding")) {
        if (++f->n_te > 1 || vlen != 7 || strncasecmp(v, "chunked", 7))
            return bad(out, 400, "only one Transfer-Encoding, and only chunked, is accepted");
        f->chunked = true;
    } else if (name_is(l, nlen, "connection")) {
        f->close |= lists(v, vlen, "close");
        f->keep_alive |= lists(v, vlen, "keep-alive");
        if (lists(v, vlen, "upgrade"))
            return bad(out, 400, "protocol upgrades (WebSocket) do not go through a route");
    } else if (name_is(l, nlen, "expect")) {
        if (vlen != 12 || strncasecmp(v, "100-continue", 12))
            return bad(out, 417, "only Expect: 100-continue is understood");
        out->expect_continue = true;
    }
    if (dropped_field(l, nlen))
        return 0;
    if (out->n_fields >= RF_ROUTE_FIELDS_MAX)
        return bad(out, 431, "more than 100 header fields");
    out->fields[out->n_fields] = l;
    out->field_len[out->n_fields++] = ll + 2;
    return 0;
}

static size_t head_end(const char *buf, size_t len)
{
    for (size_t i = 3; i < len; i++)
        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
            return i + 1;
    return 0;
}

/* METHOD SP /route/NAME[/path][?query] SP HTTP/1.x */
static int take_request_line(const char *l, size_t ll, framing *f, rf_route_req *out)
{
    const char *sp1 = memchr(l, ' ', ll);
    if (!sp1 || sp1 == l)
        return bad(out, 400, "malformed request line");
    for (const char *c = l; c < sp1; c++)
        if (!isupper((unsigned char)*c))
            return bad(out, 400, "malformed method");
    const char *t = sp1 + 1, *end = l + ll;
    const char *sp2 = memchr(t, ' ', (size_t)(end - t));
    if (!sp2 || end - sp2 != 9 || strncmp(sp2 + 1, "HTTP/1.", 7) || (sp2[8] != '0' && sp2[8] != '1'))
        return bad(out, 400, "malformed request line");
    f->http10 = sp2[8] == '0';
    size_t plen = strlen(RF_ROUTE_PATH), tlen = (size_t)(sp2 - t);
    if (tlen <= plen || strncmp(t, RF_ROUTE_PATH, plen))
        return bad(out, 404, "not a route: the proxy serves /route/NAME/... (or use it as an HTTP proxy)");
    for (const char *c = t; c < sp2; c++)
        if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f || *c == '#')
            return bad(out, 400, "malformed request target");
    out->method = l;
    out->method_len = (size_t)(sp1 - l);
    out->name = t + plen;
    out->name_len = strcspn(out->name, "/? ");
    if (out->name_len == 0 || out->name_len > RF_ROUTE_NAME_MAX)
        return bad(out, 404, "no such route");
    out->path = out->name + out->name_len;
    out->path_len = (size_t)(sp2 - out->path);
    size_t qless = strcspn(out->path, "? ");
    if (qless > out->path_len)
        qless = out->path_len;
    if (!rf_route_path_safe(out->path, qless))
        return bad(out, 400, "the path has a dot segment, an encoded '.', '/' or '\\', or '//'");
    return 0;
}

int rf_route_parse_request(const char *buf, size_t len, rf_route_req *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len && i < RF_ROUTE_HEAD_MAX; i++) {
        if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
            return bad(out, 400, "bare LF in the request head");
        if (buf[i] == '\0')
            return bad(out, 400, "NUL byte in the request head");
    }
    size_t head = head_end(buf, len < RF_ROUTE_HEAD_MAX ? len : RF_ROUTE_HEAD_MAX);
    if (!head)
        return len >= RF_ROUTE_HEAD_MAX ? bad(out, 431, "request head larger than 16 KiB") : 0;
    framing f = { 0 };
    const char *l = buf;
    const char *nl = memchr(l, '\n', head);
    if (take_request_line(l, (size_t)(nl - 1 - l), &f, out) < 0)
        return -1;
    for (l = nl + 1; l < buf + head - 2; l = nl + 1) {
        nl = memchr(l, '\n', (size_t)(buf + head - l));
        if (take_field(l, (size_t)(nl - 1 - l), &f, out) < 0)
            return -1;
    }
    if (f.n_cl && f.n_te)
        return bad(out, 400, "Content-Length with Transfer-Encoding is refused (request smuggling)");
    /* HTTP/1.0 has no chunked coding: an upstream may frame the body
     * otherwise than we do (RFC 9112 6.1). */
    if (f.http10 && f.n_te)
        return bad(out, 400, "Transfer-Encoding in an HTTP/1.0 request is refused (request smuggling)");
    out->body = f.chunked ? RF_BODY_CHUNKED : f.n_cl && out->length ? RF_BODY_LENGTH : RF_BODY_NONE;
    out->has_length = f.n_cl == 1;
    out->keep_alive = !f.close && (!f.http10 || f.keep_alive);
    out->http10 = f.http10;
    out->head_len = head;
    return 1;
}

/* Upstreams decode %2e and %2f differently, and a '..' a glob allowed
 * could climb out of the allowed prefix: refuse what is ambiguous. */
bool rf_route_path_safe(const char *path, size_t len)
{
    if (len && path[0] != '/')
        return false;
    for (size_t i = 0; i < len; i++) {
        if (path[i] == '\\')
            return false;
        if (path[i] == '%' && i + 2 < len) {
            char a = path[i + 1], b = (char)tolower((unsigned char)path[i + 2]);
            if ((a == '2' && (b == 'e' || b == 'f')) || (a == '5' && b == 'c'))
                return false;
        }
        if (path[i] != '/')
            continue;
        if (i + 1 < len && path[i + 1] == '/')
            return false;
        size_t seg = i + 1;
        size_t e = seg;
        while (e < len && path[e] != '/')
            e++;
        if ((e - seg == 1 && path[seg] == '.') || (e - seg == 2 && path[seg] == '.' && path[seg + 1] == '.'))
            return false;
    }
    return true;
}

/* HTTP/1.x NNN ...: the framing of the body that follows (RFC 9112 6.3). */
int rf_route_parse_response(const char *buf, size_t len, bool head_request, rf_route_resp *out)
{
    memset(out, 0, sizeof *out);
    size_t head = head_end(buf, len < RF_ROUTE_HEAD_MAX ? len : RF_ROUTE_HEAD_MAX);
    if (!head)
        return len >= RF_ROUTE_HEAD_MAX || memchr(buf, '\0', len) ? -1 : 0;
    if (head < 14 || strncmp(buf, "HTTP/1.", 7) || buf[8] != ' ' || !isdigit((unsigned char)buf[9]) ||
        !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]))
        return -1;
    out->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
    out->close = buf[7] == '0';
    bool chunked = false, has_cl = false;
    for (const char *l = memchr(buf, '\n', head) + 1; l < buf + head - 2;) {
        const char *nl = memchr(l, '\n', (size_t)(buf + head - l));
        size_t ll = (size_t)(nl - l) - (nl > l && nl[-1] == '\r');
        const char *colon = memchr(l, ':', ll);
        if (colon) {
            size_t nlen = (size_t)(colon - l);
            const char *v = colon + 1, *end = l + ll;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
            if (name_is(l, nlen, "transfer-encoding"))
                chunked = lists(v, (size_t)(end - v), "chunked");
            else if (name_is(l, nlen, "content-length") &&
                     (has_cl || parse_length(v, (size_t)(end - v), &out->length) < 0))
                return -1; /* two lengths, or a bad one: where does it end? */
            else if (name_is(l, nlen, "connection") && lists(v, (size_t)(end - v), "close"))
                out->close = true;
            has_cl |= name_is(l, nlen, "content-length");
        }
        l = nl + 1;
    }
    if (head_request || out->status / 100 == 1 || out->status == 204 || out->status == 304)
        out->body = RF_BODY_NONE;
    else if (chunked)
        out->body = RF_BODY_CHUNKED;
    else if (has_cl)
        out->body = out->length ? RF_BODY_LENGTH : RF_BODY_NONE;
    else
        out->body = RF_BODY_CLOSE;
    out->head_len = head;
    return 1;
}

enum { CK_SIZE, CK_EXT, CK_SIZE_LF, CK_DATA, CK_DATA_CR, CK_DATA_LF, CK_TRAILER, CK_TRAILER_LF };

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10
                                                                             : -1;
}

/* One byte of framing (not chunk data). 0: fine; -1: malformed. */
static int chunk_byte(rf_chunked *c, char b)
{
    if (++c->line > 4096)
        return -1; /* a size line or a trailer without end */
    switch (c->state) {
    case CK_SIZE:
        if (hexval(b) >= 0) {
            if (++c->digits > 15)
                return -1;
            c->left = c->left * 16 + (uint64_t)hexval(b);
            return 0;
        }
        if (!c->digits)
            return -1;
        c->state = b == '\r' ? CK_SIZE_LF : b == ';' ? CK_EXT : -1;
        return c->state < 0 ? -1 : 0;
    case CK_EXT:
        if (b == '\r')
            c->state = CK_SIZE_LF;
        return b == '\n' || b == '\0' ? -1 : 0;
    case CK_SIZE_LF:
        if (b != '\n')
            return -1;
        c->line = 0;
        c->state = c->left ? CK_DATA : CK_TRAILER;
        return 0;
    case CK_DATA_CR:
        c->state = CK_DATA_LF;
        return b == '\r' ? 0 : -1;
    case CK_DATA_LF:
        c->state = CK_SIZE;
        c->line = c->digits = 0;
        c->left = 0;
        return b == '\n' ? 0 : -1;
    case CK_TRAILER:
        if (b == '\r') {
            c->state = CK_TRAILER_LF;
            return 0;
        }
        return b == '\n' || b == '\0' ? -1 : 0;
    case CK_TRAILER_LF:
        if (b != '\n')
            return -1;
        if (c->line == 2)
            c->done = true; /* an empty line: the end */
        c->line = 0;
        c->state = CK_TRAILER;
        return 0;
    }
    return -1;
}

ssize_t rf_chunked_feed(rf_chunked *c, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && !c->done) {
        if (c->state == CK_DATA) {
            uint64_t take = c->left < len - i ? c->left : len - i;
            i += take;
            c->left -= take;
            if (!c->left)
                c->state = CK_DATA_CR;
            continue;
        }
        if (chunk_byte(c, buf[i++]) < 0)
            return -1;
    }
    return (ssize_t)i;
}
