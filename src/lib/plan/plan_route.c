/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The environment of credential routes: RINGFENCE_ROUTE_<NAME>_URL for
 * each route, a preset's own variables (ANTHROPIC_BASE_URL pointing at the
 * route and a placeholder in ANTHROPIC_API_KEY...), and no copy of a
 * route's secret: a variable a header is read from (env:VAR), or any
 * variable holding that value, is dropped even when env.keep kept it. */
#include "net/route.h"
#include "plan/build.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void env_drop(char **env, size_t i)
{
    free(env[i]);
    memmove(&env[i], &env[i + 1], (rf_strv_len(&env[i + 1]) + 1) * sizeof *env);
}

/* Drop VAR, and every entry whose value holds VAR's value (a key kept
 * under another name). Values shorter than 8 bytes are no key anyone uses
 * and would match too much. */
static void drop_secret_var(char **env, const char *var)
{
    const char *value = getenv(var);
    size_t vl = strlen(var);
    for (size_t i = 0; env && env[i];) {
        const char *eq = strchr(env[i], '=');
        bool same = eq && (size_t)(eq - env[i]) == vl && !strncmp(env[i], var, vl);
        bool holds = eq && value && strlen(value) >= 8 && strstr(eq + 1, value);
        if (same || holds)
            env_drop(env, i);
        else
            i++;
    }
}

/* The source after bearer: or basic:USER:. */
static const char *source_kind(const char *src)
{
    if (!strncmp(src, "bearer:", 7))
        return src + 7;
    if (!strncmp(src, "basic:", 6) && strchr(src + 6, ':'))
        return strchr(src + 6, ':') + 1;
    return src;
}

static void drop_sources(char **env, const json_t *headers)
{
    const char *h;
    json_t *v;
    json_object_foreach((json_t *)headers, h, v) {
        const char *src = source_kind(json_string_value(v) ?: "");
        if (!strncmp(src, "env:", 4))
            drop_secret_var(env, src + 4);
    }
}

/* A key file the sandbox can see (in the workspace, an exposed path, the
 * host's /etc...) would hand the key to the command: refused. */
static int check_files(const rf_plan *plan, const char *name, const json_t *headers, rf_error **err)
{
    const char *h;
    json_t *v;
    json_object_foreach((json_t *)headers, h, v) {
        const char *src = source_kind(json_string_value(v) ?: "");
        if (strncmp(src, "file:", 5))
            continue;
        char real[PATH_MAX];
        const char *path = realpath(src + 5, real) ? real : src + 5;
        for (size_t i = 0; i < plan->n_mounts; i++) {
            const rf_mount *m = &plan->mounts[i];
            if (m->type != RF_MOUNT_BIND || !m->source || !rf_path_is_beneath(path, m->source))
                continue;
            rf_error_set(err, 0, "route %s: header %s: %s is visible inside the sandbox (below %s): the command "
                         "could read the key", name, h, src, m->target);
            return rf_error_hint_set(err, "keep the key file outside the workspace and the exposed paths, "
                                          "e.g. in ~/.config");
        }
    }
    return 0;
}

static int preset_env(rf_plan *plan, const rf_route_preset *pre, const char *base)
{
    for (size_t i = 0; pre->env[i]; i++) {
        const char *eq = strchr(pre->env[i], '='), *brace = strstr(eq, "{}");
        char *key = strndup(pre->env[i], (size_t)(eq - pre->env[i])), *value = NULL;
        int rc = key && asprintf(&value, "%.*s%s%s", brace ? (int)(brace - eq - 1) : (int)strlen(eq + 1), eq + 1,
                                 brace ? base : "", brace ? brace + 2 : "") >= 0
                     ? rf_strv_env_set(&plan->env, key, value)
                     : -1;
        free(key);
        free(value);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int rf_plan_route_env(rf_plan *plan, rf_error **err)
{
    for (size_t i = 0; plan->net.routes && plan->net.routes[i]; i++) {
        json_t *o = json_loads(plan->net.routes[i], 0, NULL);
        const char *name = json_string_value(json_object_get(o, "name"));
        const rf_route_preset *pre = rf_route_preset_find(json_string_value(json_object_get(o, "preset")) ?: "");
        char var[80], *base = NULL;
        int rc = name && asprintf(&base, "%s%s", RF_ROUTE_BASE, name) >= 0 ? 0 : -1;
        if (rc == 0)
            rc = check_files(plan, name, json_object_get(o, "headers"), err);
        if (rc == 0) {
            drop_sources(plan->env, json_object_get(o, "headers"));
            rf_route_env_name(name, var, sizeof var);
            rc = rf_strv_env_set(&plan->env, var, base);
        }
        if (rc == 0 && pre)
            rc = preset_env(plan, pre, base);
        free(base);
        json_decref(o);
        if (rc != 0)
            return -1;
    }
    return 0;
}
