/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A minimal TAP producer for the C unit tests: each check prints one
 * "ok N - description" or "not ok N - description" line; tests/run counts
 * them. Header-only so each test is one self-contained program. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <fcntl.h>
#endif

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *desc)
{
    tap_n++;
    printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, desc);
    if (!cond) {
        tap_failed++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    return cond;
}

#define ok(cond, desc) tap_ok(!!(cond), __FILE__, __LINE__, (desc))
#define is_int(got, want, desc)                                                        \
    do {                                                                               \
        long long _g = (long long)(got), _w = (long long)(want);                       \
        if (!tap_ok(_g == _w, __FILE__, __LINE__, (desc)))                             \
            printf("#   got %lld, want %lld\n", _g, _w);                               \
    } while (0)
#define is_str(got, want, desc)                                                        \
    do {                                                                               \
        const char *_g = (got), *_w = (want);                                          \
        int _c = (_g && _w) ? strcmp(_g, _w) == 0 : _g == _w;                          \
        if (!tap_ok(_c, __FILE__, __LINE__, (desc)))                                   \
            printf("#   got  \"%s\"\n#   want \"%s\"\n", _g ? _g : "(null)",           \
                   _w ? _w : "(null)");                                                \
    } while (0)
#define like(got, needle, desc)                                                        \
    do {                                                                               \
        const char *_g = (got), *_n = (needle);                                        \
        if (!tap_ok(_g && strstr(_g, _n) != NULL, __FILE__, __LINE__, (desc)))         \
            printf("#   \"%s\"\n#   does not contain \"%s\"\n", _g ? _g : "(null)", _n); \
    } while (0)

#ifndef _WIN32
/* How many descriptors are open (below 1024): a test takes it before and
 * after a call to show that the call leaks none. fcntl rather than
 * /proc/self/fd so it works in a namespace without /proc. */
static inline int tap_count_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}
#endif

static inline int done_testing(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
