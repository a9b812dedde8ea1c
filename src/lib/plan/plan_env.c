/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command's environment: cleared, then a fixed safe PATH, the caller's
 * locale and terminal type, the user's name, and a redirected user
 * environment (HOME, TMPDIR, XDG_*) inside the instance root, as seeds 000
 * and 002 describe. Everything added by the policy shows in the plan. */
#include "plan/build.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Directories below the instance root, then below the command's HOME
 * tree (plan->user_env), created 0700 before a start. */
static const char *const instance_subdirs[] = { "", "/skills", "/logs", "/cache", "/state" };
static const char *const user_env_subdirs[] = {
    "", "/.config", "/.cache", "/.local", "/.local/state", "/.local/share", "/.runtime", "/tmp",
};

static const struct { const char *key, *sub; } user_env[] = {
    { "HOME", "" },
    { "TMPDIR", "/tmp" },
    { "XDG_CONFIG_HOME", "/.config" },
    { "XDG_CACHE_HOME", "/.cache" },
    { "XDG_STATE_HOME", "/.local/state" },
    { "XDG_DATA_HOME", "/.local/share" },
    { "XDG_RUNTIME_DIR", "/.runtime" },
};

/* An instance's tree: seed 002's names. */
static const struct { const char *key, *sub; } instance_env[] = {
    { "HOME", "/home" },
    { "TMPDIR", "/tmp" },
    { "XDG_CONFIG_HOME", "/config" },
    { "XDG_CACHE_HOME", "/cache" },
    { "XDG_STATE_HOME", "/state" },
    { "XDG_DATA_HOME", "/data" },
    { "XDG_RUNTIME_DIR", "/runtime" },
};

static int env_set_path(rf_plan *plan, const char *key, const char *base, const char *sub)
{
    char *value = rf_path_concat(base, sub);
    if (!value)
        return -1;
    int rc = rf_strv_env_set(&plan->env, key, value);
    free(value);
    return rc;
}

static int add_dirs(rf_plan *plan, const char *base, const char *const *subs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *dir = rf_path_concat(base, subs[i]);
        if (!dir || rf_strv_push_take(&plan->instance_dirs, dir) < 0)
            return -1;
    }
    return 0;
}

static int add_instance_dirs(rf_plan *plan)
{
    return add_dirs(plan, plan->instance_root, instance_subdirs, RF_ARRAY_SIZE(instance_subdirs)) < 0 ||
                   add_dirs(plan, plan->user_env, user_env_subdirs, RF_ARRAY_SIZE(user_env_subdirs)) < 0
               ? -1
               : 0;
}

/* network: allowlist. Set after env.keep and env.set: the proxy is the
 * only way out, so a caller's own proxy settings would only break things.
 * Which clients read which variable: docs/network.md. */
static int add_proxy_env(rf_plan *plan)
{
    static const char http[] = "http://127.0.0.1:3128", socks[] = "socks5h://127.0.0.1:3128",
                      none[] = "localhost,127.0.0.1,::1";
    static const struct { const char *key, *value; } vars[] = {
        { "HTTP_PROXY", http },  { "http_proxy", http },   { "HTTPS_PROXY", http },
        { "https_proxy", http }, { "ALL_PROXY", socks },   { "all_proxy", socks },
        { "NO_PROXY", none },    { "no_proxy", none },
        /* npm reads its own settings first; Node 24+'s fetch needs the switch. */
        { "npm_config_proxy", http }, { "npm_config_https_proxy", http },
        { "NODE_USE_ENV_PROXY", "1" },
        { "GLOBAL_AGENT_HTTP_PROXY", http }, { "RINGFENCE_PROXY", http },
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (rf_strv_env_set(&plan->env, vars[i].key, vars[i].value) != 0)
            return -1;
    return 0;
}

int rf_plan_build_env(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    const char *user_env_dir = plan->user_env;
    plan->env = calloc(1, sizeof(char *));
    int rc = plan->env ? 0 : -1;
    if (rc == 0)
        rc = rf_strv_env_set(&plan->env, "PATH", RF_SAFE_PATH);
    for (size_t i = 0; rc == 0 && !policy->instance_dir && i < sizeof user_env / sizeof user_env[0]; i++)
        rc = env_set_path(plan, user_env[i].key, user_env_dir, user_env[i].sub);
    for (size_t i = 0; rc == 0 && policy->instance_dir && i < sizeof instance_env / sizeof instance_env[0]; i++)
        rc = env_set_path(plan, instance_env[i].key, policy->instance_dir, instance_env[i].sub);
    if (rc == 0 && policy->user)
        rc = rf_strv_env_set(&plan->env, "USER", policy->user) ||
             rf_strv_env_set(&plan->env, "LOGNAME", policy->user);
    /* Kept from the caller, then set explicitly: later entries win. */
    for (size_t i = 0; rc == 0 && policy->env_keep && policy->env_keep[i]; i++) {
        char *kv = policy->env_keep[i], *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        rc = rf_strv_env_set(&plan->env, kv, eq + 1);
        *eq = '=';
    }
    for (size_t i = 0; rc == 0 && policy->env_set && policy->env_set[i]; i++) {
        char *kv = policy->env_set[i], *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        rc = rf_strv_env_set(&plan->env, kv, eq + 1);
        *eq = '=';
    }
    if (rc == 0 && plan->network == RF_NET_ALLOWLIST)
        rc = add_proxy_env(plan);
    if (rc == 0 && plan->network == RF_NET_ALLOWLIST)
        rc = rf_plan_route_env(plan, err);
    if (rc == 0)
        rc = add_instance_dirs(plan);
    if (rc != 0)
        return rf_error_set(err, ENOMEM, "plan: environment");
    return 0;
}
