/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence policy check FILE [--within BOUNDARY]: does the policy FILE
 * grants stay within a managed boundary? Runs nothing. */
#include "cli.h"

#include "managed/managed.h"
#include "policy/resolve.h"
#include "util/cleanup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *out)
{
    fprintf(out, "Usage: ringfence policy check FILE [--within BOUNDARY]\n"
                 "\n"
                 "Decide, without running anything, whether the policy in FILE (a\n"
                 "configuration file in any format 'run --config' reads, over the built-in\n"
                 "defaults, the current directory as the workspace) grants anything the\n"
                 "managed boundary does not: a network mode, a domain, a port, a route or its\n"
                 "upstream, an exposed path or its mode, a weaker backend, Landlock or\n"
                 "seccomp, accept_weaker, a looser limit. Prints \"within\", or the first\n"
                 "thing granted beyond it. The boundary is BOUNDARY (the same keys as a\n"
                 "policy, each the most any layer may grant: docs/managed.md), else this\n"
                 "machine's (" RF_MANAGED_PATH ").\n"
                 "\n"
                 "Options:\n"
                 "  --within BOUNDARY      the boundary file (YAML or JSON)\n"
                 "  --help                 show this help\n"
                 "\n"
                 "Exit status: 0 within; 1 beyond (the excess on stdout); 125 an error (a\n"
                 "file that cannot be read or is not a policy, no boundary).\n");
}

static int report(rf_error *err)
{
    int code = rf_cli_report(err);
    rf_error_free(err);
    return code;
}

static int check(const char *file, const char *within)
{
    rf_error *err = NULL;
    _cleanup_free_ char *bpath = NULL;
    json_t *b = rf_managed_load(within, &bpath, &err);
    if (!b) {
        if (err)
            return report(err);
        fprintf(stderr, "ringfence: policy check: no boundary: %s does not exist\n", RF_MANAGED_PATH);
        fprintf(stderr, "hint: name one with --within BOUNDARY\n");
        return RF_EXIT_FAILURE;
    }
    rf_config *cfg = rf_config_new();
    rf_policy *p = NULL;
    if (cfg && rf_config_load_file(cfg, file, &err) == 0)
        p = rf_policy_resolve_unbounded(cfg, NULL, &err);
    rf_config_free(cfg);
    json_t *pj = p ? rf_policy_to_json_value(p) : NULL;
    rf_policy_free(p);
    if (!pj) {
        json_decref(b);
        return err ? report(err) : RF_EXIT_FAILURE;
    }
    rf_managed_excess x;
    int r = rf_managed_check(b, pj, &x);
    json_decref(pj);
    json_decref(b);
    if (r < 0) {
        fprintf(stderr, "ringfence: policy check: the boundary %s: %s: %s\n", bpath, x.setting, x.what);
        return RF_EXIT_FAILURE;
    }
    if (r == 0) {
        printf("within\n");
        return 0;
    }
    printf("%s: ", x.setting);
    rf_cli_put_safe(stdout, x.what); /* names and paths come from the files */
    printf("\n");
    return 1;
}

int rf_cli_policy_check(int argc, char **argv)
{
    const char *file = NULL, *within = NULL;
    bool verb = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--within") && i + 1 < argc) {
            within = argv[++i];
        } else if (!strncmp(argv[i], "--within=", 9)) {
            within = argv[i] + 9;
        } else if (!verb && !strcmp(argv[i], "check")) {
            verb = true;
        } else if (verb && !file && argv[i][0] != '-') {
            file = argv[i];
        } else {
            return rf_cli_usage_error("policy", "unexpected '%s'", argv[i]);
        }
    }
    if (!verb || !file)
        return rf_cli_usage_error("policy", "expected: policy check FILE [--within BOUNDARY]");
    return check(file, within);
}
