/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* picoclaw's config.json (seeds 000 and 001) read as it is. Only the
 * isolation and security settings are taken; picoclaw's other sections
 * (providers, channels, models) are picoclaw's business and ignored. The
 * isolation section is read strictly: a typo there is an error.
 *
 *   isolation.enabled: false     → backend "none", with a warning
 *   isolation.expose_paths       → expose (same shape, last rule per target)
 *   agents.defaults.{workspace, restrict_to_workspace,
 *     allow_read_outside_workspace}  → agents.defaults.*
 *   agents.agents[] / agents.list[] → agents.list[] (id, workspace, tools)
 *   tools.{allow_read_paths, allow_write_paths, disabled, exec.*} → tools.*
 *   tools.cron.exec_timeout_minutes → tools.exec.timeout (seconds), unless
 *     tools.exec.timeout is set */
#include "config/config.h"
#include "util/error.h"

#include <string.h>

static const char *const agent_keys[] = { "workspace", "restrict_to_workspace",
                                          "allow_read_outside_workspace", NULL };
static const char *const exec_keys[] = { "enable_deny_patterns", "custom_deny_patterns",
                                         "custom_allow_patterns", "timeout", NULL };
static const char *const tool_keys[] = { "allow_read_paths", "allow_write_paths", "disabled", NULL };

static void copy_keys(json_t *dst, const json_t *src, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(src, keys[i]);
        if (v)
            json_object_set(dst, keys[i], v);
    }
}

static json_t *tools_of(const json_t *src)
{
    json_t *tools = json_object();
    copy_keys(tools, src, tool_keys);
    const json_t *exec = json_object_get(src, "exec");
    json_t *e = json_object();
    copy_keys(e, exec, exec_keys);
    const json_t *min = json_object_get(json_object_get(src, "cron"), "exec_timeout_minutes");
    if (json_is_number(min) && !json_object_get(e, "timeout"))
        json_object_set_new(e, "timeout", json_real(json_number_value(min) * 60));
    if (json_object_size(e))
        json_object_set_new(tools, "exec", e);
    else
        json_decref(e);
    return tools;
}

static void set_if_nonempty(json_t *dst, const char *key, json_t *v)
{
    if (json_object_size(v) || json_array_size(v))
        json_object_set_new(dst, key, v);
    else
        json_decref(v);
}

static json_t *agent_of(const json_t *src, bool with_id)
{
    json_t *a = json_object();
    if (with_id)
        copy_keys(a, src, (const char *const[]){ "id", NULL });
    copy_keys(a, src, agent_keys);
    const json_t *tools = json_object_get(src, "tools");
    if (tools)
        set_if_nonempty(a, "tools", tools_of(tools));
    return a;
}

static int read_isolation(rf_config *cfg, const char *origin, const json_t *iso, json_t *out,
                          rf_error **err)
{
    if (!iso)
        return 0;
    if (!json_is_object(iso))
        return rf_error_set(err, 0, "%s: isolation: expected an object", origin);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)iso, key, v) {
        if (strcmp(key, "enabled") && strcmp(key, "expose_paths")) {
            const char *near = rf_schema_suggest(key, (const char *const[]){ "enabled", "expose_paths", NULL });
            rf_error_set(err, 0, "%s: unknown setting 'isolation.%s'", origin, key);
            return near ? rf_error_hint_set(err, "did you mean 'isolation.%s'?", near)
                        : rf_error_hint_set(err, "picoclaw's isolation has 'enabled' and 'expose_paths'");
        }
    }
    const json_t *en = json_object_get(iso, "enabled");
    if (en && !json_is_boolean(en))
        return rf_error_set(err, 0, "%s: isolation.enabled: expected true or false", origin);
    if (json_is_false(en)) {
        json_object_set_new(out, "backend", json_string("none"));
        rf_config_add_warning(cfg, "%s: picoclaw isolation.enabled is false: commands run "
                                   "WITHOUT a sandbox (backend none)", origin);
    }
    const json_t *exp = json_object_get(iso, "expose_paths");
    if (exp)
        json_object_set(out, "expose", (json_t *)exp);
    return 0;
}

int rf_compat_picoclaw(rf_config *cfg, const char *origin, const json_t *root, unsigned flags,
                       rf_error **err)
{
    json_t *out = json_object();
    if (read_isolation(cfg, origin, json_object_get(root, "isolation"), out, err) < 0) {
        json_decref(out);
        return -1;
    }
    const json_t *tools = json_object_get(root, "tools");
    if (json_is_object(tools))
        set_if_nonempty(out, "tools", tools_of(tools));
    const json_t *agents = json_object_get(root, "agents");
    json_t *ra = json_object();
    const json_t *def = json_object_get(agents, "defaults");
    if (json_is_object(def))
        set_if_nonempty(ra, "defaults", agent_of(def, false));
    /* picoclaw has used both "agents" and "list" for the per-agent array. */
    json_t *list = json_array();
    const char *const arrays[] = { "agents", "list" };
    for (size_t k = 0; k < 2; k++) {
        const json_t *arr = json_object_get(agents, arrays[k]);
        size_t i;
        json_t *item;
        json_array_foreach(arr, i, item)
            if (json_is_object(item))
                json_array_append_new(list, agent_of(item, true));
    }
    set_if_nonempty(ra, "list", list);
    set_if_nonempty(out, "agents", ra);
    char name[4200];
    snprintf(name, sizeof name, "%s (picoclaw)", origin);
    return rf_config_add_layer(cfg, name, out, flags, err);
}
