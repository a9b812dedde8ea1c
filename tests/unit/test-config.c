/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Merge rules, variables and validation of the config → policy stage. */
#include "tap.h"
#include "config/config.h"
#include "model/policy.h"
#include "util/error.h"
#include "util/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[64];
static rf_context ctx;

/* Resolve layers (NULL-terminated JSON texts); NULL + *errmsg on failure. */
static rf_policy *resolve_layers(const char *agent, char **errmsg, const char *const *layers)
{
    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    rf_policy *p = NULL;
    char origin[32];
    int r = rf_config_select_agent(cfg, agent, &err);
    for (size_t i = 0; r == 0 && layers[i]; i++) {
        snprintf(origin, sizeof origin, "layer%zu", i);
        r = rf_config_add_json(cfg, origin, layers[i], &err);
    }
    if (r == 0)
        p = rf_policy_resolve(cfg, &ctx, &err);
    if (errmsg)
        *errmsg = err ? strdup(rf_error_message(err)) : NULL;
    if (err && getenv("VERBOSE"))
        printf("# error: %s\n# hint: %s\n", rf_error_message(err), rf_error_hint(err) ?: "");
    rf_error_free(err);
    rf_config_free(cfg);
    return p;
}

#define RESOLVE(...) resolve_layers(NULL, NULL, (const char *const[]){ __VA_ARGS__, NULL })

static void expect_error(const char *desc, const char *needle, const char *const *layers)
{
    char *msg = NULL;
    rf_policy *p = resolve_layers(NULL, &msg, layers);
    ok(p == NULL, desc);
    like(msg, needle, desc);
    rf_policy_free(p);
    free(msg);
}
#define EXPECT_ERROR(desc, needle, ...) expect_error(desc, needle, (const char *const[]){ __VA_ARGS__, NULL })

static void test_defaults(void)
{
    rf_policy *p = RESOLVE("{}");
    ok(p != NULL, "empty config resolves");
    if (!p)
        return;
    is_str(p->workspace, tmp, "workspace defaults to the cwd");
    ok(p->restrict_to_workspace, "restrict_to_workspace defaults to true");
    ok(!p->allow_read_outside_workspace, "allow_read_outside_workspace defaults to false");
    is_int(p->network, RF_NET_NONE, "network defaults to none");
    is_int(p->map_root_to, 65534, "map_root_to defaults to 65534");
    is_int(p->tools.exec.timeout_s, 60, "exec timeout defaults to 60");
    is_int(p->tools.max_read_bytes, 1048576, "max_read_bytes defaults to 1 MiB");
    ok(p->tools.exec.enable_deny_patterns, "deny patterns on by default");
    is_str(p->instance_root, "/home/tester/.ringfence", "instance root defaults to ~/.ringfence");
    is_int(p->limits.kill_grace_s, 2, "kill grace defaults to 2");
    is_str(p->protected_paths[0], ".git/hooks", "protected .git/hooks by default");
    char *json = rf_policy_to_json(p);
    like(json, "\"network\": {\n    \"mode\": \"none\"", "to_json has network");
    free(json);
    rf_policy_free(p);
}

static void test_merge_scalars_lists(void)
{
    rf_policy *p = RESOLVE("{\"network\":\"host\",\"tools\":{\"allow_read_paths\":[\"^/a$\",\"^/b$\"],"
                           "\"exec\":{\"timeout\":10}}}",
                           "{\"network\":\"none\",\"tools\":{\"allow_read_paths\":[\"^/b$\",\"^/c$\"]}}");
    ok(p != NULL, "two layers resolve");
    if (!p)
        return;
    is_int(p->network, RF_NET_NONE, "later scalar overrides");
    is_int(rf_strv_len(p->tools.allow_read_paths), 3, "lists append without duplicates");
    is_str(p->tools.allow_read_paths[2], "^/c$", "appended in order");
    is_int(p->tools.exec.timeout_s, 10, "objects merge recursively (exec.timeout kept)");
    rf_policy_free(p);

    p = RESOLVE("{\"network\":\"host\",\"tools\":{\"allow_read_paths\":[\"^/a$\"]}}",
                "{\"merge_strategy\":\"replace\",\"tools\":{\"allow_read_paths\":[\"^/z$\"]}}");
    ok(p && p->network == RF_NET_NONE, "replace drops scalars below");
    ok(p && rf_strv_len(p->tools.allow_read_paths) == 1, "replace drops list entries below");
    rf_policy_free(p);

    p = RESOLVE("{\"limits\":{\"memory\":\"256M\",\"pids\":200}}", "{\"limits\":{\"memory\":null}}");
    ok(p && p->limits.memory_bytes == 0 && p->limits.pids == 200, "null resets one value");
    rf_policy_free(p);
}

static void test_exposes(void)
{
    char layer1[512], layer2[512];
    snprintf(layer1, sizeof layer1,
             "{\"expose\":[{\"source\":\"%s/a\",\"target\":\"/opt/x\",\"mode\":\"ro\"},"
             "{\"source\":\"$WORKSPACE/b\"}]}", tmp);
    snprintf(layer2, sizeof layer2,
             "{\"expose\":[{\"source\":\"%s/b\",\"target\":\"/opt/x\",\"mode\":\"rw\"}]}", tmp);
    rf_policy *p = RESOLVE(layer1, layer2);
    ok(p != NULL, "exposes resolve");
    if (!p)
        return;
    is_int(p->n_exposes, 2, "same target: last rule wins");
    char want[128];
    snprintf(want, sizeof want, "%s/b", tmp);
    is_str(p->exposes[0].source, want, "$WORKSPACE substituted, target defaults to source");
    is_str(p->exposes[0].target, want, "target = source");
    is_int(p->exposes[0].mode, RF_ACCESS_RO, "mode defaults to ro");
    is_str(p->exposes[1].target, "/opt/x", "overriding rule kept");
    is_int(p->exposes[1].mode, RF_ACCESS_RW, "later mode wins");
    rf_policy_free(p);

    p = RESOLVE(layer1, "{\"expose\":[{\"target\":\"/opt/x\",\"mode\":\"none\"}]}");
    ok(p && p->n_exposes == 1, "mode none removes the rule for a target");
    rf_policy_free(p);
}

static void test_agents(void)
{
    const char *l = "{\"network\":\"none\",\"agents\":{\"defaults\":{\"restrict_to_workspace\":false},"
                    "\"list\":[{\"id\":\"coder\",\"network\":\"host\",\"tools\":{\"disabled\":[\"exec\"]}}]}}";
    rf_policy *p = resolve_layers("coder", NULL, (const char *const[]){ l, NULL });
    ok(p && !p->restrict_to_workspace, "agents.defaults applies");
    ok(p && p->network == RF_NET_HOST, "selected agent overrides its layer");
    ok(p && rf_strv_contains(p->tools.disabled, "exec"), "agent tools.disabled");
    rf_policy_free(p);
    p = RESOLVE(l);
    ok(p && p->network == RF_NET_NONE && !p->restrict_to_workspace, "no agent: only defaults");
    rf_policy_free(p);
    char *msg = NULL;
    p = resolve_layers("nobody", &msg, (const char *const[]){ l, NULL });
    ok(!p, "unknown agent is an error");
    like(msg, "nobody", "error names the agent");
    free(msg);
    rf_policy_free(p);
}

static void test_vars_and_paths(void)
{
    rf_policy *p = RESOLVE("{\"chdir\":\"${WORKSPACE}/sub/../x\",\"deny_paths\":[\"~/.ssh\",\"$HOME/.aws\"],"
                           "\"instance_root\":\"$TMPDIR/rf-$USER\"}");
    ok(p != NULL, "variables resolve");
    if (p) {
        char want[128];
        snprintf(want, sizeof want, "%s/x", tmp);
        is_str(p->chdir, want, "${WORKSPACE} and normalisation");
        is_str(p->deny_paths[0], "/home/tester/.ssh", "leading ~/");
        is_str(p->deny_paths[1], "/home/tester/.aws", "$HOME");
        is_str(p->instance_root, "/tmp/rf-tester", "$TMPDIR and $USER");
    }
    rf_policy_free(p);
    EXPECT_ERROR("unknown variable", "unknown variable $NOPE", "{\"chdir\":\"$NOPE/x\"}");
    EXPECT_ERROR("relative path after substitution", "chdir", "{\"chdir\":\"rel/x\"}");
    EXPECT_ERROR("instance root '.'", "instance_root", "{\"instance_root\":\".\"}");
    EXPECT_ERROR("workspace missing", "workspace", "{\"workspace\":\"/nonexistent/ws\"}");
    EXPECT_ERROR("workspace not a dir", "not a directory", "{\"workspace\":\"/etc/hostname\"}");
    EXPECT_ERROR("$WORKSPACE inside workspace", "cannot be used here", "{\"workspace\":\"$WORKSPACE\"}");
}

static void test_validation(void)
{
    EXPECT_ERROR("unknown key", "unknown setting 'restrict_to_worksapce'", "{\"restrict_to_worksapce\":false}");
    EXPECT_ERROR("nested unknown key", "tools.exec.enable_deny_pattern", "{\"tools\":{\"exec\":{\"enable_deny_pattern\":false}}}");
    EXPECT_ERROR("bad mode", "expose[0].mode", "{\"expose\":[{\"source\":\"/usr\",\"mode\":\"rx\"}]}");
    EXPECT_ERROR("wrong type", "restrict_to_workspace: expected true or false", "{\"restrict_to_workspace\":\"no\"}");
    EXPECT_ERROR("missing source", "expose[1].source", "{\"expose\":[{\"source\":\"/usr\"},{\"source\":\"/nonexistent/zz\"}]}");
    EXPECT_ERROR("relative target", "expose[0].target", "{\"expose\":[{\"source\":\"/usr\",\"target\":\"usr\"}]}");
    EXPECT_ERROR("target in /proc", "expose[0].target", "{\"expose\":[{\"source\":\"/usr\",\"target\":\"/proc/x\"}]}");
    EXPECT_ERROR("target in /sys", "/sys", "{\"expose\":[{\"source\":\"/usr\",\"target\":\"/sys\"}]}");
    EXPECT_ERROR("bad regex", "does not compile at offset", "{\"tools\":{\"allow_read_paths\":[\"^/a(\"]}}");
    EXPECT_ERROR("bad size", "limits.memory", "{\"limits\":{\"memory\":\"12Q\"}}");
    EXPECT_ERROR("negative", "limits.pids", "{\"limits\":{\"pids\":-1}}");
    EXPECT_ERROR("syntax error position", "layer0:1:", "{\"network\": }");
    EXPECT_ERROR("duplicate key", "layer0:1:", "{\"network\":\"none\",\"network\":\"host\"}");
    EXPECT_ERROR("unknown syscall", "seccomp.deny[0]", "{\"seccomp\":{\"deny\":[\"frobnicate\"]}}");
    EXPECT_ERROR("bad env name", "env.set", "{\"env\":{\"set\":{\"A=B\":\"x\"}}}");
    EXPECT_ERROR("origin named", "(from layer1)", "{}", "{\"chdir\":\"$WORKSPACE\",\"expose\":[{\"source\":\"/nonexistent/q\"}]}");

    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    rf_config_add_json(cfg, "typo", "{\"netwrok\":\"none\"}", &err);
    like(rf_error_hint(err), "did you mean 'network'?", "did-you-mean suggestion");
    is_int(rf_error_exit_code(err), 125, "config errors exit 125");
    rf_error_free(err);
    err = NULL;
    rf_config_add_json(cfg, "typo", "{\"network\":\"hots\"}", &err);
    like(rf_error_hint(err), "did you mean \"host\"", "did-you-mean for values");
    rf_error_free(err);
    rf_config_free(cfg);
}

static void test_env_limits(void)
{
    char lang[] = "LANG=C.UTF-8", secret[] = "SECRET=x";
    char *envp[] = { lang, secret, NULL };
    ctx.envp = envp;
    rf_policy *p = RESOLVE("{\"env\":{\"set\":{\"A\":\"1\"},\"keep\":[\"LANG\",\"MISSING\"]},"
                           "\"limits\":{\"memory\":\"256M\",\"pids\":200,\"cpu\":0.25,\"timeout\":60}}");
    ctx.envp = NULL;
    ok(p != NULL, "env and limits resolve");
    if (!p)
        return;
    is_str(p->env_set[0], "A=1", "env.set");
    is_str(p->env_keep[0], "LANG=C.UTF-8", "env.keep copies from the caller");
    is_int(rf_strv_len(p->env_keep), 1, "missing variable skipped");
    ok(p->warnings && strstr(p->warnings[0], "MISSING"), "missing variable warned");
    is_int(p->limits.memory_bytes, 256ull << 20, "memory 256M");
    is_int(p->limits.pids, 200, "pids");
    ok(p->limits.cpu == 0.25, "cpu 0.25");
    char *json = rf_policy_to_json(p);
    ok(json && !strstr(json, "C.UTF-8"), "to_json never prints kept values");
    free(json);
    rf_policy_free(p);
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/rf-test-config.XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    char sub[128];
    snprintf(sub, sizeof sub, "%s/a", tmp);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/b", tmp);
    mkdir(sub, 0755);
    ctx = (rf_context){ .cwd = tmp, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp" };
    setenv("RINGFENCE_HOME", "", 1);
    test_defaults();
    test_merge_scalars_lists();
    test_exposes();
    test_agents();
    test_vars_and_paths();
    test_validation();
    test_env_limits();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        return 1;
    return done_testing();
}
