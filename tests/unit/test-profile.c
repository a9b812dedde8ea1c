/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Profiles (config/profile.c): found by name in the search path (a user's
 * file replaces a shipped one), did-you-mean for a typo, every shipped
 * profile passes the schema, a later profile wins, and a bad profile's
 * error names its file, line and setting. */
#include "tap.h"
#include "config/config.h"
#include "model/policy.h"
#include "util/error.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

static rf_config *load(const char *const *names, rf_error **err)
{
    rf_config *cfg = rf_config_new();
    rf_config_sources src = { .profiles = names, .no_system_file = true, .no_user_file = true,
                              .no_workspace_file = true, .no_environment = true };
    if (rf_config_load_standard(cfg, &src, err) < 0) {
        rf_config_free(cfg);
        return NULL;
    }
    return cfg;
}

static void shipped(void)
{
    rf_error *err = NULL;
    char **names = rf_profile_list(&err);
    ok(names && rf_strv_contains(names, "node") && rf_strv_contains(names, "chat") &&
           rf_strv_contains(names, "claude-code"),
       "the shipped profiles are listed (node, chat, claude-code)");
    for (size_t i = 0; names && names[i]; i++) {
        const char *one[] = { names[i], NULL };
        rf_config *cfg = load(one, &err);
        char d[128];
        snprintf(d, sizeof d, "shipped profile %s passes the schema", names[i]);
        ok(cfg, d);
        if (!cfg) {
            printf("#   %s\n", rf_error_message(err));
            rf_error_free(err);
            err = NULL;
        }
        rf_config_free(cfg);
    }
    rf_strv_free(names);
}

static void lookup(void)
{
    rf_error *err = NULL;
    char *p = rf_profile_find("nod", &err);
    ok(!p && err && strstr(rf_error_message(err), "unknown profile 'nod'"), "an unknown profile is an error");
    ok(err && rf_error_hint(err) && strstr(rf_error_hint(err), "did you mean 'node'"), "with did-you-mean");
    rf_error_free(err);
    err = NULL;
    p = rf_profile_find("../etc/passwd", &err);
    ok(!p && err && strstr(rf_error_message(err), "profile name"), "a name with a slash is refused");
    rf_error_free(err);
    err = NULL;
    write_file("node.yaml", "# node: mine\nlimits: { pids: 7 }\n");
    p = rf_profile_find("node", NULL);
    ok(p && !strncmp(p, dir, strlen(dir)), "a profile of the search path's first directory replaces the shipped one");
    free(p);
    unlink("node.yaml");
}

static void later_wins(void)
{
    write_file("a.yaml", "limits: { pids: 11, memory: 1G }\n");
    write_file("b.yaml", "limits: { pids: 22 }\n");
    const char *ab[] = { "a", "b", NULL };
    rf_error *err = NULL;
    rf_config *cfg = load(ab, &err);
    char *ex = cfg ? rf_config_explain(cfg, NULL, &err) : NULL;
    json_t *o = ex ? json_loads(ex, 0, NULL) : NULL;
    json_t *pids = json_object_get(json_object_get(json_object_get(o, "policy"), "limits"), "pids");
    is_int(json_integer_value(pids), 22, "two profiles contradict: the later wins");
    const char *src = json_string_value(json_object_get(json_object_get(o, "sources"), "limits.pids"));
    ok(src && strstr(src, "/b.yaml"), "config --explain names the profile a value came from");
    src = json_string_value(json_object_get(json_object_get(o, "sources"), "limits.memory"));
    ok(src && strstr(src, "/a.yaml"), "and the earlier profile for what the later one left alone");
    json_decref(o);
    free(ex);
    rf_config_free(cfg);
    rf_error_free(err);
}

static void bad_file(void)
{
    write_file("bad.yaml", "# bad\nenv:\n  keep: [A]\nlimits:\n  memory: 1G\n  nosuch: 1\n");
    const char *one[] = { "bad", NULL };
    rf_error *err = NULL;
    rf_config *cfg = load(one, &err);
    ok(!cfg && err, "a profile with an unknown setting is refused");
    like(err ? rf_error_message(err) : "", "bad.yaml:6: unknown setting 'limits.nosuch'",
         "the error names the file, the line and the setting");
    rf_error_free(err);
    err = NULL;
    write_file("bad2.yaml", "expose:\n  - { source: /tmp, mode: ro }\n  - { source: /tmp, mode: rx }\n");
    const char *two[] = { "bad2", NULL };
    cfg = load(two, &err);
    like(err ? rf_error_message(err) : "", "bad2.yaml:3: expose[1].mode", "a bad value: its line too");
    rf_error_free(err);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rf-profile.XXXXXX");
    if (!mkdtemp(dir) || chdir(dir) < 0)
        return 1;
    setenv("RINGFENCE_PROFILE_PATH", dir, 1);
    setenv("XDG_CONFIG_HOME", dir, 1); /* no user profiles of the one running the test */
    shipped();
    lookup();
    later_wins();
    bad_file();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
    printf("1..%d\n", tap_n);
    return tap_failed != 0;
}
