/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence config [--explain] [options]: print the merged, resolved
 * policy as JSON; with --explain, also the layer each value came from. */
#include "cli.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CONFIG_FILES 32

enum { OPT_EXPLAIN = 256, OPT_CONFIG, OPT_FORMAT, OPT_AGENT, OPT_RUNNER, OPT_TRUST, OPT_WORKSPACE,
       OPT_NETWORK };

static const struct option options[] = {
    { "explain", no_argument, NULL, OPT_EXPLAIN },
    { "config", required_argument, NULL, OPT_CONFIG },
    { "config-format", required_argument, NULL, OPT_FORMAT },
    { "agent", required_argument, NULL, OPT_AGENT },
    { "runner", required_argument, NULL, OPT_RUNNER },
    { "trust-workspace-config", no_argument, NULL, OPT_TRUST },
    { "workspace", required_argument, NULL, OPT_WORKSPACE },
    { "network", required_argument, NULL, OPT_NETWORK },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: ringfence config [--explain] [OPTIONS]\n"
            "\n"
            "Print the policy that 'ringfence run' would use, merged from every layer\n"
            "(defaults, /etc/ringfence, ~/.config/ringfence, --config, the agent section,\n"
            "the workspace file, RINGFENCE_* variables, the command line) and resolved.\n"
            "\n"
            "  --explain                  also show, for each value, the layer it came from\n"
            "  --config FILE              add a configuration file (repeatable)\n"
            "  --config-format FMT        ringfence, picoclaw or mitto (default: by content)\n"
            "  --agent NAME               apply agents.list entry / Mitto ACP server NAME\n"
            "  --runner TYPE              Mitto runner type: exec, firejail, docker\n"
            "  --trust-workspace-config   let the workspace file loosen the policy\n"
            "  --workspace DIR            the workspace (default: the current directory)\n"
            "  --network none|host        the network\n");
}

typedef struct args {
    const char *files[MAX_CONFIG_FILES + 1];
    size_t n_files;
    rf_config_sources src;
    bool explain;
    const char *workspace, *network;
} args;

static int parse(int argc, char **argv, args *a)
{
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case OPT_EXPLAIN: a->explain = true; break;
        case OPT_CONFIG:
            if (a->n_files >= MAX_CONFIG_FILES)
                return rf_cli_usage_error("config", "more than %d --config files", MAX_CONFIG_FILES);
            a->files[a->n_files++] = optarg;
            break;
        case OPT_FORMAT: {
            int f = rf_config_format_parse(optarg);
            if (f < 0)
                return rf_cli_usage_error("config", "--config-format: unknown format '%s' "
                                          "(ringfence, picoclaw, mitto)", optarg);
            a->src.format = (rf_config_format)f;
            break;
        }
        case OPT_AGENT: a->src.agent = optarg; break;
        case OPT_RUNNER: a->src.runner = optarg; break;
        case OPT_TRUST: a->src.trust_workspace_config = true; break;
        case OPT_WORKSPACE: a->workspace = optarg; break;
        case OPT_NETWORK: a->network = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: return rf_cli_usage_error("config", "unknown option");
        }
    }
    if (optind < argc)
        return rf_cli_usage_error("config", "unexpected argument '%s'", argv[optind]);
    a->src.config_files = a->files;
    return 0;
}

/* The command line as a layer: paths made absolute against the cwd. */
static char *flags_json(const args *a)
{
    json_t *j = json_object();
    if (a->workspace) {
        char *ws = realpath(a->workspace, NULL);
        /* If it does not exist, the resolver reports it by name. */
        json_object_set_new(j, "workspace", json_string(ws ? ws : a->workspace));
        free(ws);
    }
    if (a->network)
        json_object_set_new(j, "network", json_string(a->network));
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
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
    args a = { 0 };
    if (parse(argc, argv, &a) != 0)
        return RF_EXIT_FAILURE;
    char *flags = flags_json(&a);
    a.src.flags_json = flags;
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    char *out = NULL;
    rf_policy *p = NULL;
    if (cfg && rf_config_load_standard(cfg, &a.src, &err) == 0) {
        if (a.explain) {
            out = rf_config_explain(cfg, NULL, &err);
        } else if ((p = rf_policy_resolve(cfg, NULL, &err))) {
            out = rf_policy_to_json(p);
        }
    }
    int rc = 0;
    if (out) {
        puts(out);
        print_warnings(out, a.explain);
    } else {
        rc = rf_cli_report(err);
    }
    free(out);
    rf_policy_free(p);
    rf_config_free(cfg);
    rf_error_free(err);
    free(flags);
    return rc;
}
