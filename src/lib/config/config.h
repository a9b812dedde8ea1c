/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The config stage: an ordered list of layers, each a JSON object in
 * ringfence's schema (checked when added), merged on demand. Readers of
 * other formats (YAML, picoclaw, Mitto, RINGFENCE_* variables) translate
 * into this schema first, so there is one merge and one validator. */
#pragma once
#include "ringfence.h"
#include "util/format.h"

#include <jansson.h>
#include <stdbool.h>

#define RF_CONFIG_MAX_FILE_BYTES (1024 * 1024) /* a config file over 1 MiB is refused */
#define RF_CONFIG_MAX_RULES 1000                /* list items per layer */
#define RF_CONFIG_MAX_STRING 4096               /* one path, pattern or value */
#define RF_CONFIG_MAX_LAYERS 64

enum {
    /* This layer's agents sections wait for the agent slot (files read
     * before the agent section in the standard stack). */
    RF_LAYER_DEFER_AGENTS = 1 << 0,
    /* Written by the confined agent itself: may only tighten. */
    RF_LAYER_WORKSPACE = 1 << 1,
    /* Not a layer: the place where deferred agents sections apply. */
    RF_LAYER_AGENT_SLOT = 1 << 2,
};

typedef struct rf_layer {
    char *origin;  /* shown in errors and --explain */
    json_t *root;  /* schema-checked object (NULL for the agent slot) */
    unsigned flags;
} rf_layer;

struct rf_config {
    rf_layer *layers;
    size_t n_layers;
    char *agent;          /* selected agents.list[].id, or NULL */
    bool trust_workspace; /* workspace layers may loosen */
    char **warnings;      /* from the readers (e.g. isolation disabled) */
    char *runner;         /* Mitto runner type from --runner, or NULL */
    char *mitto_type;     /* the Mitto runner type in force, once known */
    char *mitto_backend;  /* its backend, when the type was explicit */
    bool agent_external;  /* --agent named a Mitto ACP server */
};

/* The result of merging every layer. `origins` mirrors `tree`: an object
 * for an object, an array of origin strings for an array, a string for a
 * scalar. `before_workspace` is the merge up to (not including) the first
 * untrusted workspace layer, `through_workspace` including it (both NULL
 * when there is none), for the tightening check. */
typedef struct rf_merged {
    json_t *tree;
    json_t *origins;
    json_t *before_workspace;
    json_t *through_workspace;
    const char *workspace_origin;
} rf_merged;

int rf_config_add_layer(rf_config *cfg, const char *origin, json_t *root, unsigned flags,
                        rf_error **err); /* steals root, also on failure */
int rf_config_add_warning(rf_config *cfg, const char *fmt, ...) RF_PRINTF(2, 3);
int rf_config_merge(const rf_config *cfg, rf_merged *out, bool check_agent, rf_error **err);
void rf_merged_clear(rf_merged *m);
/* Where a merged value came from: path like "expose[2].mode". NULL if it is
 * a built-in default. */
const char *rf_merged_origin(const rf_merged *m, const char *path);

/* Check a layer against the schema: known keys (did-you-mean on typos),
 * types, enum values, sizes, rule counts, regexes. */
int rf_schema_check(const json_t *root, const char *origin, rf_error **err);
/* network.c: "network": "host" → {"mode": "host"}, port numbers → strings. */
void rf_config_normalise_network(json_t *root);
/* The closest known key to `key` among the schema's keys, or NULL. */
const char *rf_schema_suggest(const char *key, const char *const *candidates);
/* Read a configuration file (at most RF_CONFIG_MAX_FILE_BYTES) into a
 * malloc'd, NUL-terminated buffer; `nofollow`: a symbolic link is refused
 * (a workspace file is the confined agent's). read-posix.c, read-windows.c. */
int rf_config_read_file(const char *path, bool nofollow, char **out, size_t *len, rf_error **err);
/* Readers (load.c, yaml.c, compat_*.c, env.c). */
json_t *rf_yaml_parse(const char *text, size_t len, const char *origin, rf_error **err);
/* profile.c: a valid profile name; load the named profiles as layers, in
 * order (an unknown one: did-you-mean in the hint). */
bool rf_profile_name_ok(const char *name);
int rf_config_load_profiles(rf_config *cfg, const char *const *names, unsigned flags, rf_error **err);
int rf_config_load_file_flags(rf_config *cfg, const char *path, rf_config_format format,
                              unsigned flags, rf_error **err);
/* The same from memory; `path` picks JSON or YAML by extension. text[len]
 * must be '\0'. */
int rf_config_load_text(rf_config *cfg, const char *path, const char *text, size_t len,
                        rf_config_format format, unsigned flags, rf_error **err);
int rf_compat_picoclaw(rf_config *cfg, const char *origin, const json_t *root, unsigned flags,
                       rf_error **err);
int rf_compat_srt(rf_config *cfg, const char *origin, const json_t *root, unsigned flags, rf_error **err);
int rf_compat_mitto(rf_config *cfg, const char *origin, const json_t *root, unsigned flags,
                    rf_error **err);
/* The RINGFENCE_* variables of envp as one layer (none: no layer). */
int rf_config_add_env(rf_config *cfg, char *const *envp, rf_error **err);
/* Set `path` (RINGFENCE_ name without the prefix, e.g. AGENTS_DEFAULTS_
 * RESTRICT_TO_WORKSPACE) in tree from the string `value`. */
int rf_schema_env_set(json_t *tree, const char *name, const char *value, const char *origin,
                      rf_error **err);

/* user-dir.c: $XDG_CONFIG_HOME/ringfence, else HOME/.config/ringfence
 * (`home` NULL: $HOME, then the password database); malloc'd or NULL. */
char *rf_config_default_user_dir(const char *home);
/* Parse "256M", "2g", 1048576 into bytes. */
int rf_parse_size(const json_t *v, uint64_t *out);
