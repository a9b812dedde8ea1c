/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libc.h's calls, with the semantics of glibc's. */
#include "backend/windows/libc.h"

#include <direct.h>
#include <errno.h>
#include <windows.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

char *strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

/* realloc(p, n * size), refusing a product that overflows. */
void *reallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

/* The trailing XXXXXX replaced until a new directory is made; its name
 * is not a secret (the tests use it), only unique. */
char *mkdtemp(char *template)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    size_t len = strlen(template);
    if (len < 6 || strcmp(template + len - 6, "XXXXXX")) {
        errno = EINVAL;
        return NULL;
    }
    unsigned long seed = GetTickCount() ^ (GetCurrentProcessId() << 16);
    for (int tries = 0; tries < 100; tries++) {
        for (size_t i = len - 6; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            template[i] = chars[(seed >> 16) % (sizeof chars - 1)];
        }
        if (_mkdir(template) == 0)
            return template;
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}
