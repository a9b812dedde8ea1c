/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RINGFENCE_* environment variables as one layer, named after the settings
 * the way picoclaw names its PICOCLAW_* variables:
 *   RINGFENCE_NETWORK=host
 *   RINGFENCE_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE=false
 *   RINGFENCE_TOOLS_EXEC_CUSTOM_DENY_PATTERNS='["\\bcurl\\b"]'
 * A RINGFENCE_* variable that names no setting is an error (a typo must
 * not be ignored), except the few that are not settings. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <stdio.h>
#include <string.h>

#define PREFIX "RINGFENCE_"

static bool reserved(const char *name)
{
    /* BIN and LIB point the Node.js and Python bindings at a build; a
     * harness exports them, and the commands it wraps (ringfence/srt's
     * wrapWithSandbox) start ringfence with that environment. */
    static const char *const names[] = { "HOME", "LOG", "LOG_LEVEL", "DEBUG", "PROFILE_PATH", "BIN", "LIB", NULL };
    if (!strncmp(name, "TEST_", 5)) /* RINGFENCE_TEST_*: test-only hooks (-Dtest_hooks), not settings */
        return true;
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

int rf_config_add_env(rf_config *cfg, char *const *envp, rf_error **err)
{
    json_t *layer = json_object();
    for (size_t i = 0; envp && envp[i]; i++) {
        if (strncmp(envp[i], PREFIX, strlen(PREFIX)) != 0)
            continue;
        const char *eq = strchr(envp[i], '=');
        if (!eq)
            continue;
        char name[128];
        size_t n = (size_t)(eq - envp[i]);
        if (n >= sizeof name) {
            json_decref(layer);
            return rf_error_set(err, 0, "environment variable %.40s...: name too long", envp[i]);
        }
        memcpy(name, envp[i], n);
        name[n] = '\0';
        if (reserved(name + strlen(PREFIX)))
            continue;
        /* Each variable is checked alone so an error names it. */
        json_t *one = json_object();
        _cleanup_free_ char *origin = NULL;
        if (asprintf(&origin, "environment variable %s", name) < 0 ||
            rf_schema_env_set(one, name + strlen(PREFIX), eq + 1, origin, err) < 0 ||
            (rf_config_normalise_network(one), rf_schema_check(one, origin, err) < 0) ||
            json_object_update_recursive(layer, one) < 0) {
            json_decref(one);
            json_decref(layer);
            return -1;
        }
        json_decref(one);
    }
    if (json_object_size(layer) == 0) {
        json_decref(layer);
        return 0;
    }
    return rf_config_add_layer(cfg, "environment (RINGFENCE_*)", layer, 0, err);
}
