/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a sandbox's cgroups cost at start and end: mean and median
 * microseconds over N iterations (default 200) of
 *   create+destroy           rf_cgroup_create + rf_cgroup_destroy
 *   create+attach+destroy    ... with a waiting child moved in and killed
 *   create+keeper+destroy    ... plus the keeper (one fork) that guards
 *                            against a SIGKILL of the caller
 * with memory 256M, pids 200, cpu 0.25 (seed 004's numbers). The child is
 * forked outside the timed part. Run as root (or with a delegated cgroup):
 *   build/bench/cgroup-cost [N] */
#include "limits/cgroup.h"
#include "limits/limits.h"
#include "util/error.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_N 10000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("%-24s mean %7.1f us   median %7.1f us   (n=%d)\n", what, sum / n, t[n / 2], n);
}

static int one(const rf_limits *l, int mode, double *us)
{
    pid_t kid = 0;
    if (mode == 1 && (kid = fork()) == 0) {
        pause();
        _exit(0);
    }
    rf_cgroup *cg = NULL;
    rf_limits_report how;
    rf_error *err = NULL;
    double t0 = now_us();
    int r = rf_cgroup_create(l, "bench", &cg, &how, NULL, &err);
    if (r == 0 && mode == 1)
        r = rf_cgroup_attach(cg, kid, &err);
    if (r == 0 && mode == 2)
        r = rf_cgroup_keeper_start(cg, &err);
    rf_cgroup_destroy(cg);
    *us = now_us() - t0;
    if (kid > 0) {
        kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);
    }
    if (r < 0) {
        fprintf(stderr, "cgroup-cost: %s\n", rf_error_message(err));
        rf_error_free(err);
    }
    return r;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n < 1 || n > MAX_N)
        n = 200;
    rf_limits l = { .memory_bytes = 256ull << 20, .pids = 200, .cpu = 0.25 };
    rf_limits_report how;
    if (rf_limits_probe(&l, &how, NULL, NULL) < 0)
        return 1;
    printf("memory %s, pids %s, cpu %s\n", rf_limit_how_name(how.memory),
           rf_limit_how_name(how.pids), rf_limit_how_name(how.cpu));
    double *t = calloc((size_t)n, sizeof *t);
    const char *names[3] = { "create+destroy", "create+attach+destroy", "create+keeper+destroy" };
    for (int mode = 0; t && mode < 3; mode++) {
        for (int i = 0; i < n; i++)
            if (one(&l, mode, &t[i]) < 0)
                return 1;
        report(names[mode], t, n);
    }
    free(t);
    return 0;
}
