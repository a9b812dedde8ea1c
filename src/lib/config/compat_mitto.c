/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mitto's settings.json / .mittorc restricted runners (seed 003) read as
 * they are. The runner type in force is --runner, else the selected ACP
 * server's type, else restricted_runner.default_type, else "exec"; it is
 * fixed by the first Mitto file read, so a workspace .mittorc follows it.
 * For that type, each level becomes one ringfence layer, in seed 003's
 * order (later wins, each with its own merge_strategy):
 *   1. restricted_runners[type]                        (global)
 *   2. restricted_runner.default_restrictions          (legacy global)
 *   3. acp_servers[agent].restricted_runners[type]     (agent)
 *   4. acp_servers[agent].restricted_runner.restrictions (legacy agent)
 * and in a .mittorc: restricted_runners[type], then restricted_runner.
 * Restrictions map as: allow_networking → network; allow_read_folders →
 * ro exposes; allow_write_folders → rw exposes (optional: a folder that
 * does not exist is skipped with a warning, as Mitto does); deny_folders →
 * deny_paths; docker.{image, memory_limit, cpu_limit} → container.image,
 * limits.memory, limits.cpu. Runner types: exec → backend none,
 * firejail → firejail, docker → container, bwrap → bwrap, sandbox-exec →
 * refused. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const restriction_keys[] = { "allow_networking", "allow_read_folders",
    "allow_write_folders", "deny_folders", "merge_with_defaults", "docker", NULL };
static const char *const docker_keys[] = { "image", "memory_limit", "cpu_limit", NULL };
static const char *const runner_keys[] = { "type", "restrictions", "merge_strategy", NULL };
static const char *const legacy_keys[] = { "type", "default_type", "default_restrictions",
    "restrictions", "merge_strategy", NULL };
static const char *const runner_types[] = { "exec", "sandbox-exec", "firejail", "docker", "bwrap", NULL };

static int strict(const char *origin, const char *path, const json_t *obj, const char *const *keys,
                  rf_error **err)
{
    if (!json_is_object(obj)) {
        rf_error_set(err, 0, "%s: %s: expected a mapping", origin, path);
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool known = false;
        for (size_t i = 0; keys[i] && !known; i++)
            known = !strcmp(key, keys[i]);
        if (known)
            continue;
        const char *near = rf_schema_suggest(key, keys);
        rf_error_set(err, 0, "%s: unknown setting '%s.%s'", origin, path, key);
        return near ? rf_error_hint_set(err, "did you mean '%s'?", near)
                    : rf_error_hint_set(err, "see seed 003 / docs/config.md for Mitto's keys");
    }
    return 0;
}

static int add_folders(json_t *expose, const json_t *list, const char *mode)
{
    size_t i;
    json_t *f;
    json_array_foreach(list, i, f)
        json_array_append_new(expose, json_pack("{s:O, s:s, s:b}", "source", f, "mode", mode,
                                                "optional", 1));
    return 0;
}

static int translate_docker(const char *origin, const char *path, const json_t *d, json_t *out,
                            rf_error **err)
{
    if (strict(origin, path, d, docker_keys, err) < 0)
        return -1;
    const json_t *image = json_object_get(d, "image");
    if (image)
        json_object_set_new(out, "container", json_pack("{s:O}", "image", image));
    json_t *limits = json_object();
    const json_t *mem = json_object_get(d, "memory_limit");
    if (mem)
        json_object_set(limits, "memory", (json_t *)mem);
    const json_t *cpu = json_object_get(d, "cpu_limit");
    if (json_is_string(cpu)) {
        char *end = NULL;
        double c = strtod(json_string_value(cpu), &end);
        if (!end || *end || end == json_string_value(cpu)) {
            json_decref(limits);
            return rf_error_set(err, 0, "%s: %s.cpu_limit: \"%s\" is not a number", origin, path,
                                json_string_value(cpu));
        }
        json_object_set_new(limits, "cpu", json_real(c));
    } else if (cpu) {
        json_object_set(limits, "cpu", (json_t *)cpu);
    }
    if (json_object_size(limits))
        json_object_set_new(out, "limits", limits);
    else
        json_decref(limits);
    return 0;
}

/* One Mitto restrictions mapping → a ringfence layer body. */
static int translate_restrictions(const char *origin, const char *path, const json_t *r, json_t *out,
                                  rf_error **err)
{
    if (strict(origin, path, r, restriction_keys, err) < 0)
        return -1;
    const json_t *net = json_object_get(r, "allow_networking");
    if (net && !json_is_boolean(net))
        return rf_error_set(err, 0, "%s: %s.allow_networking: expected true or false", origin, path);
    if (net)
        json_object_set_new(out, "network", json_string(json_is_true(net) ? "host" : "none"));
    static const char *const lists[] = { "allow_read_folders", "allow_write_folders", "deny_folders" };
    for (size_t i = 0; i < 3; i++) {
        const json_t *l = json_object_get(r, lists[i]);
        if (l && !json_is_array(l))
            return rf_error_set(err, 0, "%s: %s.%s: expected a list of folders", origin, path, lists[i]);
    }
    json_t *expose = json_array();
    add_folders(expose, json_object_get(r, "allow_read_folders"), "ro");
    add_folders(expose, json_object_get(r, "allow_write_folders"), "rw");
    if (json_array_size(expose))
        json_object_set_new(out, "expose", expose);
    else
        json_decref(expose);
    const json_t *deny = json_object_get(r, "deny_folders");
    if (deny)
        json_object_set(out, "deny_paths", (json_t *)deny);
    const json_t *docker = json_object_get(r, "docker");
    if (docker) {
        _cleanup_free_ char *dp = NULL;
        if (asprintf(&dp, "%s.docker", path) < 0 || translate_docker(origin, dp, docker, out, err) < 0)
            return -1;
    }
    return 0;
}

/* Add one level as a layer: `restrictions` and `merge_strategy` of `node`. */
static int add_level(rf_config *cfg, const char *origin, const char *path, const json_t *restr,
                     const json_t *strategy, unsigned flags, rf_error **err)
{
    if (!restr && !strategy)
        return 0;
    json_t *out = json_object();
    if (restr && translate_restrictions(origin, path, restr, out, err) < 0) {
        json_decref(out);
        return -1;
    }
    if (strategy)
        json_object_set(out, "merge_strategy", (json_t *)strategy);
    /* Every level carries the runner's backend, so a level that replaces
     * the ones below keeps the runner type in force. */
    if (cfg->mitto_backend)
        json_object_set_new(out, "backend", json_string(cfg->mitto_backend));
    _cleanup_free_ char *name = NULL;
    if (asprintf(&name, "%s (%s)", origin, path) < 0) {
        json_decref(out);
        return rf_error_set(err, 0, "out of memory");
    }
    return rf_config_add_layer(cfg, name, out, flags, err);
}

/* acp_servers: [{name: X, ...}] or the legacy acp: [{name: X}] / [{X: {...}}]. */
static const json_t *find_server(const json_t *root, const char *agent)
{
    if (!agent)
        return NULL;
    const char *const lists[] = { "acp_servers", "acp" };
    for (size_t k = 0; k < 2; k++) {
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(root, lists[k]), i, item) {
            const char *name = json_string_value(json_object_get(item, "name"));
            if (name && !strcmp(name, agent))
                return item;
            json_t *inner = json_object_get(item, agent);
            if (!name && json_object_size(item) == 1 && json_is_object(inner))
                return inner;
        }
    }
    return NULL;
}

static const char *explicit_type(const rf_config *cfg, const json_t *root, const json_t *server)
{
    if (cfg->runner)
        return cfg->runner;
    const json_t *legacy = json_object_get(server, "restricted_runner");
    const char *t = json_string_value(json_object_get(legacy, "type"));
    if (!t)
        t = json_string_value(json_object_get(server, "type"));
    legacy = json_object_get(root, "restricted_runner");
    if (!t)
        t = json_string_value(json_object_get(legacy, "default_type"));
    if (!t)
        t = json_string_value(json_object_get(legacy, "type"));
    return t;
}

static int check_type(const char *origin, const char *type, rf_error **err)
{
    for (size_t i = 0; runner_types[i]; i++)
        if (!strcmp(type, runner_types[i]))
            return 0;
    const char *near = rf_schema_suggest(type, runner_types);
    rf_error_set(err, 0, "%s: unknown Mitto runner type \"%s\"", origin, type);
    return near ? rf_error_hint_set(err, "did you mean \"%s\"?", near)
                : rf_error_hint_set(err, "use exec, bwrap, firejail, docker (or sandbox-exec on macOS)");
}

/* The runner type decides the backend; only an explicit type does. */
static int add_runner_layer(rf_config *cfg, const char *origin, const char *type, unsigned flags,
                            rf_error **err)
{
    if (!strcmp(type, "sandbox-exec")) {
        rf_error_set(err, 0, "%s: Mitto runner type \"sandbox-exec\" is macOS-only and not "
                             "supported on Linux", origin);
        return rf_error_hint_set(err, "pass --runner firejail (or docker, exec); ringfence "
                                      "applies the same restrictions with its own sandbox");
    }
    const char *backend = !strcmp(type, "exec") ? "none" : !strcmp(type, "docker") ? "container" : type;
    free(cfg->mitto_backend);
    if (!(cfg->mitto_backend = strdup(backend)))
        return rf_error_set(err, 0, "out of memory");
    if (!strcmp(backend, "none"))
        rf_config_add_warning(cfg, "%s: Mitto runner type exec: commands run WITHOUT a sandbox "
                                   "(backend none)", origin);
    _cleanup_free_ char *name = NULL;
    if (asprintf(&name, "%s (runner type %s)", origin, type) < 0)
        return rf_error_set(err, 0, "out of memory");
    return rf_config_add_layer(cfg, name, json_pack("{s:s}", "backend", backend), flags, err);
}

/* Check every restricted_runners section, return the one for `type`. */
static int runners_section(const char *origin, const char *path, const json_t *runners,
                           const char *type, const json_t **out, rf_error **err)
{
    *out = NULL;
    if (!runners)
        return 0;
    if (!json_is_object(runners))
        return rf_error_set(err, 0, "%s: %s: expected a mapping of runner types", origin, path);
    const char *key;
    json_t *sec;
    json_object_foreach((json_t *)runners, key, sec) {
        _cleanup_free_ char *sp = NULL;
        if (check_type(origin, key, err) < 0 || asprintf(&sp, "%s.%s", path, key) < 0 ||
            strict(origin, sp, sec, runner_keys, err) < 0)
            return -1;
        /* Check every type's restrictions, not only the one in force: a
         * typo must not wait until the day that runner is selected. */
        const json_t *restr = json_object_get(sec, "restrictions");
        json_t *scratch = json_object();
        int r = restr ? translate_restrictions(origin, sp, restr, scratch, err) : 0;
        json_decref(scratch);
        if (r < 0)
            return -1;
        if (!strcmp(key, type))
            *out = sec;
    }
    return 0;
}

static int add_runner_config(rf_config *cfg, const char *origin, const char *path,
                             const json_t *sec, unsigned flags, rf_error **err)
{
    if (!sec)
        return 0;
    _cleanup_free_ char *rp = NULL;
    if (asprintf(&rp, "%s.restrictions", path) < 0)
        return -1;
    return add_level(cfg, origin, rp, json_object_get(sec, "restrictions"),
                     json_object_get(sec, "merge_strategy"), flags, err);
}

static int add_levels(rf_config *cfg, const char *origin, const json_t *root, const json_t *server,
                      const char *type, unsigned flags, rf_error **err)
{
    const json_t *sec;
    _cleanup_free_ char *p1 = NULL, *p3 = NULL;
    const json_t *legacy = json_object_get(root, "restricted_runner");
    if (asprintf(&p1, "restricted_runners.%s", type) < 0 ||
        runners_section(origin, "restricted_runners", json_object_get(root, "restricted_runners"),
                        type, &sec, err) < 0 ||
        add_runner_config(cfg, origin, p1, sec, flags, err) < 0)
        return -1;
    if (legacy && (strict(origin, "restricted_runner", legacy, legacy_keys, err) < 0 ||
                   add_level(cfg, origin, "restricted_runner.default_restrictions",
                             json_object_get(legacy, "default_restrictions"), NULL, flags, err) < 0 ||
                   add_level(cfg, origin, "restricted_runner.restrictions",
                             json_object_get(legacy, "restrictions"),
                             json_object_get(legacy, "merge_strategy"), flags, err) < 0))
        return -1;
    if (!server)
        return 0;
    if (asprintf(&p3, "acp_servers[%s].restricted_runners", cfg->agent) < 0 ||
        runners_section(origin, p3, json_object_get(server, "restricted_runners"), type, &sec, err) < 0 ||
        add_runner_config(cfg, origin, p3, sec, flags, err) < 0)
        return -1;
    const json_t *al = json_object_get(server, "restricted_runner");
    const char *at = json_string_value(json_object_get(al, "type"));
    if (!al || (at && strcmp(at, type)))
        return 0;
    if (strict(origin, "acp_servers[].restricted_runner", al, legacy_keys, err) < 0)
        return -1;
    return add_level(cfg, origin, "acp_servers[].restricted_runner.restrictions",
                     json_object_get(al, "restrictions"), json_object_get(al, "merge_strategy"),
                     flags, err);
}

int rf_compat_mitto(rf_config *cfg, const char *origin, const json_t *root, unsigned flags,
                    rf_error **err)
{
    const json_t *server = find_server(root, cfg->agent);
    if (server)
        cfg->agent_external = true;
    if (!cfg->mitto_type) {
        const char *type = explicit_type(cfg, root, server);
        if (type && (check_type(origin, type, err) < 0 ||
                     add_runner_layer(cfg, origin, type, flags, err) < 0))
            return -1;
        cfg->mitto_type = strdup(type ? type : "exec");
        if (!cfg->mitto_type)
            return rf_error_set(err, 0, "out of memory");
    }
    return add_levels(cfg, origin, root, server, cfg->mitto_type, flags, err);
}
