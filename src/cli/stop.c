/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence stop ID: end a running sandbox's whole tree. */
#include "cli.h"

#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *out)
{
    fprintf(out, "Usage: ringfence stop [--grace SECONDS] ID\n"
                 "\n"
                 "End the running sandbox ID (as 'ringfence ps' lists it; a unique prefix\n"
                 "will do): SIGTERM to every process in it, then, after the grace period,\n"
                 "SIGKILL to the whole tree. Only its owner or root may stop it. The run's\n"
                 "own ringfence reports the end as usual (exit 128+N, the audit's run.end).\n"
                 "\n"
                 "Options:\n"
                 "  --grace SECONDS        how long SIGTERM has before SIGKILL (default 10)\n"
                 "  --help                 show this help\n"
                 "\n"
                 "Exit status: 0 stopped; 125 no such sandbox, not yours, or an error.\n");
}

static const json_t *find(const json_t *rows, const char *id, int *matches)
{
    const json_t *hit = NULL;
    size_t i;
    json_t *o;
    *matches = 0;
    json_array_foreach(rows, i, o) {
        const char *oid = json_string_value(json_object_get(o, "id"));
        if (oid && !strncmp(oid, id, strlen(id))) {
            hit = o;
            ++*matches;
        }
    }
    return hit;
}

int rf_cli_stop(int argc, char **argv)
{
    double grace = 10;
    const char *id = NULL;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--grace") && i + 1 < argc) {
            grace = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !(grace >= 0 && grace <= 3600))
                return rf_cli_usage_error("stop", "--grace %s: expected seconds from 0 to 3600", argv[i]);
        } else if (argv[i][0] != '-' && !id) {
            id = argv[i];
        } else {
            return rf_cli_usage_error("stop", "unexpected '%s'", argv[i]);
        }
    }
    if (!id || !*id || strspn(id, "0123456789abcdef") != strlen(id))
        return rf_cli_usage_error("stop", "needs a sandbox ID (hex digits, from 'ringfence ps')");
    int code = RF_EXIT_FAILURE, matches;
    json_t *rows = rf_cli_sandboxes(&code);
    if (!rows)
        return code;
    const json_t *hit = find(rows, id, &matches);
    if (matches != 1) {
        fprintf(stderr, "ringfence: stop %s: %s\n", id, matches ? "more than one sandbox has this prefix" :
                                                         "no running sandbox of yours has this id");
        fprintf(stderr, "hint: 'ringfence ps' lists them%s\n", matches ? "; give more of the id" : "");
        json_decref(rows);
        return RF_EXIT_FAILURE;
    }
    rf_error *err = NULL;
    bool killed = false;
    code = 0;
    if (rf_registry_stop(hit, grace, &killed, &err) < 0) {
        code = rf_cli_report(err);
        rf_error_free(err);
    } else {
        printf("stopped %s%s\n", json_string_value(json_object_get(hit, "id")),
               killed ? " (SIGKILL after the grace period)" : "");
    }
    json_decref(rows);
    return code;
}
