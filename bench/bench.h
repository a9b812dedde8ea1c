/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Timing helpers shared by the small C benchmarks in bench/. */
#pragma once
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

typedef void (*bench_fn)(void *arg);

/* Run fn(arg) in a fresh child (for one-way operations such as installing
 * a filter) and return how long it took there, in microseconds; fork and
 * wait are not counted. -1 on failure. */
static inline double bench_in_child_us(bench_fn fn, void *arg)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        double t0 = bench_now_us();
        fn(arg);
        double dt = bench_now_us() - t0;
        _exit(write(p[1], &dt, sizeof dt) == sizeof dt ? 0 : 1);
    }
    close(p[1]);
    double dt = -1;
    if (read(p[0], &dt, sizeof dt) != sizeof dt)
        dt = -1;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return dt;
}

static inline int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v; afterwards v[0] is the minimum. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
