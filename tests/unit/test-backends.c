/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backends through the library: which backend a plan names and what it
 * says it cannot do, the landlock refusals with their exit code, and a tree
 * killed through rf_proc_kill(SIGKILL) without a pid namespace (a
 * setsid'd, double-forked, SIGTERM-ignoring grandchild included). */
#include "tap.h"
#include "ringfence.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[64], ws[96], home[96];
static bool have_landlock = true;
static rf_context ctx;

static rf_plan *plan_for(const char *json, char *const argv[], rf_error **err)
{
    rf_config *cfg = rf_config_new();
    rf_policy *policy = NULL;
    rf_plan *plan = NULL;
    if (rf_config_add_json(cfg, "test", json, err) == 0 && (policy = rf_policy_resolve(cfg, &ctx, err)))
        plan = rf_plan_build(policy, argv, err);
    rf_policy_free(policy);
    rf_config_free(cfg);
    return plan;
}

static bool lists(char *const *v, const char *needle)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strstr(v[i], needle))
            return true;
    return false;
}

static void test_plans(void)
{
    char *const argv[] = { (char *)"true", NULL };
    rf_error *err = NULL;
    rf_plan *p = plan_for("{}", argv, &err);
    is_str(p ? rf_plan_backend(p) : NULL, "native", "default: native");
    /* Only the protected paths absent from this workspace (issue 13). */
    char *const *cannot = p ? rf_plan_cannot(p) : NULL;
    ok(cannot && (!cannot[0] || (strstr(cannot[0], "do not exist") && !cannot[1])),
       "native: nothing in the cannot list but absent protected paths");
    rf_plan_free(p);

    p = plan_for("{\"backend\": \"none\"}", argv, &err);
    is_str(p ? rf_plan_backend(p) : NULL, "none", "backend none");
    ok(p && lists(rf_plan_cannot(p), "no filesystem isolation"), "none: says it does not isolate");
    ok(p && lists(rf_plan_warnings(p), "WITHOUT a sandbox"), "none: a warning");
    rf_plan_free(p);

    /* Never replaced by native any more: firejail, or refused naming it. */
    p = plan_for("{\"backend\": \"firejail\"}", argv, &err);
    ok(p ? !strcmp(rf_plan_backend(p), "firejail") : err && strstr(rf_error_message(err), "backend firejail"),
       "firejail: the plan names firejail, or the refusal does");
    rf_plan_free(p);
    rf_error_free(err);
    err = NULL;

    p = plan_for("{\"backend\": \"landlock\"}", argv, &err);
    if (err && strstr(rf_error_message(err), "no usable Landlock")) {
        printf("ok %d - landlock # SKIP no Landlock in this kernel\n", ++tap_n);
        have_landlock = false;
        rf_error_free(err);
        return;
    }
    ok(p == NULL, "landlock, default policy: refused");
    is_int(err ? rf_error_exit_code(err) : 0, RF_EXIT_FAILURE, "landlock refusal: exit code 125");
    like(err ? rf_error_message(err) : NULL, "private", "landlock refusal: names the private /tmp");
    like(err ? rf_error_hint(err) : NULL, "accept_weaker", "landlock refusal: the hint names the setting");
    rf_error_free(err);
    err = NULL;

    p = plan_for("{\"backend\": \"landlock\", \"accept_weaker\": true}", argv, &err);
    is_str(p ? rf_plan_backend(p) : NULL, "landlock", "landlock with accept_weaker");
    ok(p && lists(rf_plan_cannot(p), "host processes stay visible"), "landlock: the cannot list");
    ok(p && lists(rf_plan_warnings(p), "weaker sandbox accepted"), "landlock: the accepted weakness is a warning");
    rf_plan_free(p);
    rf_error_free(err);
}

static void touch(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

/* deny_paths: one mask per denied path a bind shows (a tmpfs over a
 * directory, a file mask over a file), none for an absent one (a cannot
 * entry instead), a refusal for one holding the workspace, and Landlock
 * rules that leave out every one of several masks under one workspace. */
static void test_deny(void)
{
    char *const argv[] = { (char *)"true", NULL };
    char dir[128], json[1024];
    snprintf(dir, sizeof dir, "%s/.secrets", ws);
    mkdir(dir, 0755);
    touch(ws, ".env");
    touch(ws, "public");
    snprintf(json, sizeof json, "{\"deny_paths\": [\"%s/.env\", \"%s\", \"%s/absent\", \"/nowhere/x\"]}", ws, dir,
             ws);
    rf_error *err = NULL;
    rf_plan *p = plan_for(json, argv, &err);
    char *j = p ? rf_plan_to_json(p) : NULL;
    char want[512];
    snprintf(want, sizeof want, "\"type\": \"file-mask\",\n      \"hides\": \"%s/.env\"", ws);
    like(j, want, "deny: a denied file gets a file mask naming the host path");
    snprintf(want, sizeof want, "\"type\": \"tmpfs\",\n      \"hides\": \"%s\"", dir);
    like(j, want, "deny: a denied directory gets a tmpfs");
    ok(j && !strstr(j, "/nowhere/x"), "deny: a path no bind shows needs no mask");
    ok(p && lists(rf_plan_cannot(p), "absent does not exist"), "deny: an absent path is in the cannot list");
    free(j);
    rf_plan_free(p);

    snprintf(json, sizeof json, "{\"deny_paths\": [\"%s\"]}", top);
    p = plan_for(json, argv, &err);
    ok(!p, "deny: a deny path holding the workspace is refused");
    like(err ? rf_error_message(err) : NULL, "contains the workspace", "deny: the refusal names the workspace");
    is_int(err ? rf_error_exit_code(err) : 0, RF_EXIT_FAILURE, "deny: exit code 125");
    rf_error_free(err);
    err = NULL;

    if (have_landlock) {
        snprintf(json, sizeof json, "{\"backend\": \"landlock\", \"accept_weaker\": true, \"deny_paths\": "
                                    "[\"%s/.env\", \"%s\"]}", ws, dir);
        p = plan_for(json, argv, &err);
        j = p ? rf_plan_to_json(p) : NULL;
        snprintf(want, sizeof want, "\"path\": \"%s/public\"", ws);
        like(j, want, "landlock deny: the other entries are granted one by one");
        snprintf(want, sizeof want, "\"path\": \"%s/.env\"", ws);
        ok(j && !strstr(j, want), "landlock deny: not the first denied path");
        snprintf(want, sizeof want, "\"path\": \"%s\"", dir);
        ok(j && !strstr(j, want), "landlock deny: nor the second");
        free(j);
        rf_plan_free(p);
        rf_error_free(err);
        err = NULL;
    }
    snprintf(json, sizeof json, "rm -rf '%s' '%s/.env' '%s/public'", dir, ws, ws);
    if (system(json) != 0)
        printf("# could not clean %s\n", ws);
}

static bool gone(pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        if (kill(pid, 0) < 0 && errno == ESRCH)
            return true;
        usleep(20000);
    }
    return false;
}

static void test_tree_kill(const char *backend)
{
    char json[128], desc[128], pidfile[128];
    snprintf(json, sizeof json, "{\"backend\": \"%s\", \"accept_weaker\": true}", backend);
    snprintf(pidfile, sizeof pidfile, "%s/gc.pid", ws);
    unlink(pidfile);
    char *const argv[] = {
        (char *)"sh", (char *)"-c",
        (char *)"trap '' TERM; setsid sh -c 'trap \"\" TERM; (trap \"\" TERM; exec sleep 300) & "
                "echo $! > gc.tmp; mv gc.tmp gc.pid; wait' & sleep 300",
        NULL,
    };
    rf_error *err = NULL;
    rf_plan *plan = plan_for(json, argv, &err);
    rf_proc *proc = plan ? rf_spawn(plan, NULL, &err) : NULL;
    snprintf(desc, sizeof desc, "%s: started", backend);
    if (!ok(proc != NULL, desc)) {
        printf("# %s\n", err ? rf_error_message(err) : "?");
        rf_error_free(err);
        rf_plan_free(plan);
        return;
    }
    pid_t gc = 0;
    for (int i = 0; i < 250 && gc <= 0; i++) {
        FILE *f = fopen(pidfile, "re");
        if (!f || fscanf(f, "%d", &gc) != 1)
            usleep(20000);
        if (f)
            fclose(f);
    }
    snprintf(desc, sizeof desc, "%s: the grandchild runs", backend);
    ok(gc > 0 && kill(gc, 0) == 0, desc);
    rf_proc_kill(proc, SIGKILL);
    rf_status st;
    snprintf(desc, sizeof desc, "%s: waited", backend);
    ok(rf_proc_wait(proc, &st, &err) == 0, desc);
    snprintf(desc, sizeof desc, "%s: the command died of SIGKILL", backend);
    is_int(st.exit_code, 128 + SIGKILL, desc);
    snprintf(desc, sizeof desc, "%s: rf_proc_kill(SIGKILL) took the setsid'd grandchild too", backend);
    ok(gc > 0 && gone(gc), desc);
    rf_status_clear(&st);
    rf_proc_free(proc);
    rf_plan_free(plan);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/rf-backends.XXXXXX");
    if (!mkdtemp(top))
        return ok(0, "scratch directory"), done_testing();
    /* The instance root beside the workspace: one inside it is masked, and
     * under Landlock the workspace's top would take no new files. */
    snprintf(ws, sizeof ws, "%s/ws", top);
    snprintf(home, sizeof home, "%s/home", top);
    chmod(top, 0755);
    if (mkdir(ws, 0777) < 0 || chmod(ws, 0777) < 0) /* a root caller's landlock command runs as 65534 */
        return ok(0, "workspace"), done_testing();
    ctx = (rf_context){ .cwd = ws, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp", .rf_home = home };
    test_plans();
    test_deny();
    test_tree_kill("none");
    if (have_landlock)
        test_tree_kill("landlock");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", ws);
    return done_testing();
}
