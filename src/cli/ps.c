/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence ps: the sandboxes running now (this user's; root: everyone's). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *out)
{
    fprintf(out, "Usage: ringfence ps [--json] [--sort cpu|mem|age|procs|id|out|refusals]\n"
                 "\n"
                 "The sandboxes running now, whoever started them (run, exec, mcp, serve, a\n"
                 "program using libringfence): this user's, and everyone's for root (each\n"
                 "account's ~/.ringfence, and the registries users with another RINGFENCE_HOME\n"
                 "point to in /run/ringfence/homes). Each with its id (for 'ringfence stop\n"
                 "ID' and 'ringfence audit show --sandbox ID'),\n"
                 "user, instance, the pid of its init on the host, age, CPU time, memory and\n"
                 "processes of its whole tree, bytes sent out through the network proxy\n"
                 "(OUT) and connections or route requests it refused (REFUSED), both at most\n"
                 "a second old, backend, workspace and command (bytes shown as \\xNN where\n"
                 "the command chose them). An entry whose processes are not what it says\n"
                 "(stale, or forged) is not listed. --json adds bytes_out and refusals.\n"
                 "\n"
                 "Options:\n"
                 "  --json                 a JSON array, one object a sandbox\n"
                 "  --sort COLUMN          cpu (default), mem, age, procs, id,\n"
                 "                         out (bytes out) or refusals\n"
                 "  --help                 show this help\n");
}

int rf_cli_ps(int argc, char **argv)
{
    bool json = false;
    const char *sort = "cpu";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--sort") && i + 1 < argc && rf_cli_sort_known(argv[i + 1]))
            sort = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else
            return rf_cli_usage_error("ps", "unknown option '%s'%s", argv[i],
                                      !strcmp(argv[i], "--sort") ? ": --sort takes cpu, mem, age, procs, id, out or refusals" : "");
    }
    int code = RF_EXIT_FAILURE;
    json_t *rows = rf_cli_sandboxes(&code);
    if (!rows)
        return code;
    if (json) {
        char *text = json_dumps(rows, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (text)
            puts(text);
        free(text);
    } else {
        rf_cli_print_sandboxes(stdout, rows, sort);
    }
    json_decref(rows);
    return 0;
}
