/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the Landlock layer costs a sandbox start: probing the ABI, and
 * building + enforcing a ruleset like the default plan's (a dozen rules),
 * each enforcement in a fresh child. Prints medians in microseconds.
 *
 *   build/bench/landlock-cost [ROUNDS]       (default 200) */
#include "bench.h"
#include "landlock/landlock.h"

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
    free(t);
    return 0;
}
