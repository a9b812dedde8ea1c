/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The settings of a merged tree, each checked and copied into the policy.
 * Types and enum values were checked when each layer was added (schema.c);
 * what is checked here needs the context: variables, paths, the host. */
#include "policy/resolve.h"
#include "seccomp/seccomp.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <ctype.h>
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const json_t *rf_json_path_get(const json_t *obj, const char *path)
{
    /* "a.b.c": nested objects only. */
    char key[128];
    while (obj && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        obj = json_object_get(obj, key);
        path += n + (path[n] == '.');
    }
    return obj;
}

static void get_bool(const json_t *t, const char *path, bool *out)
{
    const json_t *v = rf_json_path_get(t, path);
    if (json_is_boolean(v))
        *out = json_is_true(v);
}

static void get_num(const json_t *t, const char *path, double *out)
{
    const json_t *v = rf_json_path_get(t, path);
    if (json_is_number(v))
        *out = json_number_value(v);
}

static int pick(const json_t *t, const char *path, const char *const *names, int fallback)
{
    const char *s = json_string_value(rf_json_path_get(t, path));
    for (int i = 0; s && names[i]; i++)
        if (!strcmp(s, names[i]))
            return i;
    return fallback;
}

static int expose_one(rf_resolver *r, const json_t *rule, size_t i, rf_expose *e, bool *remove)
{
    char path[64];
    const char *src = json_string_value(json_object_get(rule, "source"));
    const char *tgt = json_string_value(json_object_get(rule, "target"));
    const char *mode = json_string_value(json_object_get(rule, "mode"));
    *remove = mode && !strcmp(mode, "none");
    if (tgt && !*tgt)
        tgt = NULL; /* picoclaw: an empty target means "same as source" */
    if (!src && !(*remove && tgt)) {
        snprintf(path, sizeof path, "expose[%zu]", i);
        rf_resolve_fail(r, path, "a rule needs a \"source\"");
        return rf_error_hint_set(r->err, "write {\"source\": \"/host/path\", \"target\": \"/in/sandbox\", \"mode\": \"ro\"}");
    }
    snprintf(path, sizeof path, "expose[%zu].%s", i, tgt ? "target" : "source");
    char buf[512];
    e->target = rf_vars_path(&r->vars, tgt ? tgt : src, rf_resolve_what(r, path, buf, sizeof buf), r->err);
    if (!e->target)
        return -1;
    if (*remove)
        return 0;
    snprintf(path, sizeof path, "expose[%zu].source", i);
    e->source = rf_vars_path(&r->vars, src, rf_resolve_what(r, path, buf, sizeof buf), r->err);
    if (!e->source)
        return -1;
    struct stat st;
    if (stat(e->source, &st) < 0 && json_is_true(json_object_get(rule, "if_exists")))
        return 1; /* a profile's toolchain this caller does not have */
    if (stat(e->source, &st) < 0 && json_is_true(json_object_get(rule, "optional"))) {
        char *w = NULL;
        if (asprintf(&w, "%s: %s does not exist; not exposed", path, e->source) >= 0)
            rf_strv_push_take(r->warnings, w);
        return 1; /* skipped: an earlier rule for this target stays */
    }
    if (stat(e->source, &st) < 0) {
        rf_resolve_fail(r, path, "%s: %s", e->source, strerror(errno));
        return rf_error_hint_set(r->err, "create it, or remove the rule");
    }
    snprintf(path, sizeof path, "expose[%zu].target", i);
    if (rf_path_is_kernel_fs(e->target) || !strcmp(e->target, "/")) {
        rf_resolve_fail(r, path, "%s cannot be a target", e->target);
        return rf_error_hint_set(r->err, "/, /proc, /dev and /sys are built by the sandbox itself; "
                                         "choose another target");
    }
    e->mode = mode && !strcmp(mode, "rw") ? RF_ACCESS_RW : RF_ACCESS_RO;
    return 0;
}

/* Last rule per target wins, compared after normalisation. */
static void expose_add(rf_resolver *r, rf_policy *p, rf_expose *e, bool remove, size_t index)
{
    size_t *idx = r->expose_index;
    for (size_t j = 0; j < p->n_exposes; j++) {
        if (strcmp(p->exposes[j].target, e->target))
            continue;
        free(p->exposes[j].source);
        free(p->exposes[j].target);
        memmove(&p->exposes[j], &p->exposes[j + 1], (p->n_exposes - j - 1) * sizeof(*e));
        if (idx)
            memmove(&idx[j], &idx[j + 1], (p->n_exposes - j - 1) * sizeof(*idx));
        p->n_exposes--;
        break;
    }
    if (remove) {
        free(e->source);
        free(e->target);
        return;
    }
    if (idx)
        idx[p->n_exposes] = index;
    p->exposes[p->n_exposes++] = *e;
}

static int resolve_exposes(rf_resolver *r, rf_policy *p)
{
    const json_t *list = json_object_get(r->tree, "expose");
    size_t n = json_array_size(list);
    if (n == 0)
        return 0;
    p->exposes = calloc(n, sizeof(rf_expose));
    if (!p->exposes)
        return rf_error_set(r->err, ENOMEM, "resolving expose");
    for (size_t i = 0; i < n; i++) {
        rf_expose e = { 0 };
        bool remove;
        int k = expose_one(r, json_array_get(list, i), i, &e, &remove);
        if (k != 0) {
            free(e.source);
            free(e.target);
            if (k < 0)
                return -1;
            continue;
        }
        expose_add(r, p, &e, remove, i);
    }
    return 0;
}

static bool env_name_ok(const char *k)
{
    if (!*k || isdigit((unsigned char)*k))
        return false;
    for (; *k; k++)
        if (!isalnum((unsigned char)*k) && *k != '_')
            return false;
    return true;
}

static int resolve_env(rf_resolver *r, rf_policy *p)
{
    const json_t *set = rf_json_path_get(r->tree, "env.set"), *keep = rf_json_path_get(r->tree, "env.keep");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)set, k, v) {
        if (!env_name_ok(k)) {
            rf_resolve_fail(r, "env.set", "\"%s\" is not a valid variable name", k);
            return rf_error_hint_set(r->err, "use letters, digits and '_'");
        }
        if (rf_strv_env_set(&p->env_set, k, json_string_value(v)) < 0)
            return rf_error_set(r->err, ENOMEM, "env.set");
    }
    size_t i;
    json_array_foreach(keep, i, v) {
        const char *raw = json_string_value(v);
        char path[48], name[256];
        snprintf(path, sizeof path, "env.keep[%zu]", i);
        /* "NAME?": kept when set, skipped in silence when not (a profile's
         * variables that only some callers have, docs/profiles.md). */
        size_t len = raw ? strlen(raw) : 0;
        bool optional = len > 1 && raw[len - 1] == '?';
        snprintf(name, sizeof name, "%.*s", (int)(optional ? len - 1 : len), raw ? raw : "");
        if (!raw || !env_name_ok(name)) {
            rf_resolve_fail(r, path, "\"%s\" is not a valid variable name", name);
            return rf_error_hint_set(r->err, "list variable names, e.g. \"LANG\"");
        }
        const char *entry = rf_strv_env_get(r->envp, name);
        if (!entry && optional)
            continue;
        if (!entry) {
            char *w = NULL;
            if (asprintf(&w, "env.keep: %s is not set in the caller's environment; skipped", name) >= 0)
                rf_strv_push_take(&p->warnings, w);
            continue;
        }
        if (rf_strv_push_unique(&p->env_keep, entry) < 0)
            return rf_error_set(r->err, ENOMEM, "env.keep");
    }
    return 0;
}

static void resolve_limits(rf_resolver *r, rf_policy *p)
{
    const json_t *mem = rf_json_path_get(r->tree, "limits.memory");
    const json_t *pids = rf_json_path_get(r->tree, "limits.pids");
    if (mem)
        rf_parse_size(mem, &p->limits.memory_bytes);
    if (json_is_integer(pids))
        p->limits.pids = (uint64_t)json_integer_value(pids);
    get_num(r->tree, "limits.cpu", &p->limits.cpu);
    get_num(r->tree, "limits.timeout", &p->limits.timeout_s);
    get_num(r->tree, "limits.kill_grace", &p->limits.kill_grace_s);
    get_bool(r->tree, "limits.require_cgroup", &p->limits.require_cgroup);
}

static int resolve_modes(rf_resolver *r, rf_policy *p)
{
    static const char *const backend[] = { "native", "landlock", "auto", "bwrap", "firejail",
                                           "container", "none", NULL };
    static const char *const landlock[] = { "best-effort", "required", "off", NULL };
    static const char *const seccomp[] = { "default", "strict", "off", NULL };
    get_bool(r->tree, "restrict_to_workspace", &p->restrict_to_workspace);
    get_bool(r->tree, "allow_read_outside_workspace", &p->allow_read_outside_workspace);
    get_bool(r->tree, "accept_weaker", &p->accept_weaker);
    get_bool(r->tree, "share_tmp", &p->share_tmp);
    p->backend = (rf_backend_kind)pick(r->tree, "backend", backend, p->backend);
    p->landlock = (rf_landlock_mode)pick(r->tree, "landlock", landlock, p->landlock);
    p->seccomp = (rf_seccomp_profile)pick(r->tree, "seccomp.profile", seccomp, p->seccomp);
    static const char *const changes[] = { "direct", "overlay", NULL };
    p->changes = (rf_changes_mode)pick(r->tree, "changes", changes, p->changes);
    const json_t *uid = json_object_get(r->tree, "map_root_to");
    if (json_is_integer(uid)) {
        if (json_integer_value(uid) >= (json_int_t)UINT32_MAX)
            return rf_resolve_fail(r, "map_root_to", "%lld is not a valid uid",
                                   (long long)json_integer_value(uid));
        p->map_root_to = (uid_t)json_integer_value(uid);
        p->map_root_to_set = true;
    }
    const char *origin = r->m ? rf_merged_origin(r->m, "backend") : NULL;
    if (origin && asprintf(&p->backend_reason, "set by %s", origin) < 0)
        p->backend_reason = NULL;
    return 0;
}

static int copy_list(rf_resolver *r, const char *path, char ***out)
{
    const json_t *list = rf_json_path_get(r->tree, path);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
        if (rf_strv_push_unique(out, json_string_value(v)) < 0)
            return rf_error_set(r->err, ENOMEM, "%s", path);
    return 0;
}

/* The same check the filter compiler makes (seccomp/seccomp.c), so a name
 * is refused here, with its position, rather than at the first start. */
static int resolve_syscalls(rf_resolver *r, const char *path, char ***out)
{
    const json_t *list = rf_json_path_get(r->tree, path);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        char *one[] = { (char *)json_string_value(v), NULL };
        if (rf_seccomp_check_names(one, path, NULL) < 0) {
            char ip[48];
            snprintf(ip, sizeof ip, "%s[%zu]", path, i);
            rf_resolve_fail(r, ip, "\"%s\" is not a system call on this architecture", one[0]);
            return rf_error_hint_set(r->err, "use the name from syscalls(2), e.g. \"ptrace\"");
        }
    }
    return copy_list(r, path, out);
}

/* protected_paths are relative to the workspace; an absolute path (or one
 * with $WORKSPACE) must lie inside it and is made relative. */
static int resolve_protected(rf_resolver *r, rf_policy *p)
{
    const json_t *list = json_object_get(r->tree, "protected_paths");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        char path[48];
        snprintf(path, sizeof path, "protected_paths[%zu]", i);
        char buf[512];
        _cleanup_free_ char *s = rf_vars_expand(&r->vars, json_string_value(v),
                                                rf_resolve_what(r, path, buf, sizeof buf), r->err);
        if (!s)
            return -1;
        _cleanup_free_ char *abs = rf_path_join(p->workspace, s);
        if (!abs || !rf_path_is_beneath(abs, p->workspace) || !strcmp(abs, p->workspace)) {
            rf_resolve_fail(r, path, "\"%s\" is not inside the workspace", s);
            return rf_error_hint_set(r->err, "protected paths are files or directories in the "
                                             "workspace, e.g. \".git/hooks\"");
        }
        if (rf_strv_push_unique(&p->protected_paths, abs + strlen(p->workspace) + 1) < 0)
            return rf_error_set(r->err, ENOMEM, "protected_paths");
    }
    return 0;
}

static int resolve_deny_paths(rf_resolver *r, rf_policy *p)
{
    const json_t *list = json_object_get(r->tree, "deny_paths");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        char path[48];
        snprintf(path, sizeof path, "deny_paths[%zu]", i);
        char buf[512];
        char *s = rf_vars_path(&r->vars, json_string_value(v), rf_resolve_what(r, path, buf, sizeof buf), r->err);
        if (!s)
            return -1;
        if (rf_strv_contains(p->deny_paths, s))
            free(s);
        else if (rf_strv_push_take(&p->deny_paths, s) < 0)
            return rf_error_set(r->err, ENOMEM, "deny_paths");
    }
    return 0;
}

static int resolve_tools(rf_resolver *r, rf_policy *p)
{
    rf_tools *t = &p->tools;
    const json_t *max = rf_json_path_get(r->tree, "tools.max_read_bytes");
    if (max)
        rf_parse_size(max, &t->max_read_bytes);
    get_bool(r->tree, "tools.exec.enable_deny_patterns", &t->exec.enable_deny_patterns);
    get_num(r->tree, "tools.exec.timeout", &t->exec.timeout_s);
    if (copy_list(r, "tools.allow_read_paths", &t->allow_read_paths) < 0 ||
        copy_list(r, "tools.allow_write_paths", &t->allow_write_paths) < 0 ||
        copy_list(r, "tools.disabled", &t->disabled) < 0 ||
        copy_list(r, "tools.exec.custom_deny_patterns", &t->exec.custom_deny_patterns) < 0 ||
        copy_list(r, "tools.exec.custom_allow_patterns", &t->exec.custom_allow_patterns) < 0)
        return -1;
    return 0;
}

int rf_resolve_tree(rf_resolver *r, rf_policy *p)
{
    if (resolve_exposes(r, p) < 0 || resolve_env(r, p) < 0 || resolve_modes(r, p) < 0 ||
        rf_resolve_network(r, p) < 0 ||
        resolve_syscalls(r, "seccomp.deny", &p->seccomp_deny) < 0 ||
        resolve_syscalls(r, "seccomp.allow", &p->seccomp_allow) < 0 ||
        resolve_protected(r, p) < 0 || resolve_deny_paths(r, p) < 0 || resolve_tools(r, p) < 0)
        return -1;
    resolve_limits(r, p);
    const char *instance = json_string_value(rf_json_path_get(r->tree, "instance"));
    if (instance && !(p->instance = strdup(instance)))
        return rf_error_set(r->err, ENOMEM, "instance");
    get_bool(r->tree, "delete_on_exit", &p->instance_ephemeral);
    get_bool(r->tree, "audit", &p->audit);
    /* Continuing a session means its overlay: --session implies --changes overlay. */
    const char *session = json_string_value(rf_json_path_get(r->tree, "session"));
    if (session && !(p->session = strdup(session)))
        return rf_error_set(r->err, ENOMEM, "session");
    if (session)
        p->changes = RF_CHANGES_OVERLAY;
    const char *image = json_string_value(rf_json_path_get(r->tree, "container.image"));
    if (image && !(p->container_image = strdup(image)))
        return rf_error_set(r->err, ENOMEM, "container.image");
    return 0;
}
