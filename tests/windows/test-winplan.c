/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Windows plan from real configuration layers (the config stage built
 * for Windows), and the exec guard running as a Windows program: what is
 * refused as seed 000 refuses it, what is redirected, what is limited. */
#include "backend/windows/windows.h"
#include "tap.h"
#include "ringfence.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rf_win_context ctx = { .cwd = "C:\\ws", .rf_home = "C:\\rfhome" };
static char cmd0[] = "cmd", cmd1[] = "/c", cmd2[] = "exit", cmd3[] = "3";
static char *const argv_cmd[] = { cmd0, cmd1, cmd2, cmd3, NULL };

/* The plan of one JSON layer, or NULL with the error's message in *msg. */
static rf_win_plan *plan_of(const char *json, char **msg)
{
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    rf_win_plan *p = NULL;
    if (!json || rf_config_add_json(cfg, "test", json, &err) == 0)
        p = rf_win_plan_build(cfg, &ctx, argv_cmd, &err);
    if (msg)
        *msg = err ? strdup(rf_error_message(err)) : NULL;
    rf_error_free(err);
    rf_config_free(cfg);
    return p;
}

static bool has(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (!strcmp(v[i], s))
            return true;
    return false;
}

static bool has_sub(char *const *v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strstr(v[i], s))
            return true;
    return false;
}

static void test_default(void)
{
    rf_win_plan *p = plan_of(NULL, NULL);
    ok(p != NULL, "no configuration: a plan");
    if (!p)
        return;
    is_str(p->workspace, "C:\\ws", "workspace: the current directory");
    is_str(p->user_env, "C:\\rfhome\\runtime-user-env", "runtime-user-env under the instance root");
    const char *want[] = { "USERPROFILE=C:\\rfhome\\runtime-user-env", "HOME=C:\\rfhome\\runtime-user-env",
                           "TEMP=C:\\rfhome\\runtime-user-env\\AppData\\Local\\Temp",
                           "TMP=C:\\rfhome\\runtime-user-env\\AppData\\Local\\Temp",
                           "APPDATA=C:\\rfhome\\runtime-user-env\\AppData\\Roaming",
                           "LOCALAPPDATA=C:\\rfhome\\runtime-user-env\\AppData\\Local" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ok(has(p->env, want[i]), want[i]);
    ok(has(p->dirs, "C:\\rfhome\\runtime-user-env\\AppData\\Roaming") &&
           has(p->dirs, "C:\\rfhome\\runtime-user-env\\AppData\\Local"),
       "AppData\\Roaming and AppData\\Local are made");
    ok(has(p->protected, "C:\\ws\\.git\\hooks") && has(p->protected, "C:\\ws\\.ringfence.json"),
       "the default protected paths, under the workspace");
    ok(has_sub(p->cannot, "no mount view") && has_sub(p->cannot, "no network isolation"),
       "cannot: the mount view and the network");
    ok(has_sub(p->warnings, "network: none is not enforced"), "the default network none: warned, not silent");
    char *json = rf_win_plan_to_json(p);
    like(json, "\"log\": \"windows isolation access rules\"", "the plan is named as seed 000 logs it");
    free(json);
    rf_win_plan_free(p);
}

static void test_refused(const char *json, const char *needle, const char *desc)
{
    char *msg = NULL;
    rf_win_plan *p = plan_of(json, &msg);
    ok(p == NULL, desc);
    like(msg ? msg : "", needle, "its message");
    free(msg);
    rf_win_plan_free(p);
}

/* picoclaw's own file: isolation.expose_paths is read by the config stage
 * and refused by the plan, as seed 000 says Windows must. */
static void test_picoclaw_expose(void)
{
    char dir[260], path[260 + 32];
    const char *tmp = getenv("TEMP");
    snprintf(dir, sizeof dir, "%s", tmp ? tmp : ".");
    snprintf(path, sizeof path, "%s\\rf-picoclaw-%u.json", dir, (unsigned)rand());
    FILE *f = fopen(path, "w");
    fputs("{\"isolation\": {\"enabled\": true, \"expose_paths\": [{\"source\": \"C:\\\\data\", \"mode\": "
          "\"ro\"}]}}",
          f);
    fclose(f);
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    int r = rf_config_load_file(cfg, path, &err);
    ok(r == 0, "picoclaw config with isolation.expose_paths loads");
    rf_win_plan *p = r == 0 ? rf_win_plan_build(cfg, &ctx, argv_cmd, &err) : NULL;
    ok(p == NULL, "and its expose_paths is refused");
    like(err ? rf_error_message(err) : "", "not supported on Windows", "with seed 000's reason");
    rf_error_free(err);
    rf_win_plan_free(p);
    rf_config_free(cfg);
    remove(path);
}

static void test_network(void)
{
    test_refused("{\"network\": {\"mode\": \"allowlist\", \"allow_domains\": [\"example.com\"]}}",
                 "cannot confine the command to the proxy", "network allowlist: refused");
    test_refused("{\"network\": \"none\"}", "cannot cut the network", "network none, asked for: refused");
    rf_win_plan *p = plan_of("{\"network\": {\"mode\": \"allowlist\", \"allow_domains\": [\"example.com\"]}, "
                             "\"accept_weaker\": true}",
                             NULL);
    ok(p && has_sub(p->warnings, "allowlist is not enforced"), "allowlist with accept_weaker: runs, warned");
    rf_win_plan_free(p);
    p = plan_of("{\"network\": \"host\"}", NULL);
    ok(p && !p->warnings, "network host: nothing to warn about");
    rf_win_plan_free(p);
}

static void test_limits_env(void)
{
    _putenv("RF_TEST_KEEP=kept");
    rf_win_plan *p = plan_of("{\"limits\": {\"memory\": \"256M\", \"pids\": 50, \"cpu\": 0.5, \"timeout\": 10}, "
                             "\"env\": {\"set\": {\"FOO\": \"bar\"}, \"keep\": [\"RF_TEST_KEEP\", \"RF_TEST_ABSENT\"]}, \"workspace\": \"D:\\\\proj\", "
                             "\"protected_paths\": [\"secrets/keys\"]}",
                             NULL);
    ok(p != NULL, "limits, env and workspace: a plan");
    if (!p)
        return;
    is_int(p->memory, 256u << 20, "memory 256M");
    is_int(p->pids, 50, "pids 50");
    ok(p->cpu == 0.5 && p->timeout == 10, "cpu 0.5, timeout 10");
    ok(has(p->env, "FOO=bar"), "env.set reaches the command");
    ok(has(p->env, "RF_TEST_KEEP=kept") && !has_sub(p->env, "RF_TEST_ABSENT"), "env.keep: the caller's, if set");
    ok(has(p->protected, "D:\\proj\\secrets\\keys"), "protected_paths from the policy, Windows separators");
    is_str(p->workspace, "D:\\proj", "workspace from the policy");
    rf_win_plan_free(p);
}

/* A workspace that would put the whole profile, a drive or the system
 * under the low label is refused unless asked for by name. */
static void test_workspace(void)
{
    test_refused("{\"workspace\": \"C:\\\\\"}", "a drive's root", "workspace C:\\: refused");
    /* The profile's path as JSON, its backslashes escaped by jansson. */
    json_t *o = json_pack("{s:s}", "workspace", getenv("USERPROFILE") ? getenv("USERPROFILE") : "C:\\nowhere");
    char *json = json_dumps(o, 0);
    test_refused(json, "your user profile", "workspace = the user profile: refused");
    free(json);
    json_decref(o);
    rf_win_plan *p = plan_of("{\"workspace\": \"C:\\\\\", \"allow_sensitive_workspace\": true}", NULL);
    ok(p != NULL, "allow_sensitive_workspace accepts it");
    rf_win_plan_free(p);
    p = plan_of("{\"chdir\": \"C:\\\\ws\\\\sub\"}", NULL);
    ok(p && !strcmp(p->cwd, "C:\\ws\\sub"), "chdir inside the workspace: the command starts there");
    rf_win_plan_free(p);
    test_refused("{\"chdir\": \"C:\\\\elsewhere\"}", "outside the workspace", "chdir outside: refused");
    test_refused("{\"deny_paths\": [\"C:\\\\secrets\"]}", "cannot hide paths", "deny_paths: refused");
    p = plan_of("{\"deny_paths\": [\"C:\\\\secrets\"], \"accept_weaker\": true}", NULL);
    ok(p && has_sub(p->warnings, "deny_paths: not enforced"), "deny_paths with accept_weaker: runs, warned");
    rf_win_plan_free(p);
}

static void test_guard(void)
{
    rf_guard_options o = RF_GUARD_OPTIONS_INIT;
    /* The guard reads sh command lines, whose paths are POSIX ones (as a
     * POSIX shell on Windows, e.g. Git's, writes C:\ws). */
    o.workspace = "/c/ws";
    rf_error *err = NULL;
    rf_guard *g = rf_guard_new(&o, &err);
    if (!ok(g != NULL, "the exec guard builds on Windows"))
        printf("#   %s\n", rf_error_message(err));
    rf_guard_verdict v;
    ok(g && rf_guard_check(g, "rm -rf /", &v, &err) == 0 && v.result != RF_GUARD_ALLOWED, "rm -rf / blocked");
    rf_guard_verdict_clear(&v);
    ok(g && rf_guard_check(g, "echo hello", &v, &err) == 0 && v.result == RF_GUARD_ALLOWED, "echo allowed");
    rf_guard_verdict_clear(&v);
    rf_error_free(err);
    rf_guard_free(g);
}

int main(void)
{
    test_default();
    test_refused("{\"expose\": [{\"source\": \"C:\\\\tools\", \"target\": \"C:\\\\tools\", \"mode\": \"ro\"}]}",
                 "expose (isolation.expose_paths) is not supported on Windows", "expose: refused");
    test_refused("{\"backend\": \"native\"}", "not available on Windows", "a Linux backend: refused");
    test_picoclaw_expose();
    test_network();
    test_limits_env();
    test_workspace();
    test_guard();
    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    ok(!rf_win_plan_build(cfg, &ctx, (char *[]){ NULL }, &err), "no command: refused");
    rf_error_free(err);
    rf_config_free(cfg);
    return done_testing();
}
