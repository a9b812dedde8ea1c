/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A growing string for building normalised words and match subjects. An
 * allocation failure is remembered in `failed` instead of being checked at
 * every append; the caller checks once when it takes the string. */
#include "guard/guard.h"

#include <stdlib.h>
#include <string.h>

static bool reserve(rf_gbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 32;
    while (cap < need)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void rf_guard_buf_add(rf_gbuf *b, const char *p, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void rf_guard_buf_addc(rf_gbuf *b, char c)
{
    if (!b->failed && b->len + 2 <= b->cap) { /* the common case: room for c and the NUL */
        b->s[b->len++] = c;
        b->s[b->len] = '\0';
        return;
    }
    rf_guard_buf_add(b, &c, 1);
}

void rf_guard_buf_fill(rf_gbuf *b, char c, size_t n)
{
    if (!reserve(b, n))
        return;
    memset(b->s + b->len, c, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void rf_guard_buf_adds(rf_gbuf *b, const char *s)
{
    rf_guard_buf_add(b, s, strlen(s));
}

char *rf_guard_buf_steal(rf_gbuf *b)
{
    if (!b->failed && !b->s)
        reserve(b, 0);
    if (b->failed) {
        rf_guard_buf_free(b);
        return NULL;
    }
    b->s[b->len] = '\0';
    char *s = b->s;
    *b = (rf_gbuf){ 0 };
    return s;
}

/* Empty, keeping the memory. A failure was already seen by the caller. */
void rf_guard_buf_reset(rf_gbuf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->s)
        b->s[0] = '\0';
}

void rf_guard_buf_free(rf_gbuf *b)
{
    free(b->s);
    *b = (rf_gbuf){ 0 };
}
