/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A credential route's HTTP parsers (net/route_http.c) on hostile bytes:
 * the request head, the response head and the chunked-body decoder never
 * read out of bounds; an accepted request head lies inside the input, its
 * framing is one of the known kinds, its path is one the rules can trust,
 * and each forwarded field is a whole line of the head without a framing
 * field. The first byte picks the parser. */
#include "net/route.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The field f (fl bytes, not NUL-terminated) starts with name. Never reads
 * past the field: libFuzzer's strncasecmp hook reads all n bytes, and a
 * field at the end of the input would take it out of bounds. */
static bool field_is(const char *f, size_t fl, const char *name)
{
    size_t n = strlen(name);
    return fl >= n && !strncasecmp(f, name, n);
}

static void check_request(const char *buf, size_t len, const rf_route_req *q)
{
    if (q->head_len > len || q->head_len > RF_ROUTE_HEAD_MAX || q->n_fields > RF_ROUTE_FIELDS_MAX)
        abort();
    if (q->body == RF_BODY_CLOSE || (q->body == RF_BODY_LENGTH && q->length == 0))
        abort(); /* a request is never read until close */
    if (q->name < buf || q->path + q->path_len > buf + q->head_len || q->name_len == 0)
        abort();
    size_t qless = strcspn(q->path, "? ");
    if (!rf_route_path_safe(q->path, qless < q->path_len ? qless : q->path_len))
        abort();
    for (size_t i = 0; i < q->n_fields; i++) {
        const char *f = q->fields[i];
        size_t fl = q->field_len[i];
        if (f < buf || f + fl > buf + q->head_len || fl < 2 || f[fl - 2] != '\r' || f[fl - 1] != '\n')
            abort();
        if (memchr(f, '\n', fl - 1) || field_is(f, fl, "content-length:") || field_is(f, fl, "transfer-encoding:") ||
            field_is(f, fl, "host:"))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *buf = malloc(size); /* exactly the input: ASan sees any overread */
    if (!buf)
        return 0;
    size_t len = size - 1;
    memcpy(buf, data + 1, len);
    if (data[0] % 3 == 0) {
        rf_route_req q;
        if (rf_route_parse_request(buf, len, &q) == 1)
            check_request(buf, len, &q);
    } else if (data[0] % 3 == 1) {
        rf_route_resp r;
        if (rf_route_parse_response(buf, len, data[0] & 8, &r) == 1 && r.head_len > len)
            abort();
    } else {
        rf_chunked c = { 0 };
        size_t at = 0;
        /* fed in pieces, as the network delivers it */
        while (at < len && !c.done) {
            size_t piece = 1 + (size_t)(unsigned char)buf[at] % 7;
            if (piece > len - at)
                piece = len - at;
            ssize_t n = rf_chunked_feed(&c, buf + at, piece);
            if (n < 0)
                break;
            if ((size_t)n > piece || ((size_t)n < piece && !c.done))
                abort();
            at += (size_t)n;
        }
    }
    free(buf);
    return 0;
}
