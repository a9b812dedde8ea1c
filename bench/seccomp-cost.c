/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the seccomp layer costs a sandbox start: compiling the default
 * profile with libseccomp (done once, in the parent) against installing the
 * compiled bytes (done in every child), plus the added cost per syscall
 * once the filter is in place. Prints medians in microseconds.
 *
 *   build/bench/seccomp-cost [ROUNDS]        (default 200) */
#include "bench.h"
#include "seccomp/seccomp.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static double syscall_ns(long n)
{
    double t0 = bench_now_us();
    for (long i = 0; i < n; i++)
        syscall(SYS_getppid);
    return (bench_now_us() - t0) * 1000.0 / (double)n;
}

typedef struct filter {
    const void *bpf;
    size_t len;
    const rf_seccomp_request *req;
} filter;

static void apply_cached(void *arg)
{
    filter *f = arg;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    rf_seccomp_apply_bpf(f->bpf, f->len, NULL);
}

static void compile_and_apply(void *arg)
{
    filter *f = arg;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    rf_seccomp_apply(f->req, NULL);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 1 || rounds > 100000)
        rounds = 200;
    rf_seccomp_request req = { .profile = RF_SECCOMP_DEFAULT };
    double *t = calloc((size_t)rounds, sizeof *t), med;
    void *bpf = NULL;
    size_t len = 0;
    if (!t)
        return 1;

    for (int i = 0; i < rounds; i++) {
        free(bpf);
        double t0 = bench_now_us();
        if (rf_seccomp_compile(&req, &bpf, &len, NULL) < 0)
            return 1;
        t[i] = bench_now_us() - t0;
    }
    med = bench_median(t, rounds); /* sorts t: t[0] is the minimum */
    printf("seccomp compile, default profile (%zu instructions): median %.1f us, min %.1f us\n",
           len / 8, med, t[0]);

    /* Each install is one-way, so each sample is a fresh child that times
     * its own no_new_privs + install and reports it over a pipe. */
    filter f = { bpf, len, &req };
    for (int i = 0; i < rounds; i++)
        t[i] = bench_in_child_us(apply_cached, &f);
    med = bench_median(t, rounds); /* sorts t: t[0] is the minimum */
    printf("seccomp apply of the cached BPF (in the child): median %.1f us, min %.1f us\n",
           med, t[0]);

    for (int i = 0; i < rounds; i++)
        t[i] = bench_in_child_us(compile_and_apply, &f);
    med = bench_median(t, rounds); /* sorts t: t[0] is the minimum */
    printf("seccomp compile + apply in the child: median %.1f us, min %.1f us\n",
           med, t[0]);

    const long n = 200000;
    double before = syscall_ns(n);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    rf_seccomp_apply_bpf(bpf, len, NULL);
    double after = syscall_ns(n);
    printf("getppid(): %.0f ns unfiltered, %.0f ns filtered (+%.0f ns per syscall)\n", before, after,
           after - before);
    free(bpf);
    free(t);
    return 0;
}
