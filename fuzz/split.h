/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The prologue the two-part fuzz targets share: the input copied with two
 * NULs after it, so it reads as a first string (up to the first NUL) and a
 * second (what follows it, maybe empty), both terminated. */
#pragma once
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The copy (free() it), or NULL without memory; *second (may be NULL) gets
 * the second string. */
static inline char *rf_fuzz_split(const uint8_t *data, size_t size, const char **second)
{
    char *buf = malloc(size + 2);
    if (!buf)
        return NULL;
    memcpy(buf, data, size);
    buf[size] = buf[size + 1] = '\0';
    if (second)
        *second = buf + strlen(buf) + 1;
    return buf;
}
