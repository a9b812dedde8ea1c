/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the Landlock layer costs a sandbox start: probing the ABI, and
 * building + enforcing a ruleset like the default plan's (a dozen rules),
 * each enforcement in a fresh child. Prints medians in microseconds. Then
 * what it costs every open afterwards: Landlock checks each open against
 * the rules on the way from the file up to the root, so the cost grows with
 * the path's depth (PATH, default /usr/include/stdio.h; it must lie below
 * one of the rules, /usr or /tmp).
 *
 *   build/bench/landlock-cost [ROUNDS] [PATH]       (default 200) */
#include "bench.h"
#include "landlock/landlock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

static const rf_landlock_rule rules[] = {
    { "/usr", false }, { "/bin", false }, { "/lib", false }, { "/lib64", false },
    { "/sbin", false }, { "/etc/passwd", false }, { "/etc/group", false },
    { "/etc/hosts", false }, { "/etc/resolv.conf", false }, { "/proc", true },
    { "/dev", true }, { "/tmp", true },
};

static void apply(void *arg)
{
    rf_landlock_request *req = arg;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    rf_landlock_apply(req, NULL, NULL);
}

/* Nanoseconds per open() + close() of path: the best of 5 batches (the
 * least disturbed by the rest of the machine). */
static double open_ns(const char *path)
{
    enum { N = 20000 };
    double best = -1;
    for (int b = 0; b < 5; b++) {
        double t0 = bench_now_us();
        for (int i = 0; i < N; i++) {
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                return -1;
            close(fd);
        }
        double ns = (bench_now_us() - t0) * 1000.0 / N;
        if (best < 0 || ns < best)
            best = ns;
    }
    return best;
}

/* In a child (enforcing cannot be undone): opens before, then after. */
static void open_cost(rf_landlock_request *req, const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        double before = open_ns(path);
        apply(req);
        double after = open_ns(path);
        if (before < 0 || after < 0)
            printf("open() of %s failed: no per-open cost measured\n", path);
        else
            printf("open()+close() of %s: %.0f ns, %.0f ns under Landlock (%+.0f ns per open)\n", path, before,
                   after, after - before);
        fflush(stdout);
        _exit(0);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 1 || rounds > 100000)
        rounds = 200;
    double *t = calloc((size_t)rounds, sizeof *t), med;
    if (!t)
        return 1;
    int abi = 0;
    for (int i = 0; i < rounds; i++) {
        double t0 = bench_now_us();
        abi = rf_landlock_abi();
        t[i] = bench_now_us() - t0;
    }
    printf("landlock ABI probe (ABI %d): median %.1f us\n", abi, bench_median(t, rounds));
    if (abi < 1) {
        printf("landlock unavailable: nothing more to measure\n");
        free(t);
        return 0;
    }
    /* Skip the paths this host lacks: a missing rule path is an error. */
    rf_landlock_rule present[sizeof rules / sizeof rules[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (access(rules[i].path, F_OK) == 0)
            present[n++] = rules[i];
    rf_landlock_request req = { .rules = present, .n_rules = n, .restrict_tcp = true,
                                .scope_ipc = true, .mode = RF_LANDLOCK_BEST_EFFORT };
    for (int i = 0; i < rounds; i++)
        t[i] = bench_in_child_us(apply, &req);
    med = bench_median(t, rounds); /* sorts t: t[0] is the minimum */
    printf("landlock apply, %zu rules (in the child): median %.1f us, min %.1f us\n", n,
           med, t[0]);
    fflush(stdout);
    open_cost(&req, argc > 2 ? argv[2] : "/usr/include/stdio.h");
    free(t);
    return 0;
}
