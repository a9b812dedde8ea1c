/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroup side of limits, with plain forked children standing in for
 * the sandbox. Every cgroup is made below our own cgroup and has a keeper,
 * so even a crash of this test leaves nothing behind; an atexit handler
 * destroys what a failed check left. Tests that need a writable hierarchy
 * for a controller are skipped (with the reason) where there is none. */
#include "tap.h"
#include "limits/cgroup.h"
#include "limits/cgroupfs.h"
#include "limits/hierarchy.h"
#include "limits/limits.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* clang names ThreadSanitizer only through __has_feature. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN_CLANG 1
#endif
#endif
#ifndef UNDER_TSAN_CLANG
#define UNDER_TSAN_CLANG 0
#endif

#define MAX_LIVE 8
static rf_cgroup *live[MAX_LIVE];
static rf_limits_report host; /* what this host can enforce, from a probe */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void skip(const char *why)
{
    printf("ok %d - # SKIP %s\n", ++tap_n, why);
}

static void destroy_all(void)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i])
            rf_cgroup_destroy(live[i]), live[i] = NULL;
}

static rf_cgroup *make(const rf_limits *l, rf_limits_report *how)
{
    rf_cgroup *cg = NULL;
    rf_error *err = NULL;
    char **warn = NULL;
    if (rf_cgroup_create(l, "test", &cg, how, &warn, &err) < 0) {
        printf("# create: %s\n", rf_error_message(err));
        rf_error_free(err);
        return NULL;
    }
    rf_strv_free(warn);
    if (rf_cgroup_keeper_start(cg, &err) < 0) {
        printf("# keeper: %s\n", rf_error_message(err));
        rf_error_free(err);
    }
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = cg;
            break;
        }
    return cg;
}

static void unmake(rf_cgroup *cg)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == cg)
            live[i] = NULL;
    rf_cgroup_destroy(cg);
}

/* Fork a child that runs fn only once it has been moved into cg. */
static pid_t spawn_in(rf_cgroup *cg, int (*fn)(void *), void *arg)
{
    int go[2];
    if (pipe2(go, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        _exit(read(go[0], &c, 1) == 1 ? fn(arg) : 99);
    }
    close(go[0]);
    rf_error *err = NULL;
    if (pid > 0 && rf_cgroup_attach(cg, pid, &err) < 0) {
        printf("# attach: %s\n", rf_error_message(err));
        rf_error_free(err);
        kill(pid, SIGKILL);
    }
    if (write(go[1], "x", 1) != 1)
        kill(pid, SIGKILL);
    close(go[1]);
    return pid;
}

/* 0..255 exit status, 256 + signal. */
static int wait_for(pid_t pid, struct rusage *ru)
{
    int st = 0;
    struct rusage dummy;
    while (wait4(pid, &st, 0, ru ? ru : &dummy) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 256 + WTERMSIG(st);
}

static bool exists(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0;
}

static int child_pause(void *arg)
{
    pause();
    return 0;
}

/* Is pid in a cgroup called name, in any hierarchy (v2_only: in the
 * unified one, the "0::" line)? */
static bool in_cgroup_line(pid_t pid, const char *name, bool v2_only)
{
    char p[64], buf[4096] = "";
    snprintf(p, sizeof p, "/proc/%d/cgroup", (int)pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if ((!v2_only || strncmp(line, "0::", 3) == 0) && strstr(line, name))
            return true;
    return false;
}

static bool in_cgroup(pid_t pid, const char *name)
{
    return in_cgroup_line(pid, name, false);
}

static void test_create_attach_destroy(void)
{
    rf_limits l = { .memory_bytes = 128ull << 20, .pids = 64, .cpu = 0.5 };
    rf_limits_report how;
    rf_cgroup *cg = make(&l, &how);
    ok(cg, "create with memory, pids and cpu");
    if (!cg)
        return;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "ringfence-%d-", (int)getpid());
    like(rf_cgroup_name(cg), prefix, "named ringfence-<pid>-<n>");
    char *dirs[4] = { 0 };
    const char *ctrls[4] = { "memory", "pids", "cpu", "" };
    rf_limit_how hows[3] = { how.memory, how.pids, how.cpu };
    for (int c = 0; c < 4; c++) {
        const char *d = rf_cgroup_dir(cg, ctrls[c]);
        dirs[c] = d ? strdup(d) : NULL;
        char desc[128];
        snprintf(desc, sizeof desc, "%s: a cgroup directory exactly when a cgroup enforces it",
                 *ctrls[c] ? ctrls[c] : "v2 tracking cgroup");
        bool want = c < 3 ? hows[c] == RF_LIMIT_CGROUP_V1 || hows[c] == RF_LIMIT_CGROUP_V2
                          : rf_cgroup_v2_dir_fd(cg) >= 0;
        ok(exists(dirs[c]) == want && (!dirs[c] || strstr(dirs[c], rf_cgroup_name(cg))), desc);
    }
    /* The limits really are in the files. */
    char p[512], buf[64] = "";
    if (dirs[0]) {
        snprintf(p, sizeof p, "%s/%s", dirs[0],
                 how.memory == RF_LIMIT_CGROUP_V2 ? "memory.max" : "memory.limit_in_bytes");
        FILE *f = fopen(p, "re");
        if (f && fgets(buf, sizeof buf, f))
            is_str(buf, "134217728\n", "memory limit written");
        else
            ok(0, "memory limit file readable");
        if (f)
            fclose(f);
    }
    if (dirs[1]) {
        snprintf(p, sizeof p, "%s/pids.max", dirs[1]);
        FILE *f = fopen(p, "re");
        ok(f && fgets(buf, sizeof buf, f) && strcmp(buf, "64\n") == 0, "pids.max written");
        if (f)
            fclose(f);
    }
    pid_t pid = spawn_in(cg, child_pause, NULL);
    ok(pid > 0 && in_cgroup(pid, rf_cgroup_name(cg)), "attached child is in the cgroup");
    unmake(cg);
    is_int(wait_for(pid, NULL), 256 + SIGKILL, "destroy kills what is inside");
    bool gone = true;
    for (int c = 0; c < 4; c++) {
        gone &= !exists(dirs[c]);
        free(dirs[c]);
    }
    ok(gone, "destroy removes every directory it made");
}

/* What the native backend does: clone3 straight into the v2 cgroup, so the
 * child never runs outside it; then attach for the v1 hierarchies. */
static void test_clone_into_cgroup(void)
{
    rf_limits l = { .pids = 8 };
    rf_limits_report how;
    rf_cgroup *cg = make(&l, &how);
    if (!cg)
        return (void)ok(0, "clone3: setup");
    if (rf_cgroup_v2_dir_fd(cg) < 0) {
        unmake(cg);
        return skip("clone3: no writable cgroup2 hierarchy here");
    }
    struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                               .cgroup = (uint64_t)rf_cgroup_v2_dir_fd(cg) };
    fflush(stdout);
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    ok(pid > 0 && in_cgroup_line(pid, rf_cgroup_name(cg), true),
       "clone3(CLONE_INTO_CGROUP) lands in the v2 cgroup");
    ok(pid > 0 && rf_cgroup_attach(cg, pid, NULL) == 0, "  ...and attach adds the v1 ones");
    unmake(cg);
    is_int(pid > 0 ? wait_for(pid, NULL) : -1, 256 + SIGKILL, "  ...and destroy kills it");
}

static void test_no_limits(void)
{
    rf_limits l = { 0 };
    rf_limits_report how = { RF_LIMIT_RLIMIT, RF_LIMIT_RLIMIT, RF_LIMIT_RLIMIT };
    char **warn = NULL;
    rf_cgroup *cg = NULL;
    ok(rf_cgroup_create(&l, NULL, &cg, &how, &warn, NULL) == 0, "create without limits");
    ok(how.memory == RF_LIMIT_NONE && how.pids == RF_LIMIT_NONE && how.cpu == RF_LIMIT_NONE,
       "  ...reports none for each");
    ok(rf_strv_len(warn) == 0, "  ...and warns about nothing");
    ok(cg && !rf_cgroup_dir(cg, "memory") && !rf_cgroup_dir(cg, "pids"),
       "  ...and makes no controller cgroup");
    char *v2 = cg && rf_cgroup_dir(cg, "") ? strdup(rf_cgroup_dir(cg, "")) : NULL;
    rf_cgroup_destroy(cg);
    ok(!exists(v2), "  ...and leaves nothing behind");
    free(v2);
    rf_strv_free(warn);
}

typedef struct bomb_result {
    int made, eagain, other;
} bomb_result;

static int bomb_fd = -1;

/* A bounded fork bomb: up to 200 children that wait to be killed. */
static int child_bomb(void *arg)
{
    bomb_result r = { 0 };
    for (int i = 0; i < 200; i++) {
        pid_t p = fork();
        if (p == 0) {
            pause();
            _exit(0);
        }
        if (p > 0)
            r.made++;
        else if (errno == EAGAIN)
            r.eagain++;
        else
            r.other++;
    }
    return write(bomb_fd, &r, sizeof r) == sizeof r ? 0 : 1;
}

static void reap_strays(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

static void test_fork_bomb(void)
{
    if (host.pids != RF_LIMIT_CGROUP_V1 && host.pids != RF_LIMIT_CGROUP_V2)
        return skip("no writable pids cgroup here");
    rf_limits l = { .pids = 64 };
    rf_limits_report how;
    rf_cgroup *cg = make(&l, &how);
    int fds[2];
    if (!cg || pipe2(fds, O_CLOEXEC) < 0)
        return (void)ok(0, "fork bomb: setup");
    bomb_fd = fds[1];
    pid_t pid = spawn_in(cg, child_bomb, NULL);
    close(fds[1]);
    bomb_result r = { -1, -1, -1 };
    ok(read(fds[0], &r, sizeof r) == sizeof r, "fork bomb: reports back");
    close(fds[0]);
    is_int(wait_for(pid, NULL), 0, "fork bomb: the bomber itself is fine");
#if defined(__SANITIZE_THREAD__) || UNDER_TSAN_CLANG
    /* TSan runs a background thread in each process: pids counts tasks. */
    ok(r.made > 0 && r.made < 63, "fork bomb: stops below pids 64 (TSan: 2 tasks a process)");
#else
    is_int(r.made, 63, "fork bomb: stops at pids 64 (63 children + the bomber)");
#endif
    ok(r.eagain > 0 && r.other == 0, "fork bomb: the rest fail with EAGAIN");
    rf_cgroup_stats st;
    rf_cgroup_read_stats(cg, &st);
    ok(st.pids_limit_hit, "fork bomb: stats report pids_limit_hit");
    /* Kill through the pids cgroup itself: on v1 that is the loop over
     * cgroup.procs (63 pausing processes), on v2 cgroup.kill. */
    int fd = open(rf_cgroup_dir(cg, "pids"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ok(fd >= 0 && rf_cgroupfs_kill(fd, how.pids == RF_LIMIT_CGROUP_V2, 5000) == 0,
       "fork bomb: kill returns");
    /* pids.current counts zombies until they are reaped: we are their
     * subreaper, so reap as they come. */
    uint64_t left = 99;
    for (double end = now_s() + 3; fd >= 0 && left > 0 && now_s() < end; usleep(1000)) {
        reap_strays();
        if (rf_cgroupfs_read_u64(fd, "pids.current", NULL, &left) < 0)
            break;
    }
    is_int(left, 0, "fork bomb: ...and once reaped, the cgroup is empty (pids.current 0)");
    if (fd >= 0)
        close(fd);
    unmake(cg);
    reap_strays();
}

static int child_hog(void *arg)
{
    size_t len = 1ull << 30;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 2;
    for (size_t i = 0; i < len; i += 4096)
        m[i] = 1;
    return 0; /* touched 1 GiB: the limit did not hold */
}

static void test_oom(void)
{
    if (host.memory != RF_LIMIT_CGROUP_V1 && host.memory != RF_LIMIT_CGROUP_V2)
        return skip("no writable memory cgroup here");
    rf_limits l = { .memory_bytes = 128ull << 20 };
    rf_limits_report how;
    rf_cgroup *cg = make(&l, &how);
    if (!cg)
        return (void)ok(0, "oom: setup");
    pid_t pid = spawn_in(cg, child_hog, NULL);
    is_int(wait_for(pid, NULL), 256 + SIGKILL, "oom: touching 1 GiB under memory 128M is killed");
    rf_cgroup_stats st;
    rf_cgroup_read_stats(cg, &st);
    ok(st.oom_killed, "oom: stats report oom_killed");
    ok(st.peak_memory_bytes > (64ull << 20) && st.peak_memory_bytes <= (129ull << 20),
       "oom: peak memory is near the limit, not above");
    printf("#   peak %llu bytes\n", (unsigned long long)st.peak_memory_bytes);
    unmake(cg);
}

static int child_spin(void *arg)
{
    double end = now_s() + 2.0;
    volatile unsigned long x = 0;
    while (now_s() < end)
        x++;
    return 0;
}

static void test_cpu(void)
{
    if (host.cpu != RF_LIMIT_CGROUP_V1 && host.cpu != RF_LIMIT_CGROUP_V2)
        return skip("no writable cpu cgroup here");
    double load[1];
    /* RF_TEST_CPU_ANYWAY=1 measures on a busy machine too (by hand). */
    if (getloadavg(load, 1) == 1 && load[0] > 1.5 && !getenv("RF_TEST_CPU_ANYWAY"))
        return skip("cpu share: the machine is busy (loadavg > 1.5)");
    rf_limits l = { .cpu = 0.25 };
    rf_limits_report how;
    rf_cgroup *cg = make(&l, &how);
    if (!cg)
        return (void)ok(0, "cpu: setup");
    double t0 = now_s();
    struct rusage ru;
    pid_t pid = spawn_in(cg, child_spin, NULL);
    wait_for(pid, &ru);
    double wall = now_s() - t0;
    double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    double share = cpu / wall;
    printf("#   cpu 0.25: %.3f s CPU over %.3f s = %.2f\n", cpu, wall, share);
    ok(share > 0.1 && share < 0.45, "cpu 0.25: a spinner gets about a quarter CPU (0.1-0.45)");
    unmake(cg);
}

static int tree_fd = -1;

/* A child that double-forks a setsid'd grandchild ignoring SIGTERM and
 * reports its pid, then exits: the grandchild is an orphan. */
static int child_tree(void *arg)
{
    pid_t mid = fork();
    if (mid == 0) {
        setsid();
        signal(SIGTERM, SIG_IGN);
        pid_t g = fork();
        if (g == 0) {
            for (;;)
                pause();
        }
        _exit(write(tree_fd, &g, sizeof g) == sizeof g ? 0 : 1);
    }
    return wait_for(mid, NULL);
}

static void test_kill_tree(void)
{
    rf_limits l = { .pids = 16 };
    rf_limits_report how;
    rf_cgroup *cg = make(&l, &how);
    int fds[2];
    if (!cg || pipe2(fds, O_CLOEXEC) < 0)
        return (void)ok(0, "kill: setup");
    if (how.pids == RF_LIMIT_RLIMIT && rf_cgroup_v2_dir_fd(cg) < 0) {
        unmake(cg);
        return skip("kill: no writable cgroup here");
    }
    tree_fd = fds[1];
    pid_t pid = spawn_in(cg, child_tree, NULL);
    close(fds[1]);
    pid_t g = -1;
    ok(read(fds[0], &g, sizeof g) == sizeof g && g > 0, "kill: orphaned grandchild started");
    close(fds[0]);
    is_int(wait_for(pid, NULL), 0, "kill: its parents are gone");
    ok(rf_cgroup_kill(cg) == 0, "kill: returns once the cgroup is empty");
    /* We are the subreaper, so the orphan is ours to reap. */
    is_int(wait_for(g, NULL), 256 + SIGKILL, "kill: the setsid'd, SIGTERM-ignoring orphan died");
    unmake(cg);
}

/* The "caller" of the keeper test: a cgroup, its keeper and a child in
 * it; reports the child's pid and the directories, then waits to die. */
static __attribute__((noreturn)) void keeper_caller(int fd)
{
    rf_limits l = { .memory_bytes = 64ull << 20, .pids = 16 };
    rf_limits_report how;
    rf_cgroup *cg = NULL;
    if (rf_cgroup_create(&l, "keeper", &cg, &how, NULL, NULL) < 0 ||
        rf_cgroup_keeper_start(cg, NULL) < 0)
        _exit(1);
    pid_t kid = spawn_in(cg, child_pause, NULL);
    char msg[1024] = "";
    const char *ctrls[3] = { "memory", "pids", "" };
    int n = snprintf(msg, sizeof msg, "%d", (int)kid);
    for (int c = 0; c < 3; c++)
        n += snprintf(msg + n, sizeof msg - (size_t)n, "\n%s",
                      rf_cgroup_dir(cg, ctrls[c]) ? rf_cgroup_dir(cg, ctrls[c]) : "");
    if (write(fd, msg, (size_t)n) != n)
        _exit(1);
    for (;;)
        pause(); /* killed here, without destroying anything */
}

/* The keeper: a "caller" process makes a cgroup with a keeper and a child
 * in it, then is SIGKILLed. The keeper must kill the child and remove the
 * directories. */
static void test_keeper(void)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return (void)ok(0, "keeper: setup");
    fflush(stdout);
    pid_t caller = fork();
    if (caller == 0) {
        close(fds[0]);
        keeper_caller(fds[1]);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t n = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    msg[n > 0 ? n : 0] = '\0';
    char *save = NULL, *dirs[3] = { 0 };
    pid_t kid = atoi(strtok_r(msg, "\n", &save) ? msg : "0");
    for (int c = 0; c < 3; c++)
        dirs[c] = strtok_r(NULL, "\n", &save);
    ok(kid > 0 && (dirs[0] || dirs[1] || dirs[2]), "keeper: caller made a cgroup and a child");
    kill(caller, SIGKILL);
    wait_for(caller, NULL);
    double end = now_s() + 5;
    bool gone = false;
    while (!gone && now_s() < end) {
        gone = true;
        for (int c = 0; c < 3; c++)
            gone &= !dirs[c] || !exists(dirs[c]);
        if (!gone)
            usleep(2000);
    }
    ok(gone, "keeper: SIGKILL of the caller leaves no cgroup behind");
    int st = -1;
    while (kid > 0 && st < 0 && now_s() < end + 1) {
        int w = 0;
        if (waitpid(kid, &w, WNOHANG) == kid)
            st = WIFSIGNALED(w) ? 256 + WTERMSIG(w) : WEXITSTATUS(w);
        else
            usleep(2000);
    }
    is_int(st, 256 + SIGKILL, "keeper: ...and no process (the child was killed)");
    if (!gone || st < 0) /* the keeper failed: clean up after it */
        for (int c = 0; c < 3; c++) {
            int fd = dirs[c] ? open(dirs[c], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
            if (fd >= 0)
                rf_cgroupfs_kill(fd, true, 1000), close(fd), rmdir(dirs[c]);
        }
    reap_strays();
}

static bool mkdir_aged(const char *dir, const char *name, bool old)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct timespec t[2] = { { 1577836800, 0 }, { 1577836800, 0 } }; /* 2020 */
    bool r = mkdirat(fd, name, 0755) == 0 && (!old || utimensat(fd, name, t, 0) == 0);
    close(fd);
    return r;
}

static void test_sweep(void)
{
    rf_hierarchies h;
    rf_hierarchy_discover(&h, NULL);
    const char *dir = h.v1[RF_CTRL_PIDS].dir ? h.v1[RF_CTRL_PIDS].dir : h.v2.dir;
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    wait_for(dead, NULL);
    pid_t alive = fork();
    if (alive == 0) {
        pause();
        _exit(0);
    }
    char a[64], b[64], c[64], p[600];
    snprintf(a, sizeof a, "ringfence-%d-0-sweep", (int)dead);
    snprintf(b, sizeof b, "ringfence-%d-1-sweep", (int)dead);
    snprintf(c, sizeof c, "ringfence-%d-2-sweep", (int)alive);
    if (!dir || !mkdir_aged(dir, a, true) || !mkdir_aged(dir, b, false) || !mkdir_aged(dir, c, true)) {
        skip("sweep: cannot make test cgroups here");
    } else {
        ok(rf_cgroup_sweep_stale(RF_CGROUP_STALE_AGE_S) >= 1, "sweep: removes something");
        snprintf(p, sizeof p, "%s/%s", dir, a);
        ok(!exists(p), "sweep: an old leftover of a dead owner is removed");
        snprintf(p, sizeof p, "%s/%s", dir, b);
        ok(exists(p), "sweep: a young one is kept (its owner may live in another pid namespace)");
        snprintf(p, sizeof p, "%s/%s", dir, c);
        ok(exists(p), "sweep: one whose owner lives is kept");
    }
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        unlinkat(fd, a, AT_REMOVEDIR);
        unlinkat(fd, b, AT_REMOVEDIR);
        unlinkat(fd, c, AT_REMOVEDIR);
        close(fd);
    }
    kill(alive, SIGKILL);
    wait_for(alive, NULL);
    rf_hierarchy_clear(&h);
}

/* As uid 65534 nothing is writable: every limit falls back, with warnings;
 * with require_cgroup it is an error. Exit code = first failed check. */
static int child_unprivileged(void *arg)
{
    if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
        return 2;
    rf_limits l = { .memory_bytes = 128ull << 20, .pids = 64, .cpu = 0.25 };
    rf_limits_report how;
    char **warn = NULL;
    rf_cgroup *cg = NULL;
    if (rf_cgroup_create(&l, NULL, &cg, &how, &warn, NULL) < 0)
        return 3;
    if (how.memory != RF_LIMIT_RLIMIT || how.pids != RF_LIMIT_RLIMIT || how.cpu != RF_LIMIT_NONE)
        return 4;
    if (rf_strv_len(warn) != 3 || !strstr(warn[0], "limits.memory") ||
        !strstr(warn[0], "RLIMIT_DATA") || !strstr(warn[2], "limits.cpu"))
        return 5;
    if (rf_cgroup_dir(cg, "memory") || rf_cgroup_dir(cg, "pids"))
        return 6;
    rf_cgroup_destroy(cg);
    l.timeout_s = 8;
    if (rf_cgroup_create(&l, NULL, &cg, &how, NULL, NULL) < 0 || how.cpu != RF_LIMIT_RLIMIT)
        return 7;
    rf_cgroup_destroy(cg);
    l.require_cgroup = true;
    rf_error *err = NULL;
    cg = NULL;
    if (rf_cgroup_create(&l, NULL, &cg, &how, NULL, &err) == 0 || cg)
        return 8;
    if (!strstr(rf_error_message(err), "limits.require_cgroup") ||
        !strstr(rf_error_message(err), "limits.memory") || !rf_error_hint(err))
        return 9;
    printf("#   %s\n#   hint: %s\n#   warning: %s\n", rf_error_message(err), rf_error_hint(err),
           warn[1]);
    fflush(stdout); /* the parent waits with _exit, which does not flush */
    rf_error_free(err);
    rf_strv_free(warn);
    return 0;
}

static void test_unprivileged(void)
{
    if (geteuid() != 0)
        return skip("fallback as uid 65534: needs root to switch uid");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(child_unprivileged(NULL));
    is_int(wait_for(pid, NULL), 0,
           "no writable cgroup: rlimit fallback with warnings; require_cgroup refuses");
}

int main(void)
{
    /* Orphans of the test children come to us, so we can check how they
     * died; reaped as we go. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    atexit(destroy_all);
    rf_limits all = { .memory_bytes = 64ull << 20, .pids = 64, .cpu = 1, .timeout_s = 1 };
    char **warn = NULL;
    rf_error *err = NULL;
    int probed = rf_limits_probe(&all, &host, &warn, &err);
    ok(probed == 0, "probe: what enforces each limit here");
    if (probed < 0) {
        printf("# probe: %s\n", rf_error_message(err));
        rf_error_free(err);
    }
    printf("# this host: memory %s, pids %s, cpu %s\n", rf_limit_how_name(host.memory),
           rf_limit_how_name(host.pids), rf_limit_how_name(host.cpu));
    for (size_t i = 0; warn && warn[i]; i++)
        printf("# warning: %s\n", warn[i]);
    rf_strv_free(warn);

    test_no_limits();
    test_unprivileged();
    test_sweep();
    if (host.memory == RF_LIMIT_RLIMIT && host.pids == RF_LIMIT_RLIMIT &&
        host.cpu == RF_LIMIT_RLIMIT) {
        skip("no writable cgroup hierarchy: cgroup tests skipped");
        return done_testing();
    }
    test_create_attach_destroy();
    test_clone_into_cgroup();
    test_fork_bomb();
    test_oom();
    test_kill_tree();
    test_keeper();
    test_cpu();
    reap_strays();
    return done_testing();
}
