/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Brace expansion, as the shell does it before anything else: `{rm,-rf,x}`
 * runs `rm -rf x`, and `r{m,} -rf x` runs `rm r -rf x`. Only unquoted
 * braces with a comma at their top level expand (`mask[i]` is 0 for an
 * unquoted byte); `{a..z}` sequences are left alone: they spell no program
 * name that the letters themselves do not. The number of words is bounded,
 * and going past the bound is an error, never a silent cut. */
#include "guard/guard.h"

#include <stdlib.h>
#include <string.h>

typedef struct expansion {
    rf_gwords *out;
    size_t max;
    bool over;
} expansion;

/* The first expandable brace: *open, *close and the top-level commas. */
static bool find_brace(const char *t, const char *mask, size_t len, size_t *open, size_t *close)
{
    for (size_t o = 0; o < len; o++) {
        if (t[o] != '{' || mask[o])
            continue;
        int depth = 0;
        bool comma = false;
        for (size_t i = o + 1; i < len; i++) {
            if (mask[i])
                continue;
            if (t[i] == '{') {
                depth++;
            } else if (t[i] == '}' && depth > 0) {
                depth--;
            } else if (t[i] == '}') {
                if (!comma)
                    break;
                *open = o, *close = i;
                return true;
            } else if (t[i] == ',' && depth == 0) {
                comma = true;
            }
        }
    }
    return false;
}

static int expand(expansion *e, const char *t, const char *mask, size_t len, int depth)
{
    size_t open, close;
    if (e->over)
        return 0;
    if (depth > RF_GUARD_MAX_DEPTH) {
        e->over = true;
        return 0;
    }
    if (!find_brace(t, mask, len, &open, &close)) {
        if (e->out->n >= e->max) {
            e->over = true;
            return 0;
        }
        char *w = strndup(t, len);
        int r = w ? rf_guard_words_push(e->out, w) : -1;
        free(w);
        return r;
    }
    char *nt = malloc(len), *nm = malloc(len);
    int r = nt && nm ? 0 : -1, level = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; r == 0 && i <= close; i++) {
        bool end = i == close;
        if (!end && !mask[i] && (t[i] == '{' || t[i] == '}')) {
            level += t[i] == '{' ? 1 : -1;
            continue;
        }
        if (!end && (t[i] != ',' || mask[i] || level != 0))
            continue;
        /* prefix + alternative t[start..i) + suffix */
        size_t n = open, alt = i - start, tail = len - close - 1;
        memcpy(nt, t, open);
        memcpy(nm, mask, open);
        memcpy(nt + n, t + start, alt);
        memcpy(nm + n, mask + start, alt);
        memcpy(nt + n + alt, t + close + 1, tail);
        memcpy(nm + n + alt, mask + close + 1, tail);
        r = expand(e, nt, nm, n + alt + tail, depth + 1);
        start = i + 1;
    }
    free(nt);
    free(nm);
    return r;
}

int rf_guard_brace_expand(const char *text, const char *mask, size_t len, rf_gwords *out, bool *over)
{
    expansion e = { .out = out, .max = RF_GUARD_MAX_BRACE_WORDS };
    int r = expand(&e, text, mask, len, 0);
    *over = e.over;
    return r;
}
