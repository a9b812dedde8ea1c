/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *rf_path_normalize(const char *path)
{
    if (!path || path[0] != '/')
        return NULL;
    size_t len = strlen(path);
    char *out = malloc(len + 2);
    if (!out)
        return NULL;
    size_t o = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--; /* drop the slash too */
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, seg, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    return out;
}

/* Copies, not asprintf: every start joins and concatenates some forty
 * paths, and the format machinery cost ~1,100 instructions each
 * (callgrind of `run -- true`, docs/performance.md). */
static char *concat3(const char *a, const char *sep, const char *b)
{
    size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);
    char *s = malloc(na + ns + nb + 1);
    if (!s)
        return NULL;
    memcpy(s, a, na);
    memcpy(s + na, sep, ns);
    memcpy(s + na + ns, b, nb + 1);
    return s;
}

char *rf_path_concat(const char *base, const char *suffix)
{
    return concat3(base, "", suffix);
}

char *rf_path_join(const char *base, const char *rel)
{
    if (rel && rel[0] == '/')
        return rf_path_normalize(rel);
    char *joined = concat3(base, "/", rel ? rel : "");
    if (!joined)
        return NULL;
    char *norm = rf_path_normalize(joined);
    free(joined);
    return norm;
}

bool rf_path_is_beneath(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool rf_path_is_kernel_fs(const char *path)
{
    return rf_path_is_beneath(path, "/proc") || rf_path_is_beneath(path, "/dev") ||
           rf_path_is_beneath(path, "/sys");
}
