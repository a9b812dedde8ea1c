/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the config loader: JSON or YAML text (chosen by the first byte),
 * every format reader (detected by content), then merge and resolve. */
#include "config/config.h"
#include "model/policy.h"
#include "util/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > RF_CONFIG_MAX_FILE_BYTES)
        return 0;
    const char *name = data[0] & 1 ? "fuzz.yaml" : "fuzz.json";
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    static char *const envp[] = { NULL };
    rf_context ctx = { .cwd = "/tmp", .home = "/tmp", .user = "fuzz", .tmpdir = "/tmp",
                       .rf_home = "/tmp/rf-fuzz", .envp = envp };
    if (rf_config_load_text(cfg, name, text, size - 1, RF_CONFIG_FORMAT_AUTO, 0, &err) == 0) {
        rf_policy *p = rf_policy_resolve(cfg, &ctx, &err);
        if (p) {
            free(rf_policy_to_json(p));
            rf_policy_free(p);
        }
        free(rf_config_explain(cfg, &ctx, NULL));
    }
    rf_error_free(err);
    rf_config_free(cfg);
    free(text);
    return 0;
}
