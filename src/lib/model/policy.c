/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The resolved policy: built-in defaults, freeing, and the JSON view that
 * `ringfence config` prints (the schema's keys, with resolved values). */
#include "model/policy.h"
#include "model/protected.h"
#include "util/strv.h"
#include "util/strv-json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void rf_policy_init_defaults(rf_policy *p)
{
    memset(p, 0, sizeof(*p));
    p->audit = true; /* the trail (audit/) unless a layer says audit: false */
    p->restrict_to_workspace = true;
    p->allow_read_outside_workspace = false;
    p->network = RF_NET_NONE;
    p->limits.kill_grace_s = 2;
    p->backend = RF_BACKEND_NATIVE;
    p->map_root_to = 65534;
    p->landlock = RF_LANDLOCK_BEST_EFFORT;
    p->seccomp = RF_SECCOMP_DEFAULT;
    for (const char *const *d = rf_policy_default_protected(); *d; d++)
        rf_strv_push(&p->protected_paths, *d);
    p->tools.exec.enable_deny_patterns = true;
    p->tools.exec.timeout_s = 60; /* seed 001 */
    p->tools.max_read_bytes = 1024 * 1024;
}

void rf_policy_clear(rf_policy *p)
{
    if (!p)
        return;
    free(p->workspace);
    free(p->chdir);
    free(p->instance_root);
    free(p->instance);
    free(p->system_audit_socket);
    free(p->instance_dir);
    free(p->caller_cwd);
    free(p->caller_path);
    free(p->user);
    for (size_t i = 0; i < p->n_exposes; i++) {
        free(p->exposes[i].source);
        free(p->exposes[i].target);
    }
    free(p->exposes);
    rf_strv_free(p->env_set);
    rf_strv_free(p->env_keep);
    rf_net_policy_clear(&p->net);
    free(p->backend_reason);
    rf_strv_free(p->seccomp_deny);
    rf_strv_free(p->seccomp_allow);
    rf_strv_free(p->protected_paths);
    rf_strv_free(p->tools.allow_read_paths);
    rf_strv_free(p->tools.allow_write_paths);
    rf_strv_free(p->tools.disabled);
    rf_strv_free(p->tools.exec.custom_deny_patterns);
    rf_strv_free(p->tools.exec.custom_allow_patterns);
    rf_strv_free(p->warnings);
    rf_strv_free(p->deny_paths);
    free(p->container_image);
    free(p->session);
    memset(p, 0, sizeof(*p));
}

RF_EXPORT const char *rf_policy_instance_root(const rf_policy *policy)
{
    return policy ? policy->instance_root : NULL;
}

RF_EXPORT const char *rf_policy_instance(const rf_policy *policy, bool *ephemeral)
{
    if (ephemeral)
        *ephemeral = policy && policy->instance_ephemeral;
    return policy ? policy->instance : NULL;
}

RF_EXPORT void rf_policy_free(rf_policy *policy)
{
    if (!policy)
        return;
    rf_policy_clear(policy);
    free(policy);
}

/* env_keep holds "KEY=VALUE"; print only the names, so a plan or a log
 * never carries the caller's secrets. */
static json_t *env_json(const rf_policy *p)
{
    json_t *set = json_object(), *keep = json_array();
    for (size_t i = 0; p->env_set && p->env_set[i]; i++) {
        const char *eq = strchr(p->env_set[i], '=');
        if (!eq)
            continue;
        char *k = strndup(p->env_set[i], (size_t)(eq - p->env_set[i]));
        if (k)
            json_object_set_new(set, k, json_string(eq + 1));
        free(k);
    }
    for (size_t i = 0; p->env_keep && p->env_keep[i]; i++) {
        const char *eq = strchr(p->env_keep[i], '=');
        size_t n = eq ? (size_t)(eq - p->env_keep[i]) : strlen(p->env_keep[i]);
        json_array_append_new(keep, json_stringn(p->env_keep[i], n));
    }
    return json_pack("{s:o, s:o}", "set", set, "keep", keep);
}

static json_t *exposes_json(const rf_policy *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->n_exposes; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "source", p->exposes[i].source,
                                           "target", p->exposes[i].target, "mode",
                                           p->exposes[i].mode == RF_ACCESS_RW ? "rw" : "ro"));
    return a;
}

static json_t *tools_json(const rf_tools *t)
{
    return json_pack("{s:o, s:o, s:o, s:I, s:{s:b, s:o, s:o, s:f}}",
                     "allow_read_paths", rf_strv_json(t->allow_read_paths),
                     "allow_write_paths", rf_strv_json(t->allow_write_paths),
                     "disabled", rf_strv_json(t->disabled),
                     "max_read_bytes", (json_int_t)t->max_read_bytes,
                     "exec", "enable_deny_patterns", t->exec.enable_deny_patterns,
                     "custom_deny_patterns", rf_strv_json(t->exec.custom_deny_patterns),
                     "custom_allow_patterns", rf_strv_json(t->exec.custom_allow_patterns),
                     "timeout", t->exec.timeout_s);
}

const char *rf_policy_backend_name(rf_backend_kind b)
{
    static const char *const names[] = { "native", "landlock", "auto", "bwrap",
                                         "firejail", "container", "none" };
    return (size_t)b < sizeof names / sizeof names[0] ? names[b] : "?";
}

void rf_net_policy_clear(rf_net_policy *n)
{
    rf_strv_free(n->allow_domains);
    rf_strv_free(n->deny_domains);
    rf_strv_free(n->allow_ports);
    rf_strv_free(n->hosts);
    rf_strv_free(n->publish);
    rf_strv_free(n->routes);
    free(n->ask_via);
    memset(n, 0, sizeof *n);
}

int rf_net_policy_copy(rf_net_policy *dst, const rf_net_policy *src)
{
    memset(dst, 0, sizeof *dst);
    dst->allow_private_addresses = src->allow_private_addresses;
    dst->ask = src->ask;
    dst->ask_timeout_ms = src->ask_timeout_ms;
    if (src->ask_via && !(dst->ask_via = strdup(src->ask_via)))
        return -1;
    char **const *from[] = { &src->allow_domains, &src->deny_domains, &src->allow_ports, &src->hosts,
                             &src->publish, &src->routes };
    char ***to[] = { &dst->allow_domains, &dst->deny_domains, &dst->allow_ports, &dst->hosts, &dst->publish,
                     &dst->routes };
    for (size_t i = 0; i < sizeof to / sizeof to[0]; i++)
        if (*from[i] && !(*to[i] = rf_strv_copy(*from[i]))) {
            rf_net_policy_clear(dst);
            return -1;
        }
    return 0;
}

const char *rf_net_mode_name(rf_net_mode m)
{
    return m == RF_NET_HOST ? "host" : m == RF_NET_ALLOWLIST ? "allowlist" : "none";
}

/* {"name": "address"} from "name=address" entries. */
static json_t *hosts_json(char *const *hosts)
{
    json_t *o = json_object();
    for (size_t i = 0; hosts && hosts[i]; i++) {
        const char *eq = strchr(hosts[i], '=');
        char *name = eq ? strndup(hosts[i], (size_t)(eq - hosts[i])) : NULL;
        if (name)
            json_object_set_new(o, name, json_string(eq + 1));
        free(name);
    }
    return o;
}

/* Routes as objects: their header sources ("env:VAR"), never values. */
static json_t *routes_json(char *const *routes)
{
    json_t *a = json_array();
    for (size_t i = 0; routes && routes[i]; i++) {
        json_t *r = json_loads(routes[i], 0, NULL);
        if (r)
            json_array_append_new(a, r);
    }
    return a;
}

json_t *rf_net_policy_json(rf_net_mode mode, const rf_net_policy *n)
{
    json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:b, s:o, s:o}", "mode", rf_net_mode_name(mode), "allow_domains",
                          rf_strv_json(n->allow_domains), "deny_domains", rf_strv_json(n->deny_domains), "allow_ports",
                          rf_strv_json(n->allow_ports), "allow_private_addresses", n->allow_private_addresses,
                          "hosts", hosts_json(n->hosts), "publish", rf_strv_json(n->publish));
    if (o && n->routes)
        json_object_set_new(o, "routes", routes_json(n->routes));
    if (o && n->ask)
        json_object_set_new(o, "on_blocked", json_pack("{s:s, s:s?, s:f}", "action", "ask", "via", n->ask_via,
                                                       "timeout", n->ask_timeout_ms / 1000.0));
    return o;
}

static json_t *policy_json(const rf_policy *p)
{
    static const char *const landlock[] = { "best-effort", "required", "off" };
    static const char *const seccomp[] = { "default", "strict", "off" };
    const rf_limits *l = &p->limits;
    return json_pack(
        "{s:s?, s:s?, s:s?, s:s?, s:s?, s:b, s:b, s:o, s:o, s:o,"
        " s:{s:I, s:I, s:f, s:f, s:f, s:b}, s:s, s:s?, s:b, s:b, s:I, s:b, s:s,"
        " s:{s:s, s:o, s:o}, s:o, s:o, s:o, s:o, s:{s:s?}}",
        "workspace", p->workspace, "chdir", p->chdir, "instance_root", p->instance_root,
        "caller_cwd", p->caller_cwd, "user", p->user,
        "restrict_to_workspace", p->restrict_to_workspace,
        "allow_read_outside_workspace", p->allow_read_outside_workspace,
        "expose", exposes_json(p), "network", rf_net_policy_json(p->network, &p->net),
        "env", env_json(p),
        "limits", "memory", (json_int_t)l->memory_bytes, "pids", (json_int_t)l->pids,
        "cpu", l->cpu, "timeout", l->timeout_s, "kill_grace", l->kill_grace_s,
        "require_cgroup", l->require_cgroup,
        "backend", rf_policy_backend_name(p->backend), "backend_reason", p->backend_reason,
        "accept_weaker", p->accept_weaker, "allow_sensitive_workspace", p->allow_sensitive_workspace,
        "map_root_to", (json_int_t)p->map_root_to, "share_tmp", p->share_tmp,
        "landlock", landlock[p->landlock],
        "seccomp", "profile", seccomp[p->seccomp], "deny", rf_strv_json(p->seccomp_deny),
        "allow", rf_strv_json(p->seccomp_allow),
        "protected_paths", rf_strv_json(p->protected_paths), "deny_paths", rf_strv_json(p->deny_paths),
        "tools", tools_json(&p->tools), "warnings", rf_strv_json(p->warnings),
        "container", "image", p->container_image);
}

json_t *rf_policy_to_json_value(const rf_policy *p)
{
    json_t *o = policy_json(p);
    if (o && !p->audit) /* only when off: the default keeps the record (and its digest) as it was */
        json_object_set_new(o, "audit", json_false());
    /* Only when set: the direct default keeps the record as it was. */
    if (o && p->changes == RF_CHANGES_OVERLAY) {
        json_object_set_new(o, "changes", json_string("overlay"));
        if (p->session)
            json_object_set_new(o, "session", json_string(p->session));
    }
    return o;
}

RF_EXPORT char *rf_policy_to_json(const rf_policy *policy)
{
    if (!policy)
        return NULL;
    json_t *j = rf_policy_to_json_value(policy);
    if (!j)
        return NULL;
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}
