/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The warm pool through the library (rf_pool_run): the command's status
 * comes back, nothing of one command is seen by the next (its /tmp, its
 * pid), every process the command left is dead when rf_pool_run returns
 * (the sandbox's init is only reaped later, by the pool's thread: see
 * pool.c), and after rf_pool_free no process of the pool is left. The
 * socket side (serve, run --via) is tests/security/pool.sh. */
#include "tap.h"
#include "ringfence.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define POOL_SIZE 2

static char ws[64], home[128];

static rf_pool *make_pool(rf_error **err)
{
    rf_context ctx = { .cwd = ws, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp", .rf_home = home };
    rf_config *cfg = rf_config_new();
    rf_policy *policy = NULL;
    rf_pool *pool = NULL;
    if (rf_config_add_json(cfg, "test", "{\"backend\": \"native\"}", err) == 0 &&
        (policy = rf_policy_resolve(cfg, &ctx, err)))
        pool = rf_pool_new(policy, POOL_SIZE, err);
    rf_policy_free(policy);
    rf_config_free(cfg);
    return pool;
}

/* Run `sh -c SCRIPT` in the pool; its exit code (-1 on error), its stdout in out. */
static int run(rf_pool *pool, const char *script, char *out, size_t outlen)
{
    char *const argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
    char path[160];
    snprintf(path, sizeof path, "%s/out.XXXXXX", home);
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    rf_pool_request req = { .argv = argv, .stdio = { -1, fd, -1 } };
    rf_status st;
    rf_error *err = NULL;
    int rc = rf_pool_run(pool, &req, &st, &err);
    if (rc < 0)
        printf("# rf_pool_run: %s\n", rf_error_message(err));
    rf_error_free(err);
    ssize_t n = pread(fd, out, outlen - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    int code = rc == 0 && st.exited ? st.exit_code : -1;
    if (rc == 0)
        rf_status_clear(&st);
    return code;
}

/* How many processes have this process as parent (any of its threads). */
static int children(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        buf[len] = '\0';
        for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
            n++;
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* Is a process whose command line holds NEEDLE running anywhere on the host? */
static bool host_has(const char *needle)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool found = false;
    while (d && !found && (e = readdir(d))) {
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        int fd = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0)
            continue;
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        for (ssize_t i = 0; i < len; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[len > 0 ? len : 0] = '\0';
        found = strstr(buf, needle) != NULL;
    }
    if (d)
        closedir(d);
    return found;
}

/* Polls cond(arg) every 50 ms for up to `seconds`. */
static bool soon(bool (*cond)(const void *arg), const void *arg, int seconds)
{
    for (int i = 0; i < seconds * 20; i++) {
        if (cond(arg))
            return true;
        struct timespec t = { 0, 50 * 1000 * 1000 };
        nanosleep(&t, NULL);
    }
    return cond(arg);
}

static bool host_has_cond(const void *needle)
{
    return host_has(needle);
}

static bool children_cond(const void *want)
{
    return children() == *(const int *)want;
}

/* The control's process is started by a shell that returns at once: on a
 * loaded machine it may still be between fork and exec (its cmdline read
 * empty mid-exec), so look for it for a while. */
static bool host_has_soon(const char *needle, int seconds)
{
    return soon(host_has_cond, needle, seconds);
}

/* RF_STDIO_PTY: rf_pool_run relays the pty to our own fd 0 and 1, so
 * those are /dev/null (input: at once EOF) and a file meanwhile, the TAP
 * stream kept aside. */
static void pty_run(rf_pool *pool)
{
    char path[160];
    snprintf(path, sizeof path, "%s/pty.XXXXXX", home);
    int fd = mkstemp(path), null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    fflush(stdout);
    int saved0 = dup(0), saved1 = dup(1);
    if (fd < 0 || null < 0 || saved0 < 0 || saved1 < 0 || dup2(null, 0) < 0 || dup2(fd, 1) < 0) {
        ok(0, "set up the pty run's stdio");
        return;
    }
    char *const argv[] = { (char *)"sh", (char *)"-c", (char *)"tty; [ -t 1 ] && echo out-is-a-tty; exit 4", NULL };
    rf_pool_request req = { .argv = argv, .stdio = { RF_STDIO_PTY, RF_STDIO_PTY, -1 } };
    rf_status st;
    rf_error *err = NULL;
    int rc = rf_pool_run(pool, &req, &st, &err);
    dup2(saved0, 0);
    dup2(saved1, 1);
    close(saved0);
    close(saved1);
    close(null);
    char out[256];
    ssize_t n = pread(fd, out, sizeof out - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    if (!ok(rc == 0, "RF_STDIO_PTY through rf_pool_run: the command runs"))
        printf("# %s\n", rf_error_message(err));
    rf_error_free(err);
    like(out, "/dev/pts/0", "its stdin is a pty of the sandbox's own devpts, relayed to our fd 1");
    like(out, "out-is-a-tty", "its stdout too");
    is_int(rc == 0 ? st.exit_code : -1, 4, "its exit status comes back");
    if (rc == 0)
        rf_status_clear(&st);
}

static bool wait_for_children(int want, int seconds)
{
    return soon(children_cond, &want, seconds);
}

int main(void)
{
    snprintf(ws, sizeof ws, "/tmp/rf-pool.XXXXXX");
    if (!mkdtemp(ws))
        return ok(0, "scratch directory"), done_testing();
    snprintf(home, sizeof home, "%s/home", ws);
    mkdir(home, 0700);
    rf_error *err = NULL;
    rf_pool *pool = make_pool(&err);
    char out[256];
    if (!pool || run(pool, "true", out, sizeof out) != 0) {
        printf("ok %d - # SKIP the native backend cannot build a sandbox here: %s\n", ++tap_n,
               err ? rf_error_message(err) : "its first run failed");
        rf_error_free(err);
        rf_pool_free(pool);
        return done_testing();
    }
    is_int(run(pool, "exit 7", out, sizeof out), 7, "the command's exit code comes back");
    is_int(run(pool, "echo planted > /tmp/mark; test -e /tmp/mark", out, sizeof out), 0,
           "a command writes its /tmp");
    is_int(run(pool, "test ! -e /tmp/mark", out, sizeof out), 0, "the next command does not see it");
    run(pool, "echo $$", out, sizeof out);
    is_str(out, "2\n", "each command is the first of a fresh pid namespace (init is 1)");
    run(pool, "echo $$", out, sizeof out);
    is_str(out, "2\n", "  ... the next one too");

    char script[128], token[32];
    snprintf(token, sizeof token, "31%d.25", (int)(getpid() % 1000));
    snprintf(script, sizeof script, "setsid sleep %s </dev/null >/dev/null 2>&1 & sleep %s & exit 0", token, token);
    char control[320], ctoken[32];
    snprintf(ctoken, sizeof ctoken, "41%d.75", (int)(getpid() % 1000));
    snprintf(control, sizeof control, "sleep %s & echo $! > %s/control.pid", ctoken, home);
    if (system(control) == 0) {
        ok(host_has_soon(ctoken, 10), "control: a process of that kind on the host is found");
        snprintf(control, sizeof control, "kill $(cat %s/control.pid)", home);
        (void)!system(control);
    }
    pty_run(pool);
    is_int(run(pool, script, out, sizeof out), 0, "a command leaves two background processes");
    ok(!host_has(token), "when rf_pool_run returns, every process it left is dead");
    ok(wait_for_children(POOL_SIZE, 10), "the finished sandbox's init is reaped by the pool (only the idle ones left)");

    rf_pool_free(pool);
    ok(children() == 0, "after rf_pool_free no process of the pool is left");

    /* rf_pool_free at once after a run: the pool's thread is then freeing
     * the retired run with its lock dropped, and the stop asked meanwhile
     * must not be lost (it was: the thread went back to wait for ever). A
     * hang is the failure: the alarm ends the test. */
    alarm(120);
    bool ended = true;
    for (int i = 0; i < 5 && ended; i++) {
        rf_pool *quick = make_pool(&err);
        ended = quick && run(quick, "true", out, sizeof out) == 0;
        rf_pool_free(quick);
    }
    alarm(0);
    ok(ended, "rf_pool_free right after a run ends (5 rounds)");
    rf_error_free(err);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ws);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", ws);
    return done_testing();
}
