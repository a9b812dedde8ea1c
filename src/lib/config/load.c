/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading one configuration file: size-capped, regular files only, JSON or
 * YAML, then translated from picoclaw or Mitto into ringfence's schema when
 * the content says so (or --config-format does). */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RF_EXPORT int rf_config_format_parse(const char *name)
{
    static const char *const names[] = { "auto", "ringfence", "picoclaw", "mitto", "srt", NULL };
    for (int i = 0; name && names[i]; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* JSON by extension or by a leading '{'; YAML otherwise. */
static json_t *parse_text(const char *text, size_t len, const char *path, rf_error **err)
{
    bool json;
    if (has_suffix(path, ".json"))
        json = true;
    else if (has_suffix(path, ".yaml") || has_suffix(path, ".yml"))
        json = false;
    else
        json = text[strspn(text, " \t\r\n")] == '{';
    if (!json)
        return rf_yaml_parse(text, len, path, err);
    if (strlen(text) != len) {
        rf_error_set(err, 0, "%s: contains a NUL byte", path);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rf_error_set(err, 0, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
        rf_error_hint_set(err, "fix the JSON syntax at that position");
    }
    return root;
}

static bool has_key(const json_t *o, const char *k)
{
    return json_object_get(o, k) != NULL;
}

/* Keys of picoclaw's config.json that ringfence's schema does not have. */
static bool looks_picoclaw(const json_t *root)
{
    static const char *const markers[] = { "isolation", "providers", "channels", "gateway",
                                           "heartbeat", "model_list", "model", NULL };
    for (size_t i = 0; markers[i]; i++)
        if (has_key(root, markers[i]))
            return true;
    const json_t *agents = json_object_get(root, "agents");
    if (has_key(agents, "agents"))
        return true;
    const json_t *def = json_object_get(agents, "defaults");
    return has_key(def, "model") || has_key(def, "max_tokens") || has_key(def, "provider");
}

/* sandbox-runtime's camelCase keys, which ringfence's schema never uses. */
static bool looks_srt(const json_t *root)
{
    const json_t *net = json_object_get(root, "network"), *fs = json_object_get(root, "filesystem");
    return has_key(net, "allowedDomains") || has_key(net, "deniedDomains") || has_key(net, "allowUnixSockets") ||
           has_key(fs, "denyRead") || has_key(fs, "allowWrite") || has_key(fs, "denyWrite") ||
           has_key(root, "ignoreViolations") || has_key(root, "enableWeakerNestedSandbox");
}

static rf_config_format detect(const json_t *root)
{
    if (has_key(root, "restricted_runners") || has_key(root, "restricted_runner") ||
        has_key(root, "acp_servers") || has_key(root, "acp"))
        return RF_CONFIG_FORMAT_MITTO;
    if (looks_picoclaw(root))
        return RF_CONFIG_FORMAT_PICOCLAW;
    if (looks_srt(root))
        return RF_CONFIG_FORMAT_SRT;
    return RF_CONFIG_FORMAT_RINGFENCE;
}

int rf_config_load_file_flags(rf_config *cfg, const char *path, rf_config_format format,
                              unsigned flags, rf_error **err)
{
    _cleanup_free_ char *text = NULL;
    size_t len = 0;
    if (rf_config_read_file(path, flags & RF_LAYER_WORKSPACE, &text, &len, err) < 0)
        return -1;
    return rf_config_load_text(cfg, path, text, len, format, flags, err);
}

/* Where in text a key named `key` starts, at or after `from`: the key as a
 * word followed by ':' (block or flow style); NULL if nowhere. */
static const char *find_key(const char *from, const char *key, size_t klen)
{
    for (const char *p = strstr(from, key); p; p = strstr(p + 1, key)) {
        bool start = p == from || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-');
        const char *q = p + klen;
        q += strspn(q, " \t\"'");
        if (start && *q == ':')
            return p;
        if (start && (p[klen] == '"' || p[klen] == '\'') && q[0] == ':')
            return p;
    }
    return NULL;
}

/* The line of setting (e.g. "limits.nosuch", "expose[1].mode") in a YAML
 * text: each key found after the one before it. A heuristic for the
 * message only (the schema check runs on the parsed tree, where lines are
 * gone); 0 when not found. */
static size_t setting_line(const char *text, const char *setting)
{
    const char *pos = text, *found = NULL;
    for (const char *c = setting; *c;) {
        size_t n = strcspn(c, ".[");
        if (n > 0 && !isdigit((unsigned char)c[0])) {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key - 1 ? n : sizeof key - 1), c);
            const char *k = find_key(pos, key, strlen(key));
            if (!k)
                return 0;
            found = pos = k;
        }
        c += n;
        if (*c == '[') /* list item N: the N+1th "- " line from here on */
            for (long i = strtol(c + 1, NULL, 10); i >= 0 && pos; i--) {
                const char *nl = pos;
                while ((nl = strchr(nl, '\n')) && nl[1 + strspn(nl + 1, " \t")] != '-')
                    nl++;
                found = pos = nl ? nl + 1 : NULL;
            }
        if (!pos)
            return 0;
        c += strspn(c, ".[]0123456789");
    }
    size_t line = 1;
    for (const char *p = text; found && p < found; p++)
        line += *p == '\n';
    return found ? line : 0;
}

/* A schema error of a YAML file gets the setting's line: "FILE:LINE: ...". */
static void add_line(rf_error **err, const char *path, const char *text)
{
    if (!err || !*err || !(*err)->message)
        return;
    char *m = (*err)->message;
    size_t plen = strlen(path);
    if (strncmp(m, path, plen) || strncmp(m + plen, ": ", 2))
        return;
    const char *rest = m + plen + 2;
    char setting[256];
    const char *q = strstr(rest, "unknown setting '");
    if (q == rest)
        snprintf(setting, sizeof setting, "%.*s", (int)strcspn(rest + 17, "'"), rest + 17);
    else
        snprintf(setting, sizeof setting, "%.*s", (int)strcspn(rest, ": "), rest);
    size_t line = setting_line(text, setting);
    char *with = NULL;
    if (line && asprintf(&with, "%s:%zu: %s", path, line, rest) >= 0) {
        free(m);
        (*err)->message = with;
    }
}

int rf_config_load_text(rf_config *cfg, const char *path, const char *text, size_t len,
                        rf_config_format format, unsigned flags, rf_error **err)
{
    if (len > RF_CONFIG_MAX_FILE_BYTES)
        return rf_error_set(err, 0, "configuration file %s is larger than 1 MiB", path);
    json_t *root = parse_text(text, len, path, err);
    if (!root)
        return -1;
    if (!json_is_object(root)) {
        json_decref(root);
        rf_error_set(err, 0, "%s: the configuration must be a mapping of settings", path);
        return rf_error_hint_set(err, "start the file with '{' (JSON) or 'key: value' (YAML)");
    }
    if (format == RF_CONFIG_FORMAT_AUTO)
        format = detect(root);
    int r;
    switch (format) {
    case RF_CONFIG_FORMAT_PICOCLAW:
        r = rf_compat_picoclaw(cfg, path, root, flags, err);
        json_decref(root);
        return r;
    case RF_CONFIG_FORMAT_MITTO:
        r = rf_compat_mitto(cfg, path, root, flags, err);
        json_decref(root);
        return r;
    case RF_CONFIG_FORMAT_SRT:
        r = rf_compat_srt(cfg, path, root, flags, err);
        json_decref(root);
        return r;
    default:
        if (rf_config_add_layer(cfg, path, root, flags, err) < 0) {
            if (text[strspn(text, " \t\r\n")] != '{')
                add_line(err, path, text);
            if (err && *err && strstr(rf_error_message(*err), "unknown setting") &&
                rf_error_hint(*err))
                rf_error_hint_set(err, "%s (if this is a picoclaw or Mitto file, pass "
                                       "--config-format picoclaw|mitto|srt)", rf_error_hint(*err));
            return -1;
        }
        return 0;
    }
}

RF_EXPORT int rf_config_load_file_as(rf_config *cfg, const char *path, rf_config_format format,
                                     rf_error **err)
{
    if (!cfg || !path)
        return rf_error_set(err, EINVAL, "rf_config_load_file: no config or no path");
    return rf_config_load_file_flags(cfg, path, format, 0, err);
}

RF_EXPORT int rf_config_load_file(rf_config *cfg, const char *path, rf_error **err)
{
    return rf_config_load_file_as(cfg, path, RF_CONFIG_FORMAT_AUTO, err);
}
