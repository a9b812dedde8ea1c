/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence config [--explain] [options]: print the merged, resolved
 * policy as JSON; with --explain, also the layer each value came from. */
#include "cli.h"
#include "options.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static void help(void)
{
    printf("Usage: ringfence config [--explain] [OPTIONS]\n"
           "\n"
           "Print the policy that 'ringfence run' would use, merged from every layer\n"
           "(defaults, /etc/ringfence, ~/.config/ringfence, --config, the agent section,\n"
           "the workspace file, RINGFENCE_* variables, the command line) and resolved.\n"
           "Takes the same options as 'run'.\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "config", false);
    printf("\nExamples:\n"
           "  ringfence config --explain | jq .sources          where each setting came from\n"
           "  ringfence config --config ~/.picoclaw/config.json  read a picoclaw config as is\n");
}

/* Warnings are part of the output; they also go to stderr, so a user who
 * pipes the JSON away still sees "commands run WITHOUT a sandbox". */
static void print_warnings(const char *out, bool explain)
{
    json_t *j = json_loads(out, 0, NULL);
    json_t *w = json_object_get(explain ? json_object_get(j, "policy") : j, "warnings");
    size_t i;
    json_t *v;
    json_array_foreach(w, i, v)
        fprintf(stderr, "ringfence: warning: %s\n", json_string_value(v));
    json_decref(j);
}

int rf_cli_config(int argc, char **argv)
{
    rf_cli_opts o;
    int idx = rf_cli_parse_sandbox_options("config", argc, argv, &o);
    int rc = RF_EXIT_FAILURE;
    if (idx < 0)
        goto out;
    if (o.help) {
        help();
        rc = 0;
        goto out;
    }
    if (idx < argc) {
        rc = rf_cli_usage_error("config", "unexpected argument '%s'", argv[idx]);
        goto out;
    }
    rf_config *cfg = rf_cli_load_config(&o, &rc);
    if (!cfg)
        goto out;
    rf_error *err = NULL;
    rf_policy *p = NULL;
    char *text = NULL;
    if (o.explain)
        text = rf_config_explain(cfg, NULL, &err);
    else if ((p = rf_policy_resolve(cfg, NULL, &err)))
        text = rf_policy_to_json(p);
    if (text) {
        puts(text);
        print_warnings(text, o.explain);
        rc = 0;
    } else {
        rc = rf_cli_report(err);
    }
    free(text);
    rf_policy_free(p);
    rf_config_free(cfg);
    rf_error_free(err);
out:
    rf_cli_opts_clear(&o);
    return rc;
}
