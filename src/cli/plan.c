/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence plan: print what `run` would do, as JSON; run nothing. */
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int print_plan(const rf_cli_opts *o, const rf_plan *plan)
{
    if (o->format && !strcmp(o->format, "sbpl")) {
        rf_error *err = NULL;
        char *text = rf_plan_to_sbpl(plan, &err);
        if (!text) {
            int code = rf_cli_report(err);
            rf_error_free(err);
            return code;
        }
        fputs(text, stdout);
        free(text);
        return 0;
    }
    char *json = rf_plan_to_json(plan);
    puts(json ? json : "{}");
    free(json);
    return 0;
}

int rf_cli_plan(int argc, char **argv)
{
    rf_cli_opts o;
    rf_plan *plan;
    int code;
    if (rf_cli_prepare("plan", argc, argv, help, &o, &plan, &code)) {
        rf_error *err = NULL;
        if (rf_plan_probe_limits(plan, &err) < 0) {
            code = rf_cli_report(err);
            rf_error_free(err);
        } else {
            for (char *const *w = rf_plan_warnings(plan); w && *w; w++)
                if (strstr(*w, "limits."))
                    fprintf(stderr, "ringfence: warning: %s\n", *w);
            code = print_plan(&o, plan);
        }
        rf_plan_free(plan);
    }
    rf_cli_opts_clear(&o);
    return code;
}
