/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Limits without cgroups: parsing the settings, finding the hierarchies in
 * /proc texts, and the rlimits applied in forked children. */
#include "tap.h"
#include "limits/hierarchy.h"
#include "limits/limits.h"
#include "util/error.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_ASAN 1 /* ASan or TSan: both reserve huge shadow mappings */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) /* clang */
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static void mem_ok(const char *s, uint64_t want)
{
    uint64_t got = 7;
    rf_error *err = NULL;
    char d[128];
    snprintf(d, sizeof d, "memory \"%s\" = %llu", s, (unsigned long long)want);
    int r = rf_limits_parse_memory(s, &got, &err);
    ok(r == 0 && got == want, d);
    if (r != 0 || got != want)
        printf("#   got %llu (%s)\n", (unsigned long long)got, err ? rf_error_message(err) : "");
    rf_error_free(err);
}

static void mem_bad(const char *s, const char *why)
{
    uint64_t got = 7;
    rf_error *err = NULL;
    char d[128];
    snprintf(d, sizeof d, "memory \"%.40s\" is refused: %s", s, why);
    ok(rf_limits_parse_memory(s, &got, &err) < 0 && got == 7, d);
    like(err ? rf_error_message(err) : NULL, why, "  ...and the message says why");
    like(err ? rf_error_message(err) : NULL, "limits.memory", "  ...and names the setting");
    ok(err && rf_error_hint(err), "  ...with a hint");
    rf_error_free(err);
}

static void test_parse_memory(void)
{
    mem_ok("1048576", 1048576);
    mem_ok("256M", 256ull << 20);
    mem_ok("256m", 256ull << 20);
    mem_ok("256MiB", 256ull << 20);
    mem_ok("256mb", 256ull << 20);
    mem_ok("1G", 1ull << 30);
    mem_ok("1.5G", 3ull << 29);
    mem_ok("512k", 512ull << 10);
    mem_ok("2T", 2ull << 40);
    mem_ok("0", 0);
    mem_ok("none", 0);
    mem_ok("unlimited", 0);
    mem_bad("", "empty");
    mem_bad("abc", "not a size");
    mem_bad("-1M", "not a size");
    mem_bad("12Q", "unknown unit");
    mem_bad("1.5", "fraction of a byte");
    mem_bad("1000", "below the minimum");
    mem_ok("4k", 4096);
    mem_bad("99999999999999999999999T", "too large");
    mem_bad("2000000T", "too large");
    mem_bad("1e9", "unknown unit");
    mem_bad("256M\x1b[31m", "unknown unit");
    rf_error *err = NULL;
    uint64_t v;
    rf_limits_parse_memory("1\x1b[2J", &v, &err);
    ok(err && !strchr(rf_error_message(err), '\x1b'), "control bytes are not echoed");
    rf_error_free(err);
}

static void test_parse_others(void)
{
    rf_error *err = NULL;
    double d = -1;
    uint64_t u = 7;
    ok(rf_limits_parse_cpu("0.25", &d, NULL) == 0 && d == 0.25, "cpu 0.25");
    ok(rf_limits_parse_cpu("2", &d, NULL) == 0 && d == 2, "cpu 2");
    ok(rf_limits_parse_cpu("none", &d, NULL) == 0 && d == 0, "cpu none");
    ok(rf_limits_parse_cpu("0.001", &d, &err) < 0, "cpu below 0.01 refused");
    like(err ? rf_error_message(err) : NULL, "limits.cpu", "  ...naming limits.cpu");
    rf_error_free(err), err = NULL;
    ok(rf_limits_parse_cpu("inf", &d, NULL) < 0, "cpu inf refused");
    ok(rf_limits_parse_cpu("nan", &d, NULL) < 0, "cpu nan refused");
    ok(rf_limits_parse_cpu("0x1p-2", &d, NULL) < 0, "cpu hex float refused");
    ok(rf_limits_parse_cpu("1e1", &d, NULL) < 0, "cpu exponent refused");
    ok(rf_limits_parse_cpu("5000", &d, NULL) < 0, "cpu 5000 refused");
    ok(rf_limits_parse_pids("200", &u, NULL) == 0 && u == 200, "pids 200");
    ok(rf_limits_parse_pids("0", &u, NULL) == 0 && u == 0, "pids 0");
    ok(rf_limits_parse_pids("1.5", &u, NULL) < 0, "pids 1.5 refused");
    ok(rf_limits_parse_pids("99999999", &u, &err) < 0, "pids above PID_MAX_LIMIT refused");
    like(err ? rf_error_message(err) : NULL, "limits.pids", "  ...naming limits.pids");
    rf_error_free(err), err = NULL;
    ok(rf_limits_parse_seconds("60", &d, NULL) == 0 && d == 60, "seconds 60");
    ok(rf_limits_parse_seconds("1.5", &d, NULL) == 0 && d == 1.5, "seconds 1.5");
    ok(rf_limits_parse_seconds("500ms", &d, NULL) == 0 && d == 0.5, "seconds 500ms");
    ok(rf_limits_parse_seconds("2m", &d, NULL) == 0 && d == 120, "seconds 2m");
    ok(rf_limits_parse_seconds("1h", &d, NULL) == 0 && d == 3600, "seconds 1h");
    ok(rf_limits_parse_seconds("1d", &d, NULL) < 0, "seconds 1d refused");
    ok(rf_limits_parse_seconds("9999999999", &d, NULL) < 0, "seconds beyond a year refused");

    char b[16];
    ok(rf_limits_format_memory(256ull << 20, b, sizeof b) > 0 && !strcmp(b, "256M"), "format 256M");
    ok(rf_limits_format_memory(3ull << 29, b, sizeof b) > 0 && !strcmp(b, "1536M"), "format 1536M");
    ok(rf_limits_format_memory(1000, b, sizeof b) > 0 && !strcmp(b, "1000"), "format 1000");
    ok(rf_limits_format_memory(1ull << 40, b, 2) < 0, "format reports a short buffer");
    is_str(rf_limit_how_name(RF_LIMIT_CGROUP_V1), "cgroup-v1", "how name v1");
    is_str(rf_limit_how_name(RF_LIMIT_RLIMIT), "rlimit", "how name rlimit");
}

/* The host this was written on: memory on v1 at a nested path, pids and
 * cpu on v1 at the root, cgroup2 at /sys/fs/cgroup/unified. */
static const char hybrid_cg[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
                                "1:cpu:/\n2:cpuacct:/\n0::/\n";
static const char hybrid_mi[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void test_hierarchy_parse(void)
{
    rf_hierarchies h;
    ok(rf_hierarchy_parse(hybrid_cg, hybrid_mi, &h, NULL) == 0, "hybrid: parses");
    is_str(h.v2.dir, "/sys/fs/cgroup/unified", "hybrid: v2 dir");
    is_str(h.v1[RF_CTRL_MEMORY].dir, "/sys/fs/cgroup/memory/process_api/abc", "hybrid: memory dir");
    is_int(h.v1[RF_CTRL_MEMORY].id, 4, "hybrid: memory hierarchy id");
    is_str(h.v1[RF_CTRL_PIDS].dir, "/sys/fs/cgroup/pids", "hybrid: pids dir");
    is_str(h.v1[RF_CTRL_CPU].dir, "/sys/fs/cgroup/cpu", "hybrid: cpu is not cpuacct or cpuset");
    rf_hierarchy_clear(&h);

    /* systemd pure v2, a user slice; the mount point has an escaped space. */
    ok(rf_hierarchy_parse("0::/user.slice/user-1000.slice/app.scope\n",
                          "29 23 0:26 / /sys/fs/cgroup\\040x rw - cgroup2 cgroup2 rw,nsdelegate\n",
                          &h, NULL) == 0,
       "pure v2: parses");
    is_str(h.v2.dir, "/sys/fs/cgroup x/user.slice/user-1000.slice/app.scope", "pure v2: dir, unescaped");
    ok(!h.v1[RF_CTRL_MEMORY].dir && !h.v1[RF_CTRL_PIDS].dir && !h.v1[RF_CTRL_CPU].dir,
       "pure v2: no v1 hierarchies");
    rf_hierarchy_clear(&h);

    /* A container without a cgroup namespace: the mount's root is our own
     * cgroup, so the path is taken relative to it; optional fields too. */
    ok(rf_hierarchy_parse("5:cpu,cpuacct:/docker/42\n3:memory:/docker/42\n0::/elsewhere\n",
                          "50 40 0:40 /docker/42 /sys/fs/cgroup/cpu,cpuacct ro shared:9 - cgroup "
                          "cgroup rw,cpu,cpuacct\n"
                          "51 40 0:41 /docker/42 /sys/fs/cgroup/memory rw master:3 - cgroup cgroup "
                          "rw,memory\n"
                          "52 40 0:42 /docker/42 /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
                          &h, NULL) == 0,
       "container v1: parses");
    is_str(h.v1[RF_CTRL_CPU].dir, "/sys/fs/cgroup/cpu,cpuacct", "container: co-mounted cpu,cpuacct");
    is_int(h.v1[RF_CTRL_CPU].id, 5, "container: cpu hierarchy id");
    is_str(h.v1[RF_CTRL_MEMORY].dir, "/sys/fs/cgroup/memory", "container: memory at mount root");
    ok(!h.v2.dir, "container: a v2 cgroup outside the mount's root is not used");
    rf_hierarchy_clear(&h);

    ok(rf_hierarchy_parse("garbage\n::\n", "1 2 3\n - \n", &h, NULL) == 0 && !h.v2.dir,
       "malformed input: nothing found, no crash");
    rf_hierarchy_clear(&h);
}

/* Run fn in a forked child; returns its exit status (0..255) or 256+sig. */
static int in_child(int (*fn)(void *), void *arg)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(arg));
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 256 + WTERMSIG(st);
}

/* Exit codes: 0 ok, 1 the big mapping succeeded, 2 apply failed, 3 the
 * small mapping failed, 4 malloc(1 GiB) succeeded. */
static int child_memory_rlimit(void *arg)
{
    rf_limits l = { .memory_bytes = 128ull << 20 };
    rf_limits_report how = { .memory = RF_LIMIT_RLIMIT };
    if (rf_limits_apply_rlimits(&l, &how) < 0)
        return 2;
    /* mmap, not malloc, for the main check: ASan's allocator would abort
     * instead of returning NULL. */
    void *big = mmap(NULL, 1ull << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (big != MAP_FAILED)
        return 1;
    if (UNDER_ASAN)
        return 0; /* ASan's/TSan's shadow already counts as data: no room left */
    if (malloc(1ull << 30))
        return 4;
    void *small = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return small == MAP_FAILED ? 3 : 0;
}

static int child_defaults(void *arg)
{
    const rf_limits *l = arg;
    rf_limits_report how = { RF_LIMIT_CGROUP_V1, RF_LIMIT_CGROUP_V1, RF_LIMIT_CGROUP_V1 };
    struct rlimit before;
    getrlimit(RLIMIT_NOFILE, &before);
    if (rf_limits_apply_rlimits(l, &how) < 0)
        return 2;
    struct rlimit r;
    getrlimit(RLIMIT_CORE, &r);
    if (r.rlim_cur != 0 || r.rlim_max != 0)
        return 3;
    getrlimit(RLIMIT_NOFILE, &r);
    rlim_t want = before.rlim_max < RF_LIMITS_NOFILE_MAX ? before.rlim_max : RF_LIMITS_NOFILE_MAX;
    if (r.rlim_cur != want || r.rlim_max != before.rlim_max)
        return 4;
    getrlimit(RLIMIT_DATA, &r); /* cgroups enforce memory: no rlimit */
    if (r.rlim_cur != RLIM_INFINITY)
        return 5;
    getrlimit(RLIMIT_CPU, &r);
    return r.rlim_cur == RLIM_INFINITY ? 0 : 6;
}

static int child_cpu_rlimit(void *arg)
{
    rf_limits l = { .cpu = 0.5, .timeout_s = 3 };
    if (rf_limits_apply_rlimits(&l, NULL) < 0)
        return 2;
    struct rlimit r;
    getrlimit(RLIMIT_CPU, &r);
    return r.rlim_cur == 2 && r.rlim_max == 3 ? 0 : 1;
}

/* As an unprivileged uid (root switches to 65534), RLIMIT_NPROC stops a bounded fork loop. Exit 0
 * if a fork failed with EAGAIN after at most pids - 1 children (other
 * processes of that uid on the host only make it fail sooner). */
static int child_nproc(void *arg)
{
    if (geteuid() == 0 &&
        (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
        return 2;
    rf_limits l = { .pids = 8 };
    if (rf_limits_apply_rlimits(&l, NULL) < 0)
        return 3;
    pid_t kids[32];
    int made = 0, eagain = 0;
    while (made < 32 && !eagain) {
        pid_t p = fork();
        if (p == 0) {
            pause();
            _exit(0);
        }
        if (p > 0)
            kids[made++] = p;
        else
            eagain = errno == EAGAIN;
    }
    for (int i = 0; i < made; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    if (!eagain)
        return 4;
    return made <= 7 ? 0 : 5;
}

static void test_rlimits(void)
{
    is_int(in_child(child_memory_rlimit, NULL), 0, "rlimit fallback: 1 GiB fails under memory 128M");
    rf_limits l = { .memory_bytes = 128ull << 20, .pids = 10, .cpu = 0.5, .timeout_s = 10 };
    is_int(in_child(child_defaults, &l), 0,
           "defaults: core 0, nofile raised (capped), nothing else when cgroups enforce");
    is_int(in_child(child_cpu_rlimit, NULL), 0, "cpu 0.5 x timeout 3 s: RLIMIT_CPU 2 s, hard 3 s");
    l = (rf_limits){ .cpu = 0.5 };
    is_int(rf_limits_cpu_seconds(&l), 0, "no RLIMIT_CPU without a timeout");
    l.timeout_s = 0.1;
    is_int(rf_limits_cpu_seconds(&l), 1, "RLIMIT_CPU is at least 1 s");
    is_int(in_child(child_nproc, NULL), 0,
           "rlimit fallback: RLIMIT_NPROC 8 stops a fork loop for a non-root uid");
}

int main(void)
{
    test_parse_memory();
    test_parse_others();
    test_hierarchy_parse();
    test_rlimits();
    return done_testing();
}
