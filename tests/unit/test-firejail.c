/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firejail backend's translator (backend/firejail/argv.c) against a
 * golden file: a plan with one mount of every kind, on a host whose
 * directories a fixed lister describes, gives exactly
 * tests/golden/firejail.txt (the argv, then the profile, one line each).
 * Then what the walk must never do (blacklist what the plan shows, leave a
 * sibling of the workspace visible, pass a newline into the profile), and
 * a plan built through the library naming firejail, or refusing it with
 * the reason and the fix. RF_UPDATE_GOLDEN=1 rewrites the golden file. */
#include "tap.h"
#include "ringfence.h"
#include "backend/firejail/firejail.h"
#include "util/strv.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOLDEN RF_SOURCE_DIR "/tests/golden/firejail.txt"
#define S(x) ((char *)(x))

static rf_mount mounts[] = {
    { .type = RF_MOUNT_BIND, .source = S("/usr"), .target = S("/usr"), .source_dir = true, .why = S("system") },
    { .type = RF_MOUNT_SYMLINK, .source = S("usr/bin"), .target = S("/bin"), .why = S("system") },
    { .type = RF_MOUNT_COPY, .source = S("/etc/passwd"), .target = S("/etc/passwd"), .why = S("etc") },
    { .type = RF_MOUNT_BIND, .source = S("/etc/ssl"), .target = S("/etc/ssl"), .source_dir = true, .why = S("etc") },
    { .type = RF_MOUNT_TMPFS, .target = S("/etc/ssl/private"), .mode = 0700, .why = S("masked") },
    { .type = RF_MOUNT_PROC, .target = S("/proc"), .why = S("proc") },
    { .type = RF_MOUNT_RO_SELF, .target = S("/proc/sys"), .why = S("proc") },
    { .type = RF_MOUNT_TMPFS, .target = S("/dev"), .mode = 0755, .why = S("dev") },
    { .type = RF_MOUNT_TMPFS, .target = S("/dev/shm"), .writable = true, .mode = 01777, .why = S("dev") },
    { .type = RF_MOUNT_TMPFS, .target = S("/tmp"), .writable = true, .mode = 01777, .why = S("tmp") },
    { .type = RF_MOUNT_BIND, .source = S("/home/u/ws"), .target = S("/home/u/ws"), .writable = true,
      .source_dir = true, .why = S("workspace") },
    { .type = RF_MOUNT_BIND, .source = S("/tmp/shared"), .target = S("/tmp/shared"), .source_dir = true,
      .why = S("expose") },
    { .type = RF_MOUNT_RO_SELF, .target = S("/home/u/ws/.git/hooks"), .source_dir = true, .why = S("protected") },
};

static char *env[] = { S("PATH=/usr/bin:/bin"), S("HOME=/home/u/.ringfence/runtime-user-env"), NULL };
static char *argv[] = { S("make"), S("-j2"), NULL };

/* The host: a few entries per directory; the workspace's siblings too. */
static char **fake_list(const char *dir, void *data)
{
    static const struct { const char *dir, *names; } host[] = {
        { "/", "bin etc home proc root run srv tmp usr var" },
        { "/etc", "hostname passwd shadow ssl" },
        { "/home", "other u" },
        { "/home/u", ".ssh notes ws" },
        { "/run", "dbus firejail user" },
    };
    const char *bad = data;
    char **v = calloc(1, sizeof(char *));
    for (size_t i = 0; v && i < sizeof host / sizeof host[0]; i++) {
        if (strcmp(host[i].dir, dir) != 0)
            continue;
        char *copy = strdup(host[i].names), *save = NULL;
        for (char *n = strtok_r(copy, " ", &save); n; n = strtok_r(NULL, " ", &save))
            rf_strv_push(&v, n);
        free(copy);
        if (bad && !strcmp(dir, "/home/u"))
            rf_strv_push(&v, bad);
    }
    return v;
}

static rf_plan base_plan(void)
{
    return (rf_plan){
        .backend = RF_BACKEND_FIREJAIL,
        .clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET,
        .hostname = S("ringfence"),
        .mounts = mounts,
        .n_mounts = sizeof mounts / sizeof mounts[0],
        .argv = argv,
        .exec_path = S("/usr/bin/make"),
        .env = env,
        .cwd = S("/home/u/ws"),
        .seccomp = RF_SECCOMP_DEFAULT,
    };
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

static char *render(const rf_firejail_invocation *inv)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    fputs("# argv\n", f);
    for (size_t i = 0; inv->argv[i]; i++)
        fprintf(f, "%s\n", inv->argv[i]);
    fprintf(f, "# profile\n%s", inv->profile);
    fclose(f);
    return s;
}

static bool has_line(const char *profile, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = profile; (p = strstr(p, line)); p += n)
        if ((p == profile || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

static void test_golden(void)
{
    rf_plan plan = base_plan();
    rf_firejail_invocation inv = { 0 };
    ok(rf_firejail_build(&plan, fake_list, NULL, &inv, NULL) == 0, "translate a plan with every kind of mount");
    if (!inv.argv)
        return;
    char *got = render(&inv);
    if (getenv("RF_UPDATE_GOLDEN")) {
        FILE *f = fopen(GOLDEN, "we");
        if (f) {
            fputs(got, f);
            fclose(f);
        }
    }
    char *want = slurp(GOLDEN);
    ok(want && got && !strcmp(got, want), "argv and profile are the golden file's (tests/golden/firejail.txt)");
    if (want && got && strcmp(got, want))
        printf("# got:\n%s", got);
    const char *p = inv.profile;
    ok(has_line(p, "blacklist /home/other") && has_line(p, "blacklist /home/u/.ssh") &&
           has_line(p, "blacklist /home/u/notes"), "the workspace's siblings and its parent's are blacklisted");
    ok(has_line(p, "blacklist /etc/shadow") && has_line(p, "blacklist /srv") && has_line(p, "blacklist /var") &&
           has_line(p, "blacklist /root"), "what the plan does not show is blacklisted");
    ok(!strstr(p, "blacklist /usr") && !strstr(p, "blacklist /home/u/ws") && !strstr(p, "blacklist /etc/passwd") &&
           !strstr(p, "blacklist /run/firejail") && !strstr(p, "blacklist /tmp") && !strstr(p, "blacklist /proc"),
       "nothing the plan shows (nor firejail's own /run/firejail) is blacklisted");
    ok(has_line(p, "blacklist /etc/ssl/private"), "a masked path is blacklisted");
    ok(has_line(p, "read-only /") && has_line(p, "read-write /home/u/ws") &&
           has_line(p, "read-only /home/u/ws/.git/hooks"), "read-only root, writable workspace, protected path ro");
    ok(has_line(p, "whitelist /tmp/shared") && has_line(p, "net none") && has_line(p, "caps.drop all") &&
           has_line(p, "nonewprivs") && has_line(p, "noroot") && has_line(p, "private-dev"),
       "private /tmp with the expose, no network, no capabilities, no_new_privs, a user namespace, /dev");
    ok(rf_strv_contains(inv.argv, "-u") && rf_strv_contains(inv.argv, "container"),
       "env takes back what firejail adds to the environment");
    free(got);
    free(want);
    rf_firejail_invocation_free(&inv);
}

static void test_refusals(void)
{
    rf_plan plan = base_plan();
    rf_firejail_invocation inv = { 0 };
    rf_error *err = NULL;
    ok(rf_firejail_build(&plan, fake_list, S("evil\nread-write /"), &inv, &err) < 0 && err &&
           strstr(rf_error_message(err), "newline"),
       "a host name with a newline is refused, never written into the profile");
    rf_error_free(err);
    rf_firejail_invocation_free(&inv);
    plan.seccomp = RF_SECCOMP_OFF;
    plan.clone_flags &= ~CLONE_NEWNET;
    ok(rf_firejail_build(&plan, fake_list, NULL, &inv, NULL) == 0 && !has_line(inv.profile, "seccomp") &&
           !has_line(inv.profile, "net none"),
       "seccomp off, network host: neither in the profile");
    rf_firejail_invocation_free(&inv);
}

static void test_plan(void)
{
    char dir[] = "/tmp/rf-firejail.XXXXXX";
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
    if (rf_config_add_json(cfg, "test", "{\"backend\": \"firejail\"}", &err) == 0 &&
        (policy = rf_policy_resolve(cfg, &ctx, &err)))
        plan = rf_plan_build(policy, args, &err);
    char why[400];
    if (rf_firejail_usable(why, sizeof why) && getuid() != 0) {
        ok(plan && !strcmp(rf_plan_backend(plan), "firejail"), "backend firejail: the plan names firejail");
        if (!plan)
            printf("# %s\n", err ? rf_error_message(err) : "no error");
        char *json = plan ? rf_plan_to_json(plan) : NULL;
        ok(json && strstr(json, "\"firejail\"") && strstr(json, "/usr/bin/firejail") && strstr(json, "profile"),
           "the plan shows firejail's argv and profile");
        ok(plan && rf_strv_contains(rf_plan_cannot(plan), rf_firejail_cannot(&(size_t){ 0 })[0]),
           "the plan lists what firejail cannot do");
        free(json);
    } else {
        /* Unusable, or a root caller with a root-owned workspace: refused. */
        ok(!plan && err && strstr(rf_error_message(err), "backend firejail") && rf_error_hint(err),
           "firejail cannot run this here: refused, naming the backend, why and the fix");
        if (err)
            printf("# %s\n", rf_error_message(err));
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

int main(void)
{
    test_golden();
    test_refusals();
    test_plan();
    return done_testing();
}
