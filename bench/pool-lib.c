/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The warm pool through the library, as a resident caller (the MCP server,
 * an agent linking libringfence) uses it: rf_pool_run of /bin/true against
 * a bare posix_spawn + waitpid of /bin/true from the same process, rounds
 * interleaved. `run --via` adds the exec of the ringfence client to every
 * command; this is the pool's own cost.
 *
 * Before each timed call the program sleeps GAP_MS (default 50): an agent
 * waits far longer than that for its model between two commands, and the
 * pool refills in the gap. With GAP_MS 0 every call after the first few
 * waits for a sandbox to be built: the pool's refill rate, not its latency.
 *
 *   build/bench/pool-lib [ROUNDS] [GAP_MS] [POOL_SIZE]   (default 200, 50, 2)
 *
 * Run it in a directory that can be the workspace (not $HOME, not /). */
#include "bench.h"
#include "ringfence.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>

extern char **environ;

static double bare_us(int devnull)
{
    char *argv[] = { (char *)"/bin/true", NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_adddup2(&fa, devnull, fd);
    double t0 = bench_now_us();
    pid_t pid;
    int st = -1;
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0)
        waitpid(pid, &st, 0);
    double dt = bench_now_us() - t0;
    posix_spawn_file_actions_destroy(&fa);
    return st == 0 ? dt : -1;
}

static double pool_us(rf_pool *pool, int devnull, char **argv)
{
    rf_pool_request req = { .argv = argv, .stdio = { devnull, devnull, devnull } };
    rf_status st;
    rf_error *err = NULL;
    double t0 = bench_now_us();
    int rc = rf_pool_run(pool, &req, &st, &err);
    double dt = bench_now_us() - t0;
    if (rc < 0) {
        fprintf(stderr, "pool-lib: %s\n", rf_error_message(err));
        rf_error_free(err);
        return -1;
    }
    bool ok = st.exited && st.exit_code == 0;
    rf_status_clear(&st);
    return ok ? dt : -1;
}

static rf_pool *make_pool(size_t size)
{
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    rf_context ctx = { 0 };
    rf_policy *policy = cfg ? rf_policy_resolve(cfg, &ctx, &err) : NULL;
    rf_pool *pool = policy ? rf_pool_new(policy, size, &err) : NULL;
    if (!pool)
        fprintf(stderr, "pool-lib: %s\n", err ? rf_error_message(err) : "out of memory");
    rf_error_free(err);
    rf_policy_free(policy);
    rf_config_free(cfg);
    return pool;
}

static void sleep_ms(int ms)
{
    struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    int gap = argc > 2 ? atoi(argv[2]) : 50;
    int size = argc > 3 ? atoi(argv[3]) : 2;
    if (rounds < 1 || gap < 0 || size < 1) {
        fprintf(stderr, "usage: pool-lib [ROUNDS] [GAP_MS] [POOL_SIZE]\n");
        return 2;
    }
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    rf_pool *pool = make_pool((size_t)size);
    if (devnull < 0 || !pool)
        return 1;
    sleep_ms(500); /* let it fill */
    double *bare = calloc((size_t)rounds, sizeof *bare), *via = calloc((size_t)rounds, sizeof *via);
    double *shell = calloc((size_t)rounds, sizeof *shell);
    if (!bare || !via || !shell)
        return 1;
    char *direct[] = { (char *)"/bin/true", NULL };
    char *sh[] = { (char *)"/bin/sh", (char *)"-c", (char *)"true", NULL };
    for (int i = 0; i < rounds; i++) {
        sleep_ms(gap);
        bare[i] = bare_us(devnull);
        sleep_ms(gap);
        via[i] = pool_us(pool, devnull, direct);
        sleep_ms(gap);
        shell[i] = pool_us(pool, devnull, sh);
        if (bare[i] < 0 || via[i] < 0 || shell[i] < 0)
            return 1;
    }
    double mb = bench_median(bare, rounds), mp = bench_median(via, rounds), ms = bench_median(shell, rounds);
    printf("pool-lib: %d rounds, %d ms apart, pool of %d, uid %d\n", rounds, gap, size, (int)getuid());
    printf("  bare posix_spawn /bin/true   median %7.3f ms  min %7.3f ms\n", mb / 1e3, bare[0] / 1e3);
    printf("  rf_pool_run /bin/true        median %7.3f ms  min %7.3f ms\n", mp / 1e3, via[0] / 1e3);
    printf("  rf_pool_run /bin/sh -c true  median %7.3f ms  min %7.3f ms\n", ms / 1e3, shell[0] / 1e3);
    printf("  pool vs bare exec: %.2fx (medians); through a shell %.2fx\n", mp / mb, ms / mb);
    rf_pool_free(pool);
    free(bare);
    free(via);
    free(shell);
    close(devnull);
    return 0;
}
