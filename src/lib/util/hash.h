/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* FNV-1a, 64 bits: the name of a cache entry from what shaped it (the
 * seccomp filter cache, the cached /etc). Not a defence against a chosen
 * collision: the caches live where no sandbox can write. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RF_HASH_INIT 14695981039346656037ULL

static inline void rf_hash_mix(uint64_t *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        *h = (*h ^ p[i]) * 1099511628211ULL;
}

/* A string and its terminator (NULL as ""), so "ab","c" differs from "a","bc". */
static inline void rf_hash_mix_str(uint64_t *h, const char *s)
{
    rf_hash_mix(h, s ? s : "", s ? strlen(s) + 1 : 1);
}
