/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What differs between the server's policy key and a request's, for the
 * refusal of a request made under another policy. "another policy" alone
 * leaves the user guessing between their options, their configuration
 * files and the directory they ran from; the setting's name ends that.
 * Both keys are the same user's (serve.c checks the peer first). */
#include "pool/keydiff.h"
#include "net/ask.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_NAMED 4
#define MAX_DEPTH 2 /* "limits.timeout", not deeper: arrays and maps are one setting */

typedef struct out {
    char *buf;
    size_t size, len;
    unsigned named;
} out;

__attribute__((format(printf, 2, 3))) static void put(out *o, const char *fmt, ...)
{
    if (o->len >= o->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    o->len = n < 0 ? o->size : o->len + (size_t)n;
}

/* The text goes to the client's terminal: a directory an agent named with
 * escape sequences, run from, must not reach it as they are. */
static void put_printable(out *o, const char *s)
{
    char shown[256];
    rf_ask_printable(shown, sizeof shown, s);
    put(o, "%s", *shown ? shown : "\"\"");
}

static void name(out *o, const char *prefix, const char *key, json_t *ours, json_t *theirs)
{
    if (o->named++ == MAX_NAMED) {
        put(o, ", ...");
        return;
    }
    if (o->named > MAX_NAMED)
        return;
    put(o, "%s", o->named > 1 ? ", " : "");
    if (*prefix) {
        put_printable(o, prefix);
        put(o, ".");
    }
    put_printable(o, key);
    /* The workspace is the usual cause, and its value says what to do. */
    if (!*prefix && !strcmp(key, "workspace") && json_is_string(ours) && json_is_string(theirs)) {
        put(o, " (the server's ");
        put_printable(o, json_string_value(ours));
        put(o, ", this request's ");
        put_printable(o, json_string_value(theirs));
        put(o, ")");
    }
}

static void walk(out *o, const char *prefix, json_t *ours, json_t *theirs, int depth)
{
    const char *key;
    json_t *a;
    json_object_foreach (ours, key, a) {
        json_t *b = json_object_get(theirs, key);
        if (b && json_equal(a, b))
            continue;
        if (b && json_is_object(a) && json_is_object(b) && depth < MAX_DEPTH) {
            char sub[128];
            snprintf(sub, sizeof sub, "%s%s%s", prefix, *prefix ? "." : "", key);
            walk(o, sub, a, b, depth + 1);
        } else {
            name(o, prefix, key, a, b);
        }
    }
    json_object_foreach (theirs, key, a)
        if (!json_object_get(ours, key))
            name(o, prefix, key, NULL, a);
}

size_t rf_pool_key_diff(const char *server_key, const char *request_key, char *buf, size_t size)
{
    if (size == 0)
        return 0;
    buf[0] = '\0';
    json_t *ours = json_loads(server_key, 0, NULL);
    json_t *theirs = json_loads(request_key, 0, NULL);
    out o = { .buf = buf, .size = size };
    if (json_is_object(ours) && json_is_object(theirs))
        walk(&o, "", ours, theirs, 1);
    json_decref(ours);
    json_decref(theirs);
    return o.named;
}
