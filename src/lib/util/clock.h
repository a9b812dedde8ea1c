/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Milliseconds on the monotonic clock: for deadlines and intervals that a
 * change of the wall clock must not stretch or cut. */
#pragma once
#include <time.h>

static inline long long rf_monotonic_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
