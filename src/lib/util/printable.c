/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Terminal-safe forms of text a sandboxed command chose (printable.h). The
 * visible form keeps valid UTF-8 (a reviewer reads names and code in any
 * script) and marks everything a terminal would act on instead of show:
 * `printf 'ok\033[1A\033[2K'` in a file must not erase the diff line above
 * it, OSC 52 must not write the clipboard, a bare CR must not overwrite
 * the start of its line, U+202E must not reverse what follows. */
#include "util/printable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rf_printable(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    if (!size)
        return;
    for (; src[i] && i + 1 < size; i++)
        dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
    dst[i] = '\0';
}

size_t rf_utf8_len(const unsigned char *p, size_t n)
{
    if (n == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    size_t len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                 : p[0] >= 0xf0 && p[0] <= 0xf4                                  ? 4
                                                                                  : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    /* overlong forms, UTF-16 surrogates, past U+10FFFF */
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) || (p[0] == 0xf0 && p[1] < 0x90) ||
        (p[0] == 0xf4 && p[1] > 0x8f))
        return 0;
    return len;
}

static unsigned long code_point(const unsigned char *p, size_t len)
{
    static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
    unsigned long c = p[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++)
        c = c << 6 | (p[i] & 0x3f);
    return c;
}

bool rf_utf8_is_control(const unsigned char *p, size_t len)
{
    unsigned long c = code_point(p, len);
    return (c < 0x20 && c != '\t') || (c >= 0x7f && c <= 0x9f) || c == 0x200e || c == 0x200f ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

char *rf_visible(const char *src, size_t n, size_t *escaped)
{
    const unsigned char *p = (const unsigned char *)src;
    char *out = malloc(n * 4 + 1), *o = out; /* at most 4 bytes for 1: "\xff" */
    size_t count = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t len = rf_utf8_len(p + i, n - i);
        if (len == 0) {
            o += sprintf(o, "\\x%02x", p[i]);
            i++, count++;
            continue;
        }
        if (!rf_utf8_is_control(p + i, len)) {
            memcpy(o, p + i, len);
            o += len;
        } else if (len == 1) {
            *o++ = '^';
            *o++ = p[i] == 0x7f ? '?' : (char)(p[i] + '@');
            count++;
        } else {
            o += sprintf(o, "\\u%04lx", code_point(p + i, len));
            count++;
        }
        i += len;
    }
    *o = '\0';
    if (escaped)
        *escaped = count;
    return out;
}
