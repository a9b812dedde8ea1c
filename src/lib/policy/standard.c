/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The standard stack of layers (later wins):
 *   defaults (built in) → /etc/ringfence/config.* → the user's config.* →
 *   --config FILE... → agents.defaults + --agent → the workspace file →
 *   RINGFENCE_* → the command line.
 * The workspace file is found last, in the workspace that all the other
 * layers name, and inserted at its place. */
#include "config/config.h"
#include "policy/resolve.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Move layers [from, n) to position `at`. */
static void move_block(rf_config *cfg, size_t from, size_t at)
{
    size_t added = cfg->n_layers - from;
    if (added == 0 || at >= from)
        return;
    rf_layer *tmp = malloc(added * sizeof(rf_layer));
    if (!tmp)
        return;
    memcpy(tmp, &cfg->layers[from], added * sizeof(rf_layer));
    memmove(&cfg->layers[at + added], &cfg->layers[at], (from - at) * sizeof(rf_layer));
    memcpy(&cfg->layers[at], tmp, added * sizeof(rf_layer));
    free(tmp);
}

/* dir/config.{json,yaml,yml}: at most one of them may exist. */
static int load_dir(rf_config *cfg, const char *dir, const char *base, unsigned flags, rf_error **err)
{
    static const char *const ext[] = { "json", "yaml", "yml" };
    _cleanup_free_ char *found = NULL;
    for (size_t i = 0; i < RF_ARRAY_SIZE(ext); i++) {
        _cleanup_free_ char *p = NULL;
        if (asprintf(&p, "%s/%s.%s", dir, base, ext[i]) < 0)
            return rf_error_set(err, ENOMEM, "config path");
        if (access(p, F_OK) != 0)
            continue;
        if (found) {
            rf_error_set(err, 0, "both %s and %s exist", found, p);
            return rf_error_hint_set(err, "keep one of them; ringfence will not guess which wins");
        }
        found = steal_ptr(&p);
    }
    return found ? rf_config_load_file_flags(cfg, found, RF_CONFIG_FORMAT_AUTO, flags, err) : 0;
}

static char *user_dir(const rf_config_sources *src)
{
    if (src->user_dir)
        return strdup(src->user_dir);
    return rf_config_default_user_dir(src->ctx ? src->ctx->home : NULL);
}

static int load_files(rf_config *cfg, const rf_config_sources *src, rf_error **err)
{
    const unsigned defer = RF_LAYER_DEFER_AGENTS;
    if (!src->no_system_file &&
        load_dir(cfg, src->system_dir ? src->system_dir : "/etc/ringfence", "config", defer, err) < 0)
        return -1;
    _cleanup_free_ char *ud = src->no_user_file ? NULL : user_dir(src);
    if (ud && load_dir(cfg, ud, "config", defer, err) < 0)
        return -1;
    /* Answers of "always" (net/ask_always.c): the user's own, after the
     * file they write themselves. */
    if (ud && load_dir(cfg, ud, "answers", defer, err) < 0)
        return -1;
    for (size_t i = 0; src->config_files && src->config_files[i]; i++)
        if (rf_config_load_file_flags(cfg, src->config_files[i], src->format, defer, err) < 0)
            return -1;
    /* Profiles after the files: a named profile is a deliberate choice of
     * this run, and flags still win over it. */
    if (rf_config_load_profiles(cfg, src->profiles, defer, err) < 0)
        return -1;
    return rf_config_add_layer(cfg, "agent section", NULL, RF_LAYER_AGENT_SLOT, err);
}

static int load_workspace_file(rf_config *cfg, const rf_config_sources *src, size_t at, rf_error **err)
{
    _cleanup_free_ char *ws = NULL;
    if (rf_policy_workspace_of(cfg, src->ctx, &ws, err) < 0)
        return -1;
    size_t before = cfg->n_layers;
    if (load_dir(cfg, ws, ".ringfence", RF_LAYER_WORKSPACE, err) < 0)
        return -1;
    if (cfg->mitto_type) {
        /* Mitto's own workspace file, read the Mitto way. */
        _cleanup_free_ char *rc = NULL;
        if (asprintf(&rc, "%s/.mittorc", ws) < 0)
            return rf_error_set(err, ENOMEM, "config path");
        if (access(rc, F_OK) == 0 &&
            rf_config_load_file_flags(cfg, rc, RF_CONFIG_FORMAT_MITTO, RF_LAYER_WORKSPACE, err) < 0)
            return -1;
    }
    move_block(cfg, before, at);
    return 0;
}

static int set_string(char **dst, const char *s, rf_error **err)
{
    free(*dst);
    *dst = NULL;
    if (s && !(*dst = strdup(s)))
        return rf_error_set(err, ENOMEM, "config");
    return 0;
}

RF_EXPORT int rf_config_load_standard(rf_config *cfg, const rf_config_sources *src, rf_error **err)
{
    static const rf_config_sources none = { 0 };
    if (!cfg)
        return rf_error_set(err, EINVAL, "rf_config_load_standard: no config");
    if (!src)
        src = &none;
    cfg->trust_workspace = src->trust_workspace_config;
    if (set_string(&cfg->agent, src->agent, err) < 0 || set_string(&cfg->runner, src->runner, err) < 0)
        return -1;
    if (load_files(cfg, src, err) < 0)
        return -1;
    size_t ws_at = cfg->n_layers;
    char *const *envp = src->ctx && src->ctx->envp ? src->ctx->envp : environ;
    if (!src->no_environment && rf_config_add_env(cfg, envp, err) < 0)
        return -1;
    if (src->flags_json &&
        rf_config_add_json(cfg, src->flags_origin ? src->flags_origin : "command line",
                           src->flags_json, err) < 0)
        return -1;
    if (!src->no_workspace_file && load_workspace_file(cfg, src, ws_at, err) < 0)
        return -1;
    return 0;
}
