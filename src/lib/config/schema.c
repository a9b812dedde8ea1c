/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The schema of a config layer, as a table that the checker walks. Every
 * key is known: an unknown one is an error with a did-you-mean suggestion,
 * because a typo in a security setting ("restrict_to_worksapce") must never
 * be silently ignored. Values that need the runtime context (paths with
 * variables, whether a source exists) are checked later, by the resolver. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    K_BOOL,
    K_STR,     /* a path or a name */
    K_ENUM,    /* one of `values` */
    K_COUNT,   /* integer >= 0 */
    K_NUM,     /* number >= 0 */
    K_SIZE,    /* bytes: integer or "256M" */
    K_STRV,    /* list of strings */
    K_REGEXV,  /* list of PCRE2 patterns */
    K_STRMAP,  /* object of string values */
    K_OBJ,     /* object with `sub` keys */
    K_EXPOSES, /* list of {source, target, mode} */
    K_AGENTS,  /* list of {id, ...policy keys} */
    K_OBJMAP,  /* object of objects with `sub` keys (network.routes) */
} rf_kind;

typedef struct rf_key {
    const char *name;
    rf_kind kind;
    const struct rf_key *sub;
    const char *const *values;
} rf_key;

static const char *const v_network[] = { "none", "host", "allowlist", NULL };
static const char *const v_on_blocked[] = { "refuse", "ask", NULL };
static const char *const v_backend[] = { "native", "landlock", "auto", "bwrap", "firejail",
                                         "container", "none", NULL };
static const char *const v_landlock[] = { "best-effort", "required", "off", NULL };
static const char *const v_changes[] = { "direct", "overlay", NULL };
static const char *const v_seccomp[] = { "default", "strict", "off", NULL };
static const char *const v_mode[] = { "ro", "rw", "none", NULL };
static const char *const v_merge[] = { "extend", "replace", NULL };

static const rf_key k_expose[] = {
    { "source", K_STR, NULL, NULL },
    { "target", K_STR, NULL, NULL },
    { "mode", K_ENUM, NULL, v_mode },
    { "optional", K_BOOL, NULL, NULL }, /* a missing source is skipped with a warning */
    { "if_exists", K_BOOL, NULL, NULL }, /* skipped in silence: a profile's "if you have one" */
    { NULL, 0, NULL, NULL },
};
static const rf_key k_env[] = {
    { "set", K_STRMAP, NULL, NULL },
    { "keep", K_STRV, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_limits[] = {
    { "memory", K_SIZE, NULL, NULL },
    { "pids", K_COUNT, NULL, NULL },
    { "cpu", K_NUM, NULL, NULL },
    { "timeout", K_NUM, NULL, NULL },
    { "kill_grace", K_NUM, NULL, NULL },
    { "require_cgroup", K_BOOL, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_route[] = {
    { "url", K_STR, NULL, NULL },
    { "preset", K_STR, NULL, NULL },
    { "headers", K_STRMAP, NULL, NULL },
    { "allow", K_STRV, NULL, NULL },
    { "ca", K_STR, NULL, NULL },
    { "allow_http", K_BOOL, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
/* `network: host` is short for `network: {mode: host}` (config.c). */
static const rf_key k_network[] = {
    { "mode", K_ENUM, NULL, v_network },
    { "allow_domains", K_STRV, NULL, NULL },
    { "deny_domains", K_STRV, NULL, NULL },
    { "allow_ports", K_STRV, NULL, NULL },
    { "allow_private_addresses", K_BOOL, NULL, NULL },
    { "hosts", K_STRMAP, NULL, NULL },
    { "publish", K_STRV, NULL, NULL },
    { "routes", K_OBJMAP, k_route, NULL },
    { "on_blocked", K_ENUM, NULL, v_on_blocked },
    { "ask", K_STR, NULL, NULL },
    { "ask_timeout", K_NUM, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
/* files.on_hidden: ask is refused for now (resolve_ask.c); the key exists
 * so the refusal can say so rather than "unknown key". */
static const char *const v_on_hidden[] = { "refuse", "ask", NULL };
static const rf_key k_files[] = {
    { "on_hidden", K_ENUM, NULL, v_on_hidden },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_container[] = {
    { "image", K_STR, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_seccomp[] = {
    { "profile", K_ENUM, NULL, v_seccomp },
    { "deny", K_STRV, NULL, NULL },
    { "allow", K_STRV, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_exec[] = {
    { "enable_deny_patterns", K_BOOL, NULL, NULL },
    { "custom_deny_patterns", K_REGEXV, NULL, NULL },
    { "custom_allow_patterns", K_REGEXV, NULL, NULL },
    { "timeout", K_NUM, NULL, NULL },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_tools[] = {
    { "allow_read_paths", K_REGEXV, NULL, NULL },
    { "allow_write_paths", K_REGEXV, NULL, NULL },
    { "disabled", K_STRV, NULL, NULL },
    { "max_read_bytes", K_SIZE, NULL, NULL },
    { "exec", K_OBJ, k_exec, NULL },
    { NULL, 0, NULL, NULL },
};

/* The keys of a policy (top level, agents.defaults, agents.list[]). */
#define POLICY_KEYS                                                                      \
    { "workspace", K_STR, NULL, NULL }, { "chdir", K_STR, NULL, NULL },                 \
        { "restrict_to_workspace", K_BOOL, NULL, NULL },                                \
        { "allow_read_outside_workspace", K_BOOL, NULL, NULL },                         \
        { "expose", K_EXPOSES, k_expose, NULL }, { "network", K_OBJ, k_network, NULL },        \
        { "env", K_OBJ, k_env, NULL }, { "limits", K_OBJ, k_limits, NULL },             \
        { "backend", K_ENUM, NULL, v_backend }, { "accept_weaker", K_BOOL, NULL, NULL }, \
        { "allow_sensitive_workspace", K_BOOL, NULL, NULL },                            \
        { "share_tmp", K_BOOL, NULL, NULL }, { "changes", K_ENUM, NULL, v_changes },      \
        { "session", K_STR, NULL, NULL },                                               \
        { "map_root_to", K_COUNT, NULL, NULL }, { "landlock", K_ENUM, NULL, v_landlock }, \
        { "seccomp", K_OBJ, k_seccomp, NULL }, { "protected_paths", K_STRV, NULL, NULL }, \
        { "deny_paths", K_STRV, NULL, NULL }, { "tools", K_OBJ, k_tools, NULL },         \
        { "instance_root", K_STR, NULL, NULL }, { "container", K_OBJ, k_container, NULL }, \
        { "instance", K_STR, NULL, NULL }, { "delete_on_exit", K_BOOL, NULL, NULL },      \
        { "merge_strategy", K_ENUM, NULL, v_merge }, { "files", K_OBJ, k_files, NULL }, \
        { "audit", K_BOOL, NULL, NULL }

static const rf_key k_agent_section[] = { POLICY_KEYS, { NULL, 0, NULL, NULL } };
static const rf_key k_agent_item[] = { { "id", K_STR, NULL, NULL }, POLICY_KEYS,
                                       { NULL, 0, NULL, NULL } };
static const rf_key k_agents[] = {
    { "defaults", K_OBJ, k_agent_section, NULL },
    { "list", K_AGENTS, k_agent_item, NULL },
    { NULL, 0, NULL, NULL },
};
static const rf_key k_top[] = {
    POLICY_KEYS,
    { "agents", K_OBJ, k_agents, NULL },
    { "$schema", K_STR, NULL, NULL }, /* lets editors find docs/config.schema.json */
    { NULL, 0, NULL, NULL },
};

typedef struct check_state {
    const char *origin;
    size_t rules;
    rf_error **err;
} check_state;

static int check_object(check_state *st, const json_t *obj, const rf_key *keys, const char *path);

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return SIZE_MAX;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            size_t best = diag + cost;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (up + 1 < best)
                best = up + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *rf_schema_suggest(const char *key, const char *const *candidates)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; candidates[i]; i++) {
        size_t d = edit_distance(key, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    size_t len = strlen(key);
    size_t allowed = len < 6 ? 2 : len / 3 + 1;
    return best_d <= allowed ? best : NULL;
}

static char *join_path(const char *path, const char *key)
{
    char *s = NULL;
    if (asprintf(&s, "%s%s%s", path, *path ? "." : "", key) < 0)
        return NULL;
    return s;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

static int type_error(check_state *st, const char *path, const json_t *v, const char *want)
{
    rf_error_set(st->err, 0, "%s: %s: expected %s, got %s", st->origin, path, want, type_name(v));
    return rf_error_hint_set(st->err, "write %s as %s (see docs/config.md)", path, want);
}

static int unknown_key(check_state *st, const char *path, const char *key, const rf_key *keys)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; keys[i].name && n < RF_ARRAY_SIZE(names) - 1; i++)
        names[n++] = keys[i].name;
    names[n] = NULL;
    const char *near = rf_schema_suggest(key, names);
    char *full = join_path(path, key);
    rf_error_set(st->err, 0, "%s: unknown setting '%s'", st->origin, full ? full : key);
    free(full);
    if (near)
        return rf_error_hint_set(st->err, "did you mean '%s'?", near);
    return rf_error_hint_set(st->err, "remove it; the known settings here are listed in docs/config.md");
}

static int check_string(check_state *st, const char *path, const json_t *v)
{
    if (!json_is_string(v))
        return type_error(st, path, v, "a string");
    if (json_string_length(v) > RF_CONFIG_MAX_STRING) {
        rf_error_set(st->err, 0, "%s: %s: value is longer than %d bytes", st->origin, path,
                     RF_CONFIG_MAX_STRING);
        return -1;
    }
    if (strlen(json_string_value(v)) != json_string_length(v)) {
        rf_error_set(st->err, 0, "%s: %s: value contains a NUL byte", st->origin, path);
        return -1;
    }
    return 0;
}

static int check_enum(check_state *st, const char *path, const json_t *v, const char *const *values)
{
    if (check_string(st, path, v) < 0)
        return -1;
    const char *s = json_string_value(v);
    char list[256] = "";
    for (size_t i = 0; values[i]; i++) {
        if (!strcmp(s, values[i]))
            return 0;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "", values[i]);
    }
    rf_error_set(st->err, 0, "%s: %s: \"%s\" is not valid", st->origin, path, s);
    const char *near = rf_schema_suggest(s, values);
    if (near)
        return rf_error_hint_set(st->err, "did you mean \"%s\"? (one of %s)", near, list);
    return rf_error_hint_set(st->err, "use one of %s", list);
}

static int check_regex(check_state *st, const char *path, const char *pattern)
{
    int code = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code,
                                   &off, NULL);
    if (re) {
        pcre2_code_free(re);
        return 0;
    }
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    rf_error_set(st->err, 0, "%s: %s: regex \"%s\" does not compile at offset %zu: %s",
                 st->origin, path, pattern, (size_t)off, (const char *)msg);
    return rf_error_hint_set(st->err, "patterns are PCRE2 regular expressions; escape literal "
                                      "characters such as '.' and '(' with a backslash");
}

static int check_list(check_state *st, const char *path, const json_t *v, rf_kind kind,
                      const rf_key *sub)
{
    if (!json_is_array(v))
        return type_error(st, path, v, "a list");
    st->rules += json_array_size(v);
    if (st->rules > RF_CONFIG_MAX_RULES) {
        rf_error_set(st->err, 0, "%s: %s: more than %d rules in one layer", st->origin, path,
                     RF_CONFIG_MAX_RULES);
        return rf_error_hint_set(st->err, "split the configuration or use broader rules");
    }
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item) {
        char *ip = NULL;
        if (asprintf(&ip, "%s[%zu]", path, i) < 0)
            return rf_error_set(st->err, ENOMEM, "config check");
        int r;
        if (kind == K_EXPOSES || kind == K_AGENTS) {
            r = json_is_object(item) ? check_object(st, item, sub, ip)
                                     : type_error(st, ip, item, "an object");
            if (r == 0 && kind == K_AGENTS && !json_is_string(json_object_get(item, "id"))) {
                rf_error_set(st->err, 0, "%s: %s: an agent needs an \"id\"", st->origin, ip);
                r = rf_error_hint_set(st->err, "add \"id\": \"NAME\" and select it with --agent NAME");
            }
        } else {
            r = check_string(st, ip, item);
            if (r == 0 && kind == K_REGEXV)
                r = check_regex(st, ip, json_string_value(item));
        }
        free(ip);
        if (r < 0)
            return -1;
    }
    return 0;
}

static int check_number(check_state *st, const char *path, const json_t *v, bool integer)
{
    if (integer ? !json_is_integer(v) : !json_is_number(v))
        return type_error(st, path, v, integer ? "an integer" : "a number");
    double d = json_number_value(v);
    if (!(d >= 0) || isinf(d) || (integer && json_integer_value(v) > UINT32_MAX * 1024LL)) {
        rf_error_set(st->err, 0, "%s: %s: %g is out of range", st->origin, path, d);
        return rf_error_hint_set(st->err, "use a value >= 0 (0 means no limit)");
    }
    return 0;
}

static int check_value(check_state *st, const rf_key *k, const char *path, const json_t *v)
{
    if (json_is_null(v))
        return 0; /* null: back to the default */
    switch (k->kind) {
    case K_BOOL:
        return json_is_boolean(v) ? 0 : type_error(st, path, v, "true or false");
    case K_STR:
        return check_string(st, path, v);
    case K_ENUM:
        return check_enum(st, path, v, k->values);
    case K_COUNT:
        return check_number(st, path, v, true);
    case K_NUM:
        return check_number(st, path, v, false);
    case K_SIZE: {
        uint64_t bytes;
        if (rf_parse_size(v, &bytes) == 0)
            return 0;
        rf_error_set(st->err, 0, "%s: %s: not a size", st->origin, path);
        return rf_error_hint_set(st->err, "write bytes as a number or a string like \"256M\" "
                                          "(suffixes K, M, G, T)");
    }
    case K_STRV:
    case K_REGEXV:
    case K_EXPOSES:
    case K_AGENTS:
        return check_list(st, path, v, k->kind, k->sub);
    case K_STRMAP: {
        if (!json_is_object(v))
            return type_error(st, path, v, "an object of strings");
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)v, key, item) {
            _cleanup_free_ char *ip = join_path(path, key);
            if (!ip || check_string(st, ip, item) < 0)
                return -1;
        }
        st->rules += json_object_size(v);
        return 0;
    }
    case K_OBJ:
        return json_is_object(v) ? check_object(st, v, k->sub, path)
                                 : type_error(st, path, v, "an object");
    case K_OBJMAP: {
        if (!json_is_object(v))
            return type_error(st, path, v, "an object of objects");
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)v, key, item) {
            _cleanup_free_ char *ip = join_path(path, key);
            if (!ip)
                return rf_error_set(st->err, ENOMEM, "config check");
            if (json_is_null(item))
                continue;
            if (!json_is_object(item))
                return type_error(st, ip, item, "an object");
            if (check_object(st, item, k->sub, ip) < 0)
                return -1;
        }
        return 0;
    }
    }
    return 0;
}

static int check_object(check_state *st, const json_t *obj, const rf_key *keys, const char *path)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        const rf_key *k = NULL;
        for (size_t i = 0; keys[i].name; i++)
            if (!strcmp(keys[i].name, key))
                k = &keys[i];
        if (!k)
            return unknown_key(st, path, key, keys);
        _cleanup_free_ char *kp = join_path(path, key);
        if (!kp)
            return rf_error_set(st->err, ENOMEM, "config check");
        if (check_value(st, k, kp, v) < 0)
            return -1;
    }
    return 0;
}

int rf_schema_check(const json_t *root, const char *origin, rf_error **err)
{
    check_state st = { .origin = origin, .rules = 0, .err = err };
    if (!json_is_object(root)) {
        rf_error_set(err, 0, "%s: the configuration must be an object, got %s", origin,
                     type_name(root));
        return rf_error_hint_set(err, "start the file with '{' (JSON) or 'key: value' (YAML)");
    }
    return check_object(&st, root, k_top, "");
}

int rf_parse_size(const json_t *v, uint64_t *out)
{
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return -1;
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return -1;
    const char *s = json_string_value(v);
    if (!isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: return -1;
    }
    if (shift && (*end == 'i'))
        end++;
    if (shift && (*end == 'B' || *end == 'b'))
        end++;
    if (*end || (shift && n > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)n << shift;
    return 0;
}

/* ── RINGFENCE_* environment variables ── */

static bool name_is(const char *upper, const char *key, size_t n)
{
    if (strlen(key) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (toupper((unsigned char)key[i]) != upper[i])
            return false;
    return true;
}

/* Find the key whose upper-case name is `rest` or a prefix of it followed
 * by '_' (the longest such), as picoclaw's env names are built. */
static const rf_key *env_key(const rf_key *keys, const char *rest, size_t *used)
{
    const rf_key *best = NULL;
    size_t best_n = 0;
    for (size_t i = 0; keys[i].name; i++) {
        size_t n = strlen(keys[i].name);
        if (n <= best_n)
            continue;
        if ((rest[n] == '\0' || rest[n] == '_') && name_is(rest, keys[i].name, n) &&
            (rest[n] == '\0' || keys[i].kind == K_OBJ)) {
            best = &keys[i];
            best_n = n;
        }
    }
    *used = best_n;
    return best;
}

static json_t *env_value(const rf_key *k, const char *value)
{
    if (value[0] == '[' || value[0] == '{')
        return json_loads(value, JSON_REJECT_DUPLICATES, NULL);
    switch (k->kind) {
    case K_BOOL: {
        static const char *const yes[] = { "true", "1", "yes", "on", NULL };
        static const char *const no[] = { "false", "0", "no", "off", NULL };
        for (size_t i = 0; yes[i]; i++) {
            if (!strcasecmp(value, yes[i]))
                return json_true();
            if (!strcasecmp(value, no[i]))
                return json_false();
        }
        return json_string(value);
    }
    case K_COUNT:
    case K_NUM: {
        char *end = NULL;
        double d = strtod(value, &end);
        if (!*value || *end)
            return json_string(value);
        if (k->kind == K_COUNT && d == (double)(long long)d)
            return json_integer((long long)d);
        return json_real(d);
    }
    case K_STRV:
    case K_REGEXV: {
        /* Comma-separated, as picoclaw's env lists; use JSON for patterns
         * that contain commas. */
        json_t *a = json_array();
        const char *p = value;
        while (*p) {
            size_t n = strcspn(p, ",");
            if (n)
                json_array_append_new(a, json_stringn(p, n));
            p += n + (p[n] == ',');
        }
        return a;
    }
    default:
        return json_string(value);
    }
}

int rf_schema_env_set(json_t *tree, const char *name, const char *value, const char *origin,
                      rf_error **err)
{
    const rf_key *keys = k_top;
    const char *rest = name;
    json_t *obj = tree;
    for (;;) {
        size_t used;
        const rf_key *k = env_key(keys, rest, &used);
        if (!k) {
            rf_error_set(err, 0, "%s: no setting is named by this variable", origin);
            return rf_error_hint_set(err, "names follow the settings, e.g. RINGFENCE_NETWORK, "
                                          "RINGFENCE_LIMITS_MEMORY, "
                                          "RINGFENCE_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE");
        }
        if (rest[used] == '\0') {
            json_t *v = env_value(k, value);
            if (!v) {
                rf_error_set(err, 0, "%s: the value is not valid JSON", origin);
                return -1;
            }
            json_object_set_new(obj, k->name, v);
            return 0;
        }
        json_t *child = json_object_get(obj, k->name);
        if (!json_is_object(child)) {
            child = json_object();
            json_object_set_new(obj, k->name, child);
        }
        obj = child;
        keys = k->sub;
        rest += used + 1;
    }
}
