/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_config: the ordered list of layers. Each layer is checked against the
 * schema when it is added, so an error names the file it came from. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RF_EXPORT rf_config *rf_config_new(void)
{
    return calloc(1, sizeof(rf_config));
}

RF_EXPORT void rf_config_free(rf_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_layers; i++) {
        free(cfg->layers[i].origin);
        json_decref(cfg->layers[i].root);
    }
    free(cfg->layers);
    free(cfg->agent);
    free(cfg->runner);
    free(cfg->mitto_type);
    free(cfg->mitto_backend);
    rf_strv_free(cfg->warnings);
    free(cfg);
}

int rf_config_add_layer(rf_config *cfg, const char *origin, json_t *root, unsigned flags,
                        rf_error **err)
{
    rf_config_normalise_network(root);
    if (!(flags & RF_LAYER_AGENT_SLOT) && rf_schema_check(root, origin, err) < 0) {
        json_decref(root);
        return -1;
    }
    if (cfg->n_layers >= RF_CONFIG_MAX_LAYERS) {
        json_decref(root);
        return rf_error_set(err, 0, "%s: more than %d configuration layers", origin,
                            RF_CONFIG_MAX_LAYERS);
    }
    rf_layer *nl = realloc(cfg->layers, (cfg->n_layers + 1) * sizeof(*nl));
    char *o = strdup(origin);
    if (!nl || !o) {
        if (nl)
            cfg->layers = nl;
        free(o);
        json_decref(root);
        return rf_error_set(err, ENOMEM, "adding configuration layer %s", origin);
    }
    cfg->layers = nl;
    cfg->layers[cfg->n_layers++] = (rf_layer){ .origin = o, .root = root, .flags = flags };
    return 0;
}

RF_EXPORT int rf_config_add_json(rf_config *cfg, const char *origin, const char *json, rf_error **err)
{
    if (!cfg || !json)
        return rf_error_set(err, EINVAL, "rf_config_add_json: no config or no text");
    if (!origin)
        origin = "json";
    if (strlen(json) > RF_CONFIG_MAX_FILE_BYTES) {
        rf_error_set(err, 0, "%s: configuration is larger than 1 MiB", origin);
        return rf_error_hint_set(err, "keep configuration files small; split large rule lists");
    }
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rf_error_set(err, 0, "%s:%d:%d: %s", origin, jerr.line, jerr.column, jerr.text);
        return rf_error_hint_set(err, "fix the JSON syntax at that position");
    }
    return rf_config_add_layer(cfg, origin, root, 0, err);
}

int rf_config_add_warning(rf_config *cfg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0)
        return -1;
    return rf_strv_push_take(&cfg->warnings, s);
}

RF_EXPORT int rf_config_select_agent(rf_config *cfg, const char *agent, rf_error **err)
{
    char *a = NULL;
    if (agent && !(a = strdup(agent)))
        return rf_error_set(err, ENOMEM, "selecting agent");
    free(cfg->agent);
    cfg->agent = a;
    return 0;
}
