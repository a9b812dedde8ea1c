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

/* t plus ms, normalised: a deadline for the *_timedwait calls. */
static inline struct timespec rf_timespec_add_ms(struct timespec t, unsigned ms)
{
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* `clock`'s now plus ms (CLOCK_REALTIME for a default pthread_cond_t). */
static inline struct timespec rf_clock_after_ms(clockid_t clock, unsigned ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return rf_timespec_add_ms(t, ms);
}
