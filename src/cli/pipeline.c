/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config → policy → plan for the subcommands that start a sandbox. */
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <stdlib.h>

static void print_warnings(char *const *warnings)
{
    for (size_t i = 0; warnings && warnings[i]; i++)
        fprintf(stderr, "ringfence: warning: %s\n", warnings[i]);
}

rf_policy *rf_cli_policy(const rf_cli_opts *o, int *exit_code)
{
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    char *flags = json_dumps(o->flags, JSON_COMPACT);
    rf_policy *policy = NULL;
    if (cfg && flags && rf_config_add_json(cfg, "flags", flags, &err) == 0)
        policy = rf_policy_resolve(cfg, NULL, &err);
    free(flags);
    rf_config_free(cfg);
    if (!policy) {
        *exit_code = err ? rf_cli_report(err) : RF_EXIT_FAILURE;
        rf_error_free(err);
    }
    return policy;
}

rf_plan *rf_cli_plan_for(const rf_cli_opts *o, rf_policy *policy, char **argv, int *exit_code)
{
    rf_error *err = NULL;
    rf_plan *plan = rf_plan_build(policy, argv, &err);
    if (!plan) {
        *exit_code = rf_cli_report(err);
        rf_error_free(err);
        return NULL;
    }
    print_warnings(rf_plan_warnings(plan));
    if (rf_cli_debug(o)) {
        char *json = rf_plan_to_json(plan);
        fprintf(stderr, "ringfence: debug: linux isolation mount plan\n%s\n", json ? json : "");
        free(json);
    }
    return plan;
}
