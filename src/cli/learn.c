/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence learn: run the command observed (observe/ in the library), then
 * suggest the rules it needed (observed.c writes the report, runner.c runs
 * it; docs/learn.md). */
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf("Usage: ringfence learn [--write FILE] [RUN OPTIONS] -- COMMAND [ARG...]\n"
           "\n"
           "Run COMMAND in the sandbox exactly as 'ringfence run' would (same policy, same\n"
           "verdicts), while watching which host paths it looks for that the sandbox hides\n"
           "or keeps read-only, and which names the proxy refuses. Then print the smallest\n"
           "set of rules that would have let it run, grouped by directory, each with why.\n"
           "Secrets and persistence places (~/.ssh, ~/.aws, ~/.netrc, keyrings, shell rc\n"
           "files, docker or podman sockets) are flagged and never suggested. With --write\n"
           "FILE the rules become a YAML policy layer for --config FILE. Native backend.\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "learn", false);
    printf("\n"
           "Examples:\n"
           "  ringfence learn --write agent.yaml --keep-env PATH -- python3 -c 'import numpy'\n"
           "  ringfence run --config agent.yaml --keep-env PATH -- python3 -c 'import numpy'\n"
           "\n"
           "Exit status: the command's own (as run), or 125 when FILE could not be written.\n");
}

int rf_cli_learn(int argc, char **argv)
{
    rf_cli_opts o;
    rf_plan *plan;
    int code;
    if (rf_cli_prepare("learn", argc, argv, help, &o, &plan, &code)) {
        int idx = 1;
        while (idx < argc && strcmp(argv[idx], "--"))
            idx++;
        o.command = idx < argc ? argv + idx + 1 : NULL;
        o.learn = true;
        rf_plan_set_observe(plan, true);
        code = o.via ? rf_cli_usage_error("learn", "--via: a warm pool's sandbox cannot be observed; drop --via")
                     : rf_cli_execute(&o, plan);
        rf_plan_free(plan);
    }
    rf_cli_opts_clear(&o);
    return code;
}
