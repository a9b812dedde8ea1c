/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence plan: print what `run` would do, as JSON; run nothing. */
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <stdlib.h>

static void help(void)
{
    printf("Usage: ringfence plan [OPTIONS] -- COMMAND [ARG...]\n"
           "\n"
           "Print the sandbox plan for COMMAND as JSON and run nothing: the namespaces,\n"
           "every mount in order (source, target, ro/rw, and why it is there), the\n"
           "complete environment, the working directory, the identity, the limits and\n"
           "the Landlock and seccomp settings. Takes the same options as 'run'.\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "plan", false);
    printf("\nExample:\n  ringfence plan --expose ~/.npmrc -- npm test | jq '.mounts[] | select(.why==\"expose\")'\n");
}

int rf_cli_plan(int argc, char **argv)
{
    rf_cli_opts o;
    int idx = rf_cli_parse_sandbox_options("plan", argc, argv, &o);
    int code = RF_EXIT_FAILURE;
    if (idx < 0)
        goto out;
    if (o.help) {
        help();
        code = 0;
        goto out;
    }
    if (idx >= argc) {
        code = rf_cli_usage_error("plan", "no command given; put it after --, e.g. ringfence plan -- sh");
        goto out;
    }
    rf_policy *policy = rf_cli_policy(&o, &code);
    if (!policy)
        goto out;
    rf_plan *plan = rf_cli_plan_for(&o, policy, argv + idx, &code);
    if (plan) {
        char *json = rf_plan_to_json(plan);
        puts(json ? json : "{}");
        free(json);
        code = 0;
        rf_plan_free(plan);
    }
    rf_policy_free(policy);
out:
    rf_cli_opts_clear(&o);
    return code;
}
