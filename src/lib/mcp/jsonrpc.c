/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* JSON-RPC 2.0 as MCP uses it over stdio: one JSON text per line, requests
 * with a string or integer id, notifications without one. Everything the
 * client sends is untrusted: this file only classifies, it never trusts a
 * field before checking its type, and it bounds what it keeps. */
#include "mcp/mcp.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void invalid(rf_mcp_msg *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void invalid(rf_mcp_msg *m, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->error, sizeof m->error, fmt, ap);
    va_end(ap);
    m->kind = RF_MCP_MSG_INVALID;
    m->error_code = code;
    m->method = NULL;
    m->params = NULL;
}

/* MCP: "Requests MUST include a string or integer ID", never null. */
static bool usable_id(json_t *id)
{
    if (json_is_integer(id))
        return true;
    return json_is_string(id) && json_string_length(id) <= RF_MCP_MAX_ID_LEN;
}

void rf_mcp_msg_classify(json_t *value, rf_mcp_msg *m)
{
    memset(m, 0, sizeof *m);
    m->root = json_incref(value);
    if (json_is_array(value)) {
        m->kind = RF_MCP_MSG_BATCH;
        return;
    }
    if (!json_is_object(value))
        return invalid(m, RF_JSONRPC_INVALID_REQUEST, "a message must be a JSON object");
    json_t *id = json_object_get(value, "id");
    if (id && usable_id(id))
        m->id = id; /* known early, so even an invalid request is answered with it */
    json_t *version = json_object_get(value, "jsonrpc");
    if (!json_is_string(version) || strcmp(json_string_value(version), "2.0"))
        return invalid(m, RF_JSONRPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
    json_t *method = json_object_get(value, "method");
    if (!method) {
        if (json_object_get(value, "result") || json_object_get(value, "error")) {
            m->kind = RF_MCP_MSG_RESPONSE;
            return;
        }
        return invalid(m, RF_JSONRPC_INVALID_REQUEST, "missing \"method\"");
    }
    if (!json_is_string(method) || json_string_length(method) == 0)
        return invalid(m, RF_JSONRPC_INVALID_REQUEST, "\"method\" must be a non-empty string");
    if (id && !m->id)
        return invalid(m, RF_JSONRPC_INVALID_REQUEST,
                       "\"id\" must be a string (at most %d bytes) or an integer", RF_MCP_MAX_ID_LEN);
    json_t *params = json_object_get(value, "params");
    if (params && !json_is_object(params) && !json_is_array(params))
        return invalid(m, RF_JSONRPC_INVALID_REQUEST, "\"params\" must be an object");
    m->method = json_string_value(method);
    m->params = params;
    m->kind = id ? RF_MCP_MSG_REQUEST : RF_MCP_MSG_NOTIFICATION;
}

void rf_mcp_msg_parse(const char *buf, size_t len, rf_mcp_msg *m)
{
    json_error_t jerr;
    /* Duplicate keys are refused: two "id"s or two "method"s would make the
     * message mean different things to different readers. */
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!root) {
        memset(m, 0, sizeof *m);
        return invalid(m, RF_JSONRPC_PARSE_ERROR, "parse error at column %d: %s", jerr.column, jerr.text);
    }
    rf_mcp_msg_classify(root, m);
    json_decref(root);
}

void rf_mcp_msg_clear(rf_mcp_msg *m)
{
    json_decref(m->root);
    memset(m, 0, sizeof *m);
}

json_t *rf_mcp_response(json_t *id, json_t *result)
{
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
                     result ? result : json_object());
}

json_t *rf_mcp_error(json_t *id, int code, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    /* The text may quote client input that is not valid UTF-8. */
    char *clean = rf_mcp_utf8_sanitize(text, strlen(text), NULL);
    json_t *msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
                            "code", code, "message", clean ? clean : "error");
    free(clean);
    return msg;
}

/* ── Line splitting ──────────────────────────────────────────────────── */

int rf_mcp_lines_init(rf_mcp_lines *l, size_t max)
{
    memset(l, 0, sizeof *l);
    l->max = max;
    l->cap = max < 65536 ? max + 1 : 65536;
    l->buf = malloc(l->cap);
    return l->buf ? 0 : -1;
}

void rf_mcp_lines_free(rf_mcp_lines *l)
{
    free(l->buf);
    memset(l, 0, sizeof *l);
}

static bool lines_grow(rf_mcp_lines *l, size_t need)
{
    if (need <= l->cap)
        return true;
    size_t cap = l->cap;
    while (cap < need)
        cap *= 2;
    if (cap > l->max + 1)
        cap = l->max + 1;
    char *b = realloc(l->buf, cap);
    if (!b)
        return false;
    l->buf = b;
    l->cap = cap;
    return true;
}

rf_mcp_line_result rf_mcp_lines_feed(rf_mcp_lines *l, const char *data, size_t n, size_t *consumed,
                                     const char **line, size_t *len)
{
    const char *nl = memchr(data, '\n', n);
    size_t take = nl ? (size_t)(nl - data) : n;
    *consumed = nl ? take + 1 : n;
    if (l->discarding) {
        if (nl) {
            l->discarding = false;
            l->len = 0;
            return RF_MCP_LINE_TOO_LONG;
        }
        return RF_MCP_LINE_NONE;
    }
    if (l->len + take > l->max || !lines_grow(l, l->len + take + 1)) {
        /* Over the limit (or out of memory): drop the rest of this line. */
        l->len = 0;
        if (nl)
            return RF_MCP_LINE_TOO_LONG;
        l->discarding = true;
        return RF_MCP_LINE_NONE;
    }
    memcpy(l->buf + l->len, data, take);
    l->len += take;
    if (!nl)
        return RF_MCP_LINE_NONE;
    size_t out = l->len;
    if (out > 0 && l->buf[out - 1] == '\r') /* tolerate CRLF senders */
        out--;
    l->buf[out] = '\0';
    l->len = 0;
    *line = l->buf;
    *len = out;
    return RF_MCP_LINE_OK;
}

/* ── UTF-8 ───────────────────────────────────────────────────────────── */

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

char *rf_mcp_utf8_sanitize(const char *buf, size_t len, size_t *out_len)
{
    /* Worst case every byte becomes the 3-byte U+FFFD. */
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    const unsigned char *s = (const unsigned char *)buf;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(s + i, len - i);
        if (k == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, s + i, k);
        o += k;
        i += k;
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}
