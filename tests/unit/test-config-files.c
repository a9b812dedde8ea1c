/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Config files: JSON/YAML round trips, positions in errors, size limits,
 * the picoclaw and Mitto readers (seed 003's worked examples), the standard
 * stack's order, RINGFENCE_* variables and the workspace tightening rule. */
#include "tap.h"
#include "config/config.h"
#include "model/policy.h"
#include "util/error.h"
#include "util/strv.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64], home[128], ws[128], etc_dir[128], user_dir[128];
static char *envp_none[] = { NULL };
static rf_context ctx;

static const char *in(const char *base, const char *rel)
{
    static char buf[4][512];
    static int n;
    char *b = buf[n++ % 4];
    snprintf(b, 512, "%s/%s", base, rel);
    return b;
}

__attribute__((format(printf, 2, 3))) static void write_file(const char *path, const char *fmt, ...)
{
    FILE *f = fopen(path, "w");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

static void mkdirs(const char *path)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

static void rm_file(const char *path) { unlink(path); }

typedef struct load {
    rf_policy *p;
    char *json;
    char *error;
    char *hint;
} load;

static void load_clear(load *l)
{
    rf_policy_free(l->p);
    free(l->json);
    free(l->error);
    free(l->hint);
    memset(l, 0, sizeof(*l));
}

/* Load the standard stack with `files` as --config, then resolve. */
static load stack(const char *agent, const char *runner, bool trust, const char *flags,
                  const char *const *files)
{
    load l = { 0 };
    rf_config_sources src = {
        .config_files = files, .agent = agent, .runner = runner, .trust_workspace_config = trust,
        .flags_json = flags, .ctx = &ctx, .system_dir = etc_dir, .user_dir = user_dir,
    };
    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    if (rf_config_load_standard(cfg, &src, &err) == 0)
        l.p = rf_policy_resolve(cfg, &ctx, &err);
    if (l.p)
        l.json = rf_policy_to_json(l.p);
    if (err) {
        l.error = strdup(rf_error_message(err));
        l.hint = rf_error_hint(err) ? strdup(rf_error_hint(err)) : NULL;
        if (getenv("VERBOSE"))
            printf("# error: %s\n# hint: %s\n", l.error, l.hint ? l.hint : "");
    }
    rf_error_free(err);
    rf_config_free(cfg);
    return l;
}

#define FILES(...) ((const char *const[]){ __VA_ARGS__, NULL })
/* -Wwrite-strings: environments written as literals. */
#define ENVP(...) ((char *const *)(const char *const[]){ __VA_ARGS__, NULL })

static bool has_expose(const rf_policy *p, const char *target, rf_access mode)
{
    for (size_t i = 0; p && i < p->n_exposes; i++)
        if (!strcmp(p->exposes[i].target, target))
            return p->exposes[i].mode == mode;
    return false;
}

static void test_round_trip(void)
{
    const char *src = RF_SOURCE_DIR "/examples/";
    load a = stack(NULL, NULL, false, NULL, FILES(in(src, "ringfence.json")));
    load b = stack(NULL, NULL, false, NULL, FILES(in(src, "ringfence.yaml")));
    ok(a.p && b.p, "examples/ringfence.json and .yaml resolve");
    is_str(a.json, b.json, "JSON and YAML give the same policy");
    ok(a.p && a.p->limits.memory_bytes == 1ull << 30, "memory 1G");
    ok(a.p && a.p->limits.timeout_s == 300, "agents.defaults applies after the file's top level");
    load_clear(&a);
    load_clear(&b);
    a = stack("reviewer", NULL, false, NULL, FILES(in(src, "ringfence.yaml")));
    ok(a.p && rf_strv_contains(a.p->tools.disabled, "exec"), "--agent reviewer disables exec");
    load_clear(&a);
}

static void test_errors(void)
{
    const char *f = in(root, "bad.yaml");
    write_file(f, "network: none\nexpose:\n  - source: /usr\n   mode: ro\n");
    load l = stack(NULL, NULL, false, NULL, FILES(f));
    ok(!l.p, "bad YAML indentation is an error");
    like(l.error, "bad.yaml:4:", "YAML error has file:line:column");
    load_clear(&l);

    f = in(root, "bad.json");
    write_file(f, "{\n  \"network\": \"none\",\n  \"expose\": [\n}\n");
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "bad.json:4:", "JSON error has file:line:column");
    load_clear(&l);

    f = in(root, "dup.yaml");
    write_file(f, "network: none\nnetwork: host\n");
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "dup.yaml:2:1: duplicate key", "duplicate YAML key with position");
    load_clear(&l);

    f = in(root, "typo.yaml");
    write_file(f, "limits:\n  memroy: 1G\n");
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "unknown setting 'limits.memroy'", "YAML typo is an error");
    like(l.hint, "did you mean 'memory'", "with a suggestion");
    load_clear(&l);

    f = in(root, "big.json");
    FILE *fp = fopen(f, "w");
    fputs("{\"tools\":{\"disabled\":[", fp);
    for (int i = 0; i < 120000; i++)
        fprintf(fp, "%s\"tool%d\"", i ? "," : "", i);
    fputs("]}}", fp);
    fclose(fp);
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "larger than 1 MiB", "a file over 1 MiB is refused");
    load_clear(&l);

    fp = fopen(f, "w");
    fputs("{\"tools\":{\"disabled\":[", fp);
    for (int i = 0; i < 1001; i++)
        fprintf(fp, "%s\"t%d\"", i ? "," : "", i);
    fputs("]}}", fp);
    fclose(fp);
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "more than 1000 rules", "more than 1000 rules are refused");
    load_clear(&l);

    f = in(root, "bomb.yaml");
    write_file(f, "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n");
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "too many nodes", "YAML alias bomb is capped");
    load_clear(&l);

    l = stack(NULL, NULL, false, NULL, FILES(in(root, "missing.json")));
    like(l.error, "missing.json", "a missing --config file is an error");
    load_clear(&l);
}

static void test_picoclaw(void)
{
    mkdirs(in(home, ".picoclaw/workspace"));
    mkdirs(in(home, ".picoclaw/workspace-ro"));
    load l = stack(NULL, NULL, false, NULL, FILES(RF_SOURCE_DIR "/examples/picoclaw-config.json"));
    ok(l.p != NULL, "picoclaw example resolves");
    if (l.p) {
        is_str(l.p->workspace, in(home, ".picoclaw/workspace"), "agents.defaults.workspace (~/)");
        ok(has_expose(l.p, "/opt/picoclaw-docs", RF_ACCESS_RO), "isolation.expose_paths");
        ok(rf_strv_contains(l.p->tools.allow_read_paths, "^/etc/hosts$"), "tools.allow_read_paths");
        ok(rf_strv_contains(l.p->tools.allow_write_paths, "^/tmp/picoclaw-.*\\.txt$"), "tools.allow_write_paths");
        ok(rf_strv_contains(l.p->tools.exec.custom_deny_patterns, "\\bwget\\b.*-O\\s+/etc/"), "exec.custom_deny_patterns");
        ok(rf_strv_len(l.p->tools.exec.custom_allow_patterns) == 1, "exec.custom_allow_patterns");
        is_int(l.p->tools.exec.timeout_s, 300, "cron.exec_timeout_minutes → seconds");
        is_int(l.p->backend, RF_BACKEND_NATIVE, "isolation.enabled true keeps the sandbox");
    }
    load_clear(&l);

    const char *f = in(root, "pico.json");
    write_file(f, "{\"isolation\":{\"enabled\":false},\"agents\":{\"defaults\":{\"restrict_to_workspace\":false,"
                  "\"allow_read_outside_workspace\":true,\"model\":\"x\"},\"list\":[{\"id\":\"ro\","
                  "\"workspace\":\"~/.picoclaw/workspace-ro\",\"tools\":{\"disabled\":[\"exec\"],"
                  "\"exec\":{\"enable_deny_patterns\":false}}}]},\"tools\":{\"disabled\":[\"web\"]}}");
    l = stack("ro", NULL, false, NULL, FILES(f));
    ok(l.p != NULL, "picoclaw agents.list resolves");
    if (l.p) {
        is_int(l.p->backend, RF_BACKEND_NONE, "isolation.enabled false → backend none");
        ok(l.p->warnings && strstr(l.p->warnings[0], "WITHOUT a sandbox"), "... with a warning");
        ok(!l.p->restrict_to_workspace, "agents.defaults.restrict_to_workspace");
        ok(l.p->allow_read_outside_workspace, "agents.defaults.allow_read_outside_workspace");
        is_str(l.p->workspace, in(home, ".picoclaw/workspace-ro"), "agent workspace");
        ok(rf_strv_contains(l.p->tools.disabled, "exec") && rf_strv_contains(l.p->tools.disabled, "web"),
           "tools.disabled from agent and top level");
        ok(!l.p->tools.exec.enable_deny_patterns, "agent tools.exec.enable_deny_patterns");
    }
    load_clear(&l);

    write_file(f, "{\"isolation\":{\"enabled\":true,\"expose_path\":[]}}");
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "isolation.expose_path", "picoclaw isolation typo is an error");
    like(l.hint, "expose_paths", "with a suggestion");
    load_clear(&l);
}

/* Seed 003, "Example Resolution" (per-runner-type), with firejail in place
 * of the macOS-only sandbox-exec. */
static void test_mitto_per_type(void)
{
    mkdirs(in(home, ".experimental"));
    mkdirs(in(ws, "vendor"));
    const char *g = in(root, "settings.yaml");
    write_file(g, "restricted_runners:\n  firejail:\n    restrictions:\n      allow_networking: true\n"
                  "      allow_read_folders: [\"$WORKSPACE\"]\n"
                  "acp_servers:\n  - name: experimental\n    command: experimental --acp\n"
                  "    restricted_runners:\n      firejail:\n        restrictions:\n"
                  "          allow_networking: false\n          allow_read_folders: [\"$HOME/.experimental\"]\n"
                  "        merge_strategy: extend\n");
    write_file(in(ws, ".mittorc"), "restricted_runners:\n  firejail:\n    restrictions:\n"
                                   "      allow_read_folders: [\"$WORKSPACE/vendor\"]\n    merge_strategy: extend\n");
    load l = stack("experimental", "firejail", false, NULL, FILES(g));
    ok(l.p != NULL, "seed 003 per-type example resolves");
    if (l.p) {
        is_int(l.p->network, RF_NET_NONE, "networking false (from agent)");
        is_int(l.p->n_exposes, 3, "read folders merged from global, agent, workspace");
        ok(has_expose(l.p, ws, RF_ACCESS_RO), "$WORKSPACE (global)");
        ok(has_expose(l.p, in(home, ".experimental"), RF_ACCESS_RO), "$HOME/.experimental (agent)");
        ok(has_expose(l.p, in(ws, "vendor"), RF_ACCESS_RO), "$WORKSPACE/vendor (workspace)");
        is_int(l.p->backend, RF_BACKEND_FIREJAIL, "runner firejail → backend firejail");
    }
    load_clear(&l);
    rm_file(in(ws, ".mittorc"));
}

/* Seed 003, the legacy "Example Resolution" and Example 5. */
static void test_mitto_legacy(void)
{
    mkdirs(in(home, ".cache"));
    const char *g = in(root, "legacy.yaml");
    write_file(g, "restricted_runner:\n  default_type: exec\n  default_restrictions:\n    allow_networking: true\n"
                  "acp:\n  - experimental:\n      command: experimental-agent --acp\n      restricted_runner:\n"
                  "        type: firejail\n        restrictions:\n          allow_networking: false\n"
                  "          allow_read_folders: [\"$WORKSPACE\"]\n");
    write_file(in(ws, ".mittorc"), "restricted_runner:\n  restrictions:\n"
                                   "    allow_read_folders: [\"$WORKSPACE\", \"$HOME/.cache\"]\n  merge_strategy: extend\n");
    load l = stack("experimental", NULL, true, NULL, FILES(g));
    ok(l.p != NULL, "seed 003 legacy example resolves (trusted workspace)");
    if (l.p) {
        is_int(l.p->backend, RF_BACKEND_FIREJAIL, "type from the agent config");
        is_int(l.p->network, RF_NET_NONE, "networking false (from agent)");
        is_int(l.p->n_exposes, 2, "read folders [$WORKSPACE, $HOME/.cache]");
        ok(has_expose(l.p, in(home, ".cache"), RF_ACCESS_RO), "$HOME/.cache from .mittorc");
    }
    load_clear(&l);
    l = stack("experimental", NULL, false, NULL, FILES(g));
    ok(!l.p, "untrusted .mittorc may not expose $HOME/.cache");
    like(l.error, "expose", "refusal names the key");
    like(l.hint, "--trust-workspace-config", "refusal names the fix");
    load_clear(&l);

    write_file(g, "acp:\n  - name: auggie\n    command: auggie --acp\n    restricted_runner:\n"
                  "      type: firejail\n      restrictions:\n        allow_networking: true\n"
                  "        allow_read_folders: [\"$WORKSPACE\"]\n");
    write_file(in(ws, ".mittorc"), "restricted_runner:\n  restrictions:\n    allow_networking: false\n"
                                   "    allow_read_folders: [\"$WORKSPACE\", \"$WORKSPACE/vendor\"]\n"
                                   "    deny_folders: [\"$WORKSPACE/.env\"]\n  merge_strategy: extend\n");
    l = stack("auggie", NULL, false, NULL, FILES(g));
    ok(l.p != NULL, "seed 003 example 5: a stricter .mittorc is accepted");
    if (l.p) {
        is_int(l.p->network, RF_NET_NONE, "network disabled by the workspace");
        ok(has_expose(l.p, in(ws, "vendor"), RF_ACCESS_RO), "vendor folder added");
        ok(rf_strv_contains(l.p->deny_paths, in(ws, ".env")), "deny_folders → deny_paths");
    }
    load_clear(&l);
    rm_file(in(ws, ".mittorc"));
}

static void test_mitto_types(void)
{
    const char *ex = RF_SOURCE_DIR "/examples/mitto-settings.yaml";
    mkdirs(in(home, ".npm"));
    load l = stack("claude-code", NULL, false, NULL, FILES(ex));
    ok(l.p != NULL, "examples/mitto-settings.yaml resolves");
    if (l.p) {
        is_int(l.p->network, RF_NET_HOST, "agent allow_networking true overrides global");
        ok(has_expose(l.p, ws, RF_ACCESS_RW), "$WORKSPACE read and write → rw");
        ok(has_expose(l.p, in(home, ".npm"), RF_ACCESS_RO), "agent read folder");
        ok(rf_strv_contains(l.p->deny_paths, in(home, ".ssh")), "deny_folders");
        ok(l.p->warnings && strstr(l.p->warnings[0], "not exposed"), "missing folder skipped with a warning");
    }
    load_clear(&l);
    l = stack("auggie", "docker", false, NULL, FILES(ex));
    ok(l.p != NULL, "--runner docker resolves");
    if (l.p) {
        is_int(l.p->backend, RF_BACKEND_CONTAINER, "docker → container backend");
        is_str(l.p->container_image, "alpine:latest", "docker.image");
        is_int(l.p->limits.memory_bytes, 2ull << 30, "docker.memory_limit 2g");
        ok(l.p->limits.cpu == 2.0, "docker.cpu_limit \"2.0\"");
        is_int(l.p->n_exposes, 0, "replace drops the firejail folders and everything below");
    }
    load_clear(&l);
    l = stack(NULL, "exec", false, NULL, FILES(ex));
    ok(l.p && l.p->backend == RF_BACKEND_NONE, "exec → backend none");
    ok(l.p && l.p->warnings && strstr(l.p->warnings[0], "WITHOUT a sandbox"), "... with a warning");
    load_clear(&l);
    l = stack(NULL, "sandbox-exec", false, NULL, FILES(ex));
    like(l.error, "macOS-only", "sandbox-exec is refused on Linux");
    load_clear(&l);
    l = stack(NULL, "firejial", false, NULL, FILES(ex));
    like(l.hint, "did you mean \"firejail\"", "unknown runner type suggests one");
    load_clear(&l);
    const char *f = in(root, "mtypo.yaml");
    write_file(f, "restricted_runners:\n  firejail:\n    restrictions:\n      allow_network: true\n");
    l = stack(NULL, NULL, false, NULL, FILES(f));
    like(l.error, "allow_network", "Mitto restriction typo is an error");
    like(l.hint, "allow_networking", "with a suggestion");
    load_clear(&l);
}

static void test_workspace_tightening(void)
{
    const char *ws_file = in(ws, ".ringfence.json");
    const char *g = in(root, "base.json");
    write_file(g, "{\"limits\":{\"memory\":\"512M\",\"pids\":100},\"expose\":[{\"source\":\"/usr/share\","
                  "\"target\":\"/opt/share\"}],\"tools\":{\"exec\":{\"custom_deny_patterns\":[\"x\"]}}}");
    static const struct { const char *json, *key; } loosen[] = {
        { "{\"network\":\"host\"}", "network" },
        { "{\"expose\":[{\"source\":\"/etc\",\"target\":\"/opt/etc\"}]}", "expose" },
        { "{\"expose\":[{\"source\":\"/usr/share\",\"target\":\"/opt/share\",\"mode\":\"rw\"}]}", "expose" },
        { "{\"restrict_to_workspace\":false}", "restrict_to_workspace" },
        { "{\"tools\":{\"exec\":{\"enable_deny_patterns\":false}}}", "enable_deny_patterns" },
        { "{\"limits\":{\"memory\":\"1G\"}}", "limits.memory" },
        { "{\"limits\":{\"pids\":0}}", "limits.pids" },
        { "{\"merge_strategy\":\"replace\"}", "limits.memory" },
        { "{\"backend\":\"none\"}", "backend" },
        { "{\"env\":{\"keep\":[\"HOME\"]}}", "env.keep" },
        { "{\"tools\":{\"allow_read_paths\":[\"^/etc/.*\"]}}", "tools.allow_read_paths" },
        { "{\"seccomp\":{\"profile\":\"off\"}}", "seccomp.profile" },
        { "{\"agents\":{\"defaults\":{\"allow_read_outside_workspace\":true}}}", "allow_read_outside_workspace" },
    };
    ctx.envp = ENVP("HOME=/root");
    for (size_t i = 0; i < sizeof loosen / sizeof loosen[0]; i++) {
        write_file(ws_file, "%s", loosen[i].json);
        load l = stack(NULL, NULL, false, NULL, FILES(g));
        char desc[160];
        snprintf(desc, sizeof desc, "workspace file may not loosen: %s", loosen[i].json);
        ok(!l.p, desc);
        like(l.error, loosen[i].key, "the refusal names the key");
        load_clear(&l);
        l = stack(NULL, NULL, true, NULL, FILES(g));
        ok(l.p != NULL, "--trust-workspace-config allows it");
        load_clear(&l);
    }
    static const char *const tighten[] = {
        "{\"network\":\"none\",\"limits\":{\"memory\":\"128M\",\"pids\":10,\"timeout\":30}}",
        "{\"tools\":{\"exec\":{\"custom_deny_patterns\":[\"y\"]},\"disabled\":[\"exec\"]}}",
        "{\"expose\":[{\"target\":\"/opt/share\",\"mode\":\"none\"}],\"deny_paths\":[\"~/.ssh\"]}",
        "{\"landlock\":\"required\",\"protected_paths\":[\"secrets\"]}",
    };
    for (size_t i = 0; i < sizeof tighten / sizeof tighten[0]; i++) {
        write_file(ws_file, "%s", tighten[i]);
        load l = stack(NULL, NULL, false, NULL, FILES(g));
        char desc[200];
        snprintf(desc, sizeof desc, "workspace file may tighten: %s", tighten[i]);
        ok(l.p != NULL, desc);
        load_clear(&l);
    }
    ctx.envp = envp_none;
    rm_file(ws_file);
}

static void test_order_and_env(void)
{
    write_file(in(etc_dir, "config.json"), "{\"limits\":{\"pids\":1,\"memory\":1,\"cpu\":1,\"timeout\":1}}");
    write_file(in(user_dir, "config.yaml"), "limits: {memory: 2, cpu: 2, timeout: 2}\n"
                                            "agents: {defaults: {limits: {timeout: 4}}}\n");
    const char *f = in(root, "order.json");
    write_file(f, "{\"limits\":{\"cpu\":3,\"timeout\":3}}");
    write_file(in(ws, ".ringfence.yml"), "limits: {kill_grace: 1}\n");
    ctx.envp = ENVP("RINGFENCE_LIMITS_KILL_GRACE=0.5", "RINGFENCE_NETWORK=host",
                    "RINGFENCE_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE=false",
                    "RINGFENCE_TOOLS_DISABLED=exec,write_file", "RINGFENCE_HOME=/x");
    load l = stack(NULL, NULL, false, "{\"network\":\"none\"}", FILES(f));
    ok(l.p != NULL, "all layers resolve");
    if (l.p) {
        is_int(l.p->limits.pids, 1, "system file");
        is_int(l.p->limits.memory_bytes, 2, "user file over system file");
        ok(l.p->limits.cpu == 3, "--config over user file");
        ok(l.p->limits.timeout_s == 4, "agent section over --config");
        ok(l.p->limits.kill_grace_s == 0.5, "environment over workspace file");
        is_int(l.p->network, RF_NET_NONE, "command line over environment");
        ok(!l.p->restrict_to_workspace, "RINGFENCE_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE");
        is_int(rf_strv_len(l.p->tools.disabled), 2, "comma-separated list variable");
    }
    load_clear(&l);

    rf_config *cfg = rf_config_new();
    rf_config_sources src = { .config_files = FILES(f), .ctx = &ctx, .system_dir = etc_dir,
                              .user_dir = user_dir, .flags_json = "{\"network\":\"none\"}" };
    rf_error *err = NULL;
    char *ex = rf_config_load_standard(cfg, &src, &err) == 0 ? rf_config_explain(cfg, &ctx, &err) : NULL;
    json_t *j = ex ? json_loads(ex, 0, NULL) : NULL;
    json_t *s = json_object_get(j, "sources");
    like(json_string_value(json_object_get(s, "limits.pids")), "etc/config.json", "explain: system file");
    like(json_string_value(json_object_get(s, "limits.timeout")), "(agents.defaults)", "explain: agent section");
    like(json_string_value(json_object_get(s, "limits.kill_grace")), "environment", "explain: environment");
    is_str(json_string_value(json_object_get(s, "network.mode")), "command line", "explain: command line");
    is_str(json_string_value(json_object_get(s, "landlock")), "default", "explain: default");
    json_decref(j);
    free(ex);
    rf_error_free(err);
    rf_config_free(cfg);

    ctx.envp = ENVP("RINGFENCE_NETWROK=host");
    l = stack(NULL, NULL, false, NULL, NULL);
    like(l.error, "RINGFENCE_NETWROK", "unknown RINGFENCE_ variable is an error");
    load_clear(&l);
    ctx.envp = ENVP("RINGFENCE_NETWORK=hots");
    l = stack(NULL, NULL, false, NULL, NULL);
    like(l.error, "RINGFENCE_NETWORK", "bad value names the variable");
    load_clear(&l);
    ctx.envp = envp_none;
    rm_file(in(etc_dir, "config.json"));
    rm_file(in(user_dir, "config.yaml"));
    rm_file(in(ws, ".ringfence.yml"));
}

/* Every key docs/config.schema.json lists is one the loader knows. */
static void null_leaves(const json_t *props, json_t *out)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)props, k, v) {
        const json_t *inner = json_object_get(json_array_get(json_object_get(v, "anyOf"), 0), "properties");
        if (!inner)
            inner = json_object_get(v, "properties");
        if (!strcmp(k, "expose") || !strcmp(k, "env") || !inner) {
            json_object_set_new(out, k, json_null());
            continue;
        }
        json_t *sub = json_object();
        null_leaves(inner, sub);
        json_object_set_new(out, k, sub);
    }
}

static void test_schema_file(void)
{
    json_t *schema = json_load_file(RF_SOURCE_DIR "/docs/config.schema.json", 0, NULL);
    ok(schema != NULL, "docs/config.schema.json is valid JSON");
    json_t *all = json_object();
    null_leaves(json_object_get(json_object_get(json_object_get(schema, "$defs"), "policy"), "properties"), all);
    ok(json_object_size(all) >= 19, "schema lists the policy keys");
    json_t *agents = json_pack("{s:{s:O}, s:[o]}", "defaults", "tools", json_object_get(all, "tools"), "list",
                               json_pack("{s:s, s:n}", "id", "a", "network"));
    json_object_set_new(all, "agents", agents);
    rf_error *err = NULL;
    ok(rf_schema_check(all, "schema", &err) == 0, "the loader accepts every key of the JSON Schema");
    if (err)
        printf("# %s\n", rf_error_message(err));
    rf_error_free(err);
    json_decref(all);
    json_decref(schema);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/rf-test-files.XXXXXX");
    if (!mkdtemp(root))
        return 1;
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(ws, sizeof ws, "%s/ws", root);
    snprintf(etc_dir, sizeof etc_dir, "%s/etc", root);
    snprintf(user_dir, sizeof user_dir, "%s/user", root);
    mkdirs(home);
    mkdirs(ws);
    mkdirs(etc_dir);
    mkdirs(user_dir);
    ctx = (rf_context){ .cwd = ws, .home = home, .user = "tester", .tmpdir = "/tmp",
                        .rf_home = "/tmp/rfhome", .envp = envp_none };
    test_round_trip();
    test_errors();
    test_picoclaw();
    test_mitto_per_type();
    test_mitto_legacy();
    test_mitto_types();
    test_workspace_tightening();
    test_order_and_env();
    test_schema_file();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        return 1;
    return done_testing();
}
