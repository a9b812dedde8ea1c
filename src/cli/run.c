/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence run: start COMMAND in the sandbox and exit with its status
 * (runner.c starts, waits and reports). */
#include "cli.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf("Usage: ringfence run [OPTIONS] -- COMMAND [ARG...]\n"
           "\n"
           "Run COMMAND in a sandbox: the workspace (default: the current directory)\n"
           "read-write, the system read-only, nothing else of yours visible, no network,\n"
           "a clean environment with HOME, TMPDIR and XDG_* redirected into the instance\n"
           "root ($RINGFENCE_HOME, else ~/.ringfence), a private /tmp, its own process\n"
           "tree that dies with it, no capabilities. Stdin, stdout and stderr are passed\n"
           "through untouched, so stdio servers (MCP, ACP) work as they are; when stdin\n"
           "is a terminal, the command gets a terminal of its own inside instead (a pty\n"
           "relayed to yours: job control, Ctrl-C, window size; --no-pty to keep your\n"
           "streams as they are). The same through a warm pool (--via SOCKET). SIGINT,\n"
           "SIGTERM and SIGHUP sent to ringfence reach every process of the sandbox.\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "run", false);
    printf("\n"
           "Examples:\n"
           "  ringfence run -- sh\n"
           "  ringfence run --workspace ~/src/app --timeout 300 -- make test\n"
           "  ringfence run --expose /opt/node --network host -- npx some-mcp-server\n"
           "  ringfence run --expose ~/data:/data:rw -- python3 job.py\n"
           "\n"
           "Exit status: the command's own; 128+N if it died of signal N; 124 timed out;\n"
           "125 ringfence failed (bad option, setup error); 126 not executable;\n"
           "127 command not found.\n");
}

int rf_cli_run(int argc, char **argv)
{
    rf_cli_opts o;
    rf_plan *plan;
    int code;
    /* --via: the sandbox comes from a pool (serve.c), not from a plan here. */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--via") || !strncmp(argv[i], "--via=", 6)) {
            int idx = rf_cli_parse_sandbox_options("run", argc, argv, &o);
            code = idx < 0 ? RF_EXIT_FAILURE
                   : o.explain_denials
                       ? rf_cli_usage_error("run", "--explain-denials: a warm pool's sandbox (--via) cannot be "
                                                   "observed; drop --via")
                   : idx >= argc ? rf_cli_usage_error("run", "no command given; put it after --")
                                 : rf_cli_run_via(&o, argv + idx);
            rf_cli_opts_clear(&o);
            return code;
        }
    if (rf_cli_prepare("run", argc, argv, help, &o, &plan, &code)) {
        rf_plan_set_observe(plan, o.explain_denials);
        code = rf_cli_execute(&o, plan);
        rf_plan_free(plan);
    }
    rf_cli_opts_clear(&o);
    return code;
}
