/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bwrap backend's translator (backend/bwrap/argv.c) against a golden
 * file: a plan with one mount of every kind, in the plan's order, gives
 * exactly tests/golden/bwrap-argv.txt (one argument per line). Then the
 * variations (network host, seccomp off) and a plan built through the
 * library naming bwrap, or refusing it with the reason and the fix.
 * RF_UPDATE_GOLDEN=1 rewrites the golden file (review the diff). */
#include "tap.h"
#include "ringfence.h"
#include "backend/bwrap/bwrap.h"
#include "util/strv.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOLDEN RF_SOURCE_DIR "/tests/golden/bwrap-argv.txt"
/* The plan holds mutable strings; these literals are never written. */
#define S(x) ((char *)(x))

static rf_mount mounts[] = {
    { .type = RF_MOUNT_BIND, .source = S("/usr"), .target = S("/usr"), .source_dir = true, .why = S("system") },
    { .type = RF_MOUNT_SYMLINK, .source = S("usr/bin"), .target = S("/bin"), .why = S("system") },
    { .type = RF_MOUNT_COPY, .source = S("/etc/passwd"), .target = S("/etc/passwd"), .why = S("etc") },
    { .type = RF_MOUNT_BIND, .source = S("/etc/ssl"), .target = S("/etc/ssl"), .source_dir = true, .why = S("etc") },
    { .type = RF_MOUNT_SYMLINK, .source = S("/usr/share/zoneinfo/UTC"), .target = S("/etc/localtime"), .why = S("etc") },
    { .type = RF_MOUNT_TMPFS, .target = S("/etc/ssl/private"), .mode = 0700, .why = S("masked") },
    { .type = RF_MOUNT_PROC, .target = S("/proc"), .why = S("proc") },
    { .type = RF_MOUNT_RO_SELF, .target = S("/proc/sys"), .why = S("proc") },
    { .type = RF_MOUNT_TMPFS, .target = S("/dev"), .mode = 0755, .why = S("dev") },
    { .type = RF_MOUNT_BIND, .source = S("/dev/null"), .target = S("/dev/null"), .writable = true, .devices = true,
      .why = S("dev") },
    { .type = RF_MOUNT_DEVPTS, .target = S("/dev/pts"), .writable = true, .why = S("dev") },
    { .type = RF_MOUNT_TMPFS, .target = S("/dev/shm"), .writable = true, .mode = 01777, .why = S("dev") },
    { .type = RF_MOUNT_SYMLINK, .source = S("/proc/self/fd"), .target = S("/dev/fd"), .why = S("dev") },
    { .type = RF_MOUNT_TMPFS, .target = S("/tmp"), .writable = true, .mode = 01777, .why = S("tmp") },
    { .type = RF_MOUNT_BIND, .source = S("/home/u/ws"), .target = S("/home/u/ws"), .writable = true, .source_dir = true,
      .why = S("workspace") },
    { .type = RF_MOUNT_BIND, .source = S("/srv/data"), .target = S("/data"), .source_dir = true, .why = S("expose") },
    { .type = RF_MOUNT_RO_SELF, .target = S("/home/u/ws/.git/hooks"), .source_dir = true, .why = S("protected") },
};

static char *env[] = { S("PATH=/usr/bin:/bin"), S("HOME=/home/u/.ringfence/runtime-user-env"), S("EMPTY="), NULL };
static char *argv[] = { S("make"), S("-j2"), S("test"), NULL };

static rf_plan base_plan(void)
{
    return (rf_plan){
        .backend = RF_BACKEND_BWRAP,
        .clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
                       CLONE_NEWNET,
        .hostname = S("ringfence"),
        .mounts = mounts,
        .n_mounts = sizeof mounts / sizeof mounts[0],
        .argv = argv,
        .exec_path = S("/usr/bin/make"),
        .env = env,
        .cwd = S("/home/u/ws/src"),
        .seccomp = RF_SECCOMP_DEFAULT,
    };
}

static char *joined(char **v)
{
    size_t len = 1;
    for (size_t i = 0; v[i]; i++)
        len += strlen(v[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; s && v[i]; i++) {
        strcat(s, v[i]);
        strcat(s, "\n");
    }
    return s;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = buf ? fread(buf, 1, 65535, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

static void test_golden(void)
{
    rf_plan plan = base_plan();
    char **v = NULL;
    ok(rf_bwrap_argv(&plan, &v, NULL) == 0, "translate a plan with every kind of mount");
    if (!v)
        return;
    char *got = joined(v);
    if (getenv("RF_UPDATE_GOLDEN")) {
        FILE *f = fopen(GOLDEN, "we");
        if (f) {
            fputs(got, f);
            fclose(f);
        }
    }
    char *want = slurp(GOLDEN);
    ok(want && got && !strcmp(got, want), "the argv is the golden file's (tests/golden/bwrap-argv.txt)");
    if (want && got && strcmp(got, want))
        printf("# got:\n%s", got);
    ok(rf_strv_contains(v, "--unshare-net"), "network none: its own network namespace");
    ok(rf_strv_contains(v, "--seccomp"), "the filter is handed over");
    ok(!rf_strv_contains(v, "--devpts") && !rf_strv_contains(v, "/dev/null"),
       "the /dev nodes and devpts come from bwrap's --dev");
    free(got);
    free(want);
    rf_strv_free(v);
}

static void test_variations(void)
{
    rf_plan plan = base_plan();
    plan.clone_flags &= ~CLONE_NEWNET;
    plan.seccomp = RF_SECCOMP_OFF;
    char **v = NULL;
    ok(rf_bwrap_argv(&plan, &v, NULL) == 0, "translate with network host and seccomp off");
    ok(v && !rf_strv_contains(v, "--unshare-net"), "network host: no network namespace");
    ok(v && !rf_strv_contains(v, "--seccomp"), "seccomp off: no filter handed over");
    ok(v && rf_strv_contains(v, "--json-status-fd") && rf_strv_contains(v, "--block-fd"),
       "the status and block descriptors are always there");
    rf_strv_free(v);
    v = NULL;
    /* network: allowlist: the monitor's network namespace, which holds the
     * proxy's port, is the sandbox's; bwrap must not make another. */
    plan = base_plan();
    plan.network = RF_NET_ALLOWLIST;
    ok(rf_bwrap_argv(&plan, &v, NULL) == 0 && v && !rf_strv_contains(v, "--unshare-net") &&
           rf_strv_contains(v, "--unshare-user"),
       "network allowlist: no network namespace of bwrap's (the monitor's is shared), a user namespace still");
    rf_strv_free(v);
}

static void test_plan(void)
{
    char dir[] = "/tmp/rf-bwrap.XXXXXX";
    if (!mkdtemp(dir))
        return (void)ok(0, "scratch directory");
    char home[64];
    snprintf(home, sizeof home, "%s/home", dir);
    rf_context ctx = { .cwd = dir, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp", .rf_home = home };
    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    rf_policy *policy = NULL;
    rf_plan *plan = NULL;
    char *args[] = { S("true"), NULL };
    if (rf_config_add_json(cfg, "test", "{\"backend\": \"bwrap\"}", &err) == 0 &&
        (policy = rf_policy_resolve(cfg, &ctx, &err)))
        plan = rf_plan_build(policy, args, &err);
    char why[400];
    if (rf_bwrap_usable(why, sizeof why)) {
        ok(plan && !strcmp(rf_plan_backend(plan), "bwrap"), "backend bwrap: the plan names bwrap, not native");
        if (!plan)
            printf("# %s\n", err ? rf_error_message(err) : "no error");
        char *json = plan ? rf_plan_to_json(plan) : NULL;
        ok(json && strstr(json, "\"bwrap\"") && strstr(json, "/usr/bin/bwrap"), "the plan shows bwrap's argv");
        ok(plan && rf_strv_contains(rf_plan_cannot(plan), rf_bwrap_cannot(&(size_t){ 0 })[0]),
           "the plan lists what bwrap cannot do");
        free(json);
    } else {
        ok(!plan && err && strstr(rf_error_message(err), "backend bwrap cannot run here"),
           "bwrap unusable here: refused, naming the backend and why");
        printf("# %s\n", why);
    }
    rf_plan_free(plan);
    rf_policy_free(policy);
    rf_config_free(cfg);
    rf_error_free(err);
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

/* changes: overlay: the workspace as bwrap's overlay, in the bind's place. */
static void test_overlay(void)
{
    rf_mount m[sizeof mounts / sizeof mounts[0]];
    memcpy(m, mounts, sizeof m);
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(m[i].why, "workspace"))
            m[i].overlay = S("/home/u/.ringfence/sessions/0123456789ab");
    rf_plan plan = base_plan();
    plan.mounts = m;
    char **v = NULL;
    ok(rf_bwrap_argv(&plan, &v, NULL) == 0 && v, "translate a plan with changes: overlay");
    size_t i = 0;
    while (v && v[i] && strcmp(v[i], "--overlay-src"))
        i++;
    ok(v && v[i] && !strcmp(v[i + 1], "/home/u/ws") && !strcmp(v[i + 2], "--overlay") &&
           !strcmp(v[i + 3], "/home/u/.ringfence/sessions/0123456789ab/upper") &&
           !strcmp(v[i + 4], "/home/u/.ringfence/sessions/0123456789ab/work") && !strcmp(v[i + 5], "/home/u/ws"),
       "--overlay-src WS --overlay UPPER WORK WS");
    bool bound = false;
    for (size_t k = 0; v && v[k + 2]; k++)
        bound |= !strcmp(v[k], "--bind") && !strcmp(v[k + 1], "/home/u/ws");
    ok(!bound, "the workspace is not also bound writable");
    rf_strv_free(v);
}

int main(void)
{
    test_golden();
    test_variations();
    test_overlay();
    test_plan();
    return done_testing();
}
