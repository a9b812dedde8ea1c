/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libc.h's calls, with the semantics of glibc's. */
#include "backend/windows/libc.h"

#include <errno.h>
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
