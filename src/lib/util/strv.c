/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t rf_strv_len(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

int rf_strv_push_take(char ***v, char *s)
{
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    size_t n = rf_strv_len(*v);
    char **nv = realloc(*v, (n + 2) * sizeof(char *));
    if (!nv) {
        free(s);
        errno = ENOMEM;
        return -1;
    }
    nv[n] = s;
    nv[n + 1] = NULL;
    *v = nv;
    return 0;
}

int rf_strv_push(char ***v, const char *s)
{
    return rf_strv_push_take(v, strdup(s));
}

int rf_strv_pushf(char ***v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return rf_strv_push_take(v, n < 0 ? NULL : s);
}

int rf_strv_push_unique(char ***v, const char *s)
{
    if (rf_strv_contains(*v, s))
        return 0;
    return rf_strv_push(v, s);
}

bool rf_strv_contains(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

char **rf_strv_copy(char *const *v)
{
    char **out = calloc(1, sizeof(char *));
    if (!out)
        return NULL;
    for (size_t i = 0; v && v[i]; i++)
        if (rf_strv_push(&out, v[i]) < 0) {
            rf_strv_free(out);
            return NULL;
        }
    return out;
}

void rf_strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

char *rf_strv_env_get(char *const *v, const char *key)
{
    size_t klen = strlen(key);
    for (size_t i = 0; v && v[i]; i++)
        if (strncmp(v[i], key, klen) == 0 && v[i][klen] == '=')
            return v[i];
    return NULL;
}

int rf_strv_env_set(char ***v, const char *key, const char *value)
{
    /* Two copies, not asprintf (a dozen variables at every start). */
    size_t klen = strlen(key), vlen = strlen(value);
    char *entry = malloc(klen + vlen + 2);
    if (!entry) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(entry, key, klen);
    entry[klen] = '=';
    memcpy(entry + klen + 1, value, vlen + 1);
    for (size_t i = 0; *v && (*v)[i]; i++)
        if (strncmp((*v)[i], key, klen) == 0 && (*v)[i][klen] == '=') {
            free((*v)[i]);
            (*v)[i] = entry;
            return 0;
        }
    return rf_strv_push_take(v, entry);
}
