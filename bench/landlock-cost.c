/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the Landlock layer costs a sandbox start: probing the ABI, and
 * building + enforcing a ruleset like the default plan's (a dozen rules),
 * each enforcement in a fresh child. Prints medians in microseconds. Then
 * what it costs every open afterwards: Landlock checks each open against
 * the rules on the way from the file up to the root, so the cost grows with
 * the path's depth below the rule that grants it (PATH, default
 * /usr/include/stdio.h; it must lie below /usr, /tmp or WORKSPACE, a
 * writable rule added as a sandbox's workspace is).
 *
 *   build/bench/landlock-cost [ROUNDS] [PATH [WORKSPACE]]       (default 200) */
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

/* Nanoseconds per open() + close() of path, over one batch. */
static double open_ns(const char *path)
{
    enum { N = 5000 };
    double t0 = bench_now_us();
    for (int i = 0; i < N; i++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        close(fd);
    }
    return (bench_now_us() - t0) * 1000.0 / N;
}

typedef struct opener {
    pid_t pid;
    int cmd, res; /* the parent's ends: a byte asks for a batch, a double answers */
} opener;

/* A child that times a batch of opens whenever asked, under Landlock if
 * req is set (enforcing cannot be undone, hence a child each). */
static int opener_start(opener *o, rf_landlock_request *req, const char *path)
{
    int c[2], r[2];
    if (pipe(c) < 0 || pipe(r) < 0)
        return -1;
    o->pid = fork();
    if (o->pid == 0) {
        close(c[1]);
        close(r[0]);
        if (req)
            apply(req);
        char b;
        while (read(c[0], &b, 1) == 1) {
            double ns = open_ns(path);
            if (write(r[1], &ns, sizeof ns) != sizeof ns)
                break;
        }
        _exit(0);
    }
    close(c[0]);
    close(r[1]);
    o->cmd = c[1];
    o->res = r[0];
    return o->pid > 0 ? 0 : -1;
}

static double opener_batch(const opener *o)
{
    double ns = -1;
    if (write(o->cmd, "b", 1) != 1 || read(o->res, &ns, sizeof ns) != sizeof ns)
        return -1;
    return ns;
}

/* Batches alternate between a child without and one with Landlock, so a
 * burst of load from elsewhere lands on both alike; the median of each
 * pair's difference is the cost per open. */
static void open_cost(rf_landlock_request *req, const char *path)
{
    enum { PAIRS = 21 };
    opener plain, ll;
    if (opener_start(&plain, NULL, path) < 0 || opener_start(&ll, req, path) < 0)
        return;
    double a[PAIRS], b[PAIRS], d[PAIRS];
    int n = 0;
    for (int i = 0; i < PAIRS; i++) {
        a[n] = opener_batch(&plain);
        b[n] = opener_batch(&ll);
        if (a[n] < 0 || b[n] < 0)
            break;
        d[n] = b[n] - a[n];
        n++;
    }
    if (n == PAIRS)
        printf("open()+close() of %s: %.0f ns, %.0f ns under Landlock (%+.0f ns per open, median of %d pairs)\n",
               path, bench_median(a, n), bench_median(b, n), bench_median(d, n), n);
    else
        printf("open() of %s failed: no per-open cost measured\n", path);
    close(plain.cmd);
    close(ll.cmd);
    close(plain.res);
    close(ll.res);
    waitpid(plain.pid, NULL, 0);
    waitpid(ll.pid, NULL, 0);
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
    rf_landlock_rule present[sizeof rules / sizeof rules[0] + 1];
    size_t n = 0;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (access(rules[i].path, F_OK) == 0)
            present[n++] = rules[i];
    if (argc > 3)
        present[n++] = (rf_landlock_rule){ argv[3], true };
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
