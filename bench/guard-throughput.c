/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The exec guard's throughput: rf_guard_check calls per second, one
 * thread, default patterns (seed 001) and restrict_to_workspace, over the
 * two corpora of tests/guard: the everyday commands (allowed.txt) and the
 * dangerous ones (blocked.txt). Each corpus is checked in rounds for at
 * least SECONDS; the best round is reported (the least disturbed by other
 * load), with the median beside it. Target (issue 15): >= 200k checks/s.
 *
 *   build/bench/guard-throughput [SECONDS] [CORPUS_DIR]   (default 2, tests/guard) */
#include "bench.h"
#include "ringfence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 4096
#define MAX_ROUNDS 10000

typedef struct corpus {
    char *lines[MAX_LINES];
    size_t n;
} corpus;

static int load(const char *dir, const char *name, corpus *c)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0 && c->n < MAX_LINES) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        c->lines[c->n++] = strdup(line);
    }
    free(line);
    fclose(f);
    return 0;
}

/* One pass over the corpus; returns how many were blocked (-1 on error). */
static long pass(const rf_guard *g, const corpus *c)
{
    long blocked = 0;
    for (size_t i = 0; i < c->n; i++) {
        rf_guard_verdict v;
        rf_error *err = NULL;
        if (rf_guard_check(g, c->lines[i], &v, &err) < 0) {
            fprintf(stderr, "check failed: %s: %s\n", c->lines[i], rf_error_message(err));
            rf_error_free(err);
            return -1;
        }
        blocked += v.result != RF_GUARD_ALLOWED;
        rf_guard_verdict_clear(&v);
    }
    return blocked;
}

static void measure(const rf_guard *g, const char *label, const corpus *c, double seconds)
{
    static double rate[MAX_ROUNDS];
    int rounds = 0;
    long blocked = pass(g, c); /* warm-up, and the verdict count */
    double end = bench_now_us() + seconds * 1e6;
    while (blocked >= 0 && rounds < MAX_ROUNDS && bench_now_us() < end) {
        double t0 = bench_now_us();
        pass(g, c);
        double dt = bench_now_us() - t0;
        rate[rounds++] = dt > 0 ? (double)c->n * 1e6 / dt : 0;
    }
    if (rounds == 0)
        return;
    double median = bench_median(rate, rounds);
    printf("%-9s %4zu commands (%3ld blocked)  best %9.0f checks/s  median %9.0f checks/s  (%d rounds)\n", label,
           c->n, blocked, rate[rounds - 1], median, rounds);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    const char *dir = argc > 2 ? argv[2] : RF_SOURCE_DIR "/tests/guard";
    corpus everyday = { 0 }, dangerous = { 0 };
    if (seconds <= 0 || load(dir, "allowed.txt", &everyday) < 0 || load(dir, "blocked.txt", &dangerous) < 0)
        return 1;
    rf_guard_options o = RF_GUARD_OPTIONS_INIT;
    o.workspace = "/work/project";
    rf_error *err = NULL;
    rf_guard *g = rf_guard_new(&o, &err);
    if (!g) {
        fprintf(stderr, "guard: %s\n", rf_error_message(err));
        return 1;
    }
    printf("guard throughput, one thread, default patterns, restrict_to_workspace\n");
    measure(g, "everyday", &everyday, seconds);
    measure(g, "blocked", &dangerous, seconds);
    rf_guard_free(g);
    for (size_t i = 0; i < everyday.n; i++)
        free(everyday.lines[i]);
    for (size_t i = 0; i < dangerous.n; i++)
        free(dangerous.lines[i]);
    return 0;
}
