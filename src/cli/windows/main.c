/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ringfence command on Windows: run, plan and doctor over the Windows
 * backend. The flags become one configuration layer ("flags") on top of
 * the --config files and the RINGFENCE_* variables, as on Linux, so a
 * setting means the same whichever way it is given. */
#include "ringfence-windows.h"
#include "config/config.h" /* rf_config_add_env: the RINGFENCE_* variables */

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

enum { OPT_CONFIG = 256, OPT_TIMEOUT, OPT_MEMORY, OPT_PIDS, OPT_CPU, OPT_WORKSPACE, OPT_NETWORK,
       OPT_ACCEPT_WEAKER, OPT_ALLOW_SENSITIVE, OPT_LOG_LEVEL, OPT_HELP };

static const struct option options[] = {
    { "config", required_argument, NULL, OPT_CONFIG },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "memory", required_argument, NULL, OPT_MEMORY },
    { "pids", required_argument, NULL, OPT_PIDS },
    { "cpu", required_argument, NULL, OPT_CPU },
    { "workspace", required_argument, NULL, OPT_WORKSPACE },
    { "network", required_argument, NULL, OPT_NETWORK },
    { "accept-weaker", no_argument, NULL, OPT_ACCEPT_WEAKER },
    { "allow-sensitive-workspace", no_argument, NULL, OPT_ALLOW_SENSITIVE },
    { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
};

static const char usage_text[] =
    "Usage: ringfence run|plan [OPTIONS] -- PROGRAM [ARG...]\n"
    "       ringfence doctor\n"
    "\n"
    "Windows backend: a restricted token at low integrity, in a job object that\n"
    "ends the whole tree with ringfence, the user environment redirected into the\n"
    "instance root. The workspace (the current directory) is writable, nothing\n"
    "else of yours is. See docs/windows.md for what Windows cannot enforce.\n"
    "\n"
    "Options:\n"
    "  --config FILE      a configuration file (JSON or YAML; repeatable)\n"
    "  --workspace DIR    the writable directory (default: the current one)\n"
    "  --timeout SECONDS  end the whole tree after that long (exit 124)\n"
    "  --memory SIZE      job memory limit, e.g. 256M\n"
    "  --pids N           active process limit\n"
    "  --cpu N            CPU rate cap in CPUs, e.g. 0.5\n"
    "  --network MODE     host (none and allowlist cannot be enforced: refused)\n"
    "  --accept-weaker    run although a setting cannot be enforced (listed)\n"
    "  --allow-sensitive-workspace  accept your profile, a drive or a system\n"
    "                     directory as the workspace (all of it labelled low)\n"
    "  --log-level debug  print the access rules on stderr before starting\n"
    "\n"
    "Exit status: the command's own; 124 timed out; 125 ringfence failed;\n"
    "126 not executable; 127 not found.\n";

typedef struct cli {
    rf_config *cfg;
    json_t *flags;
    bool debug;
} cli;

static int report(rf_error *err)
{
    fprintf(stderr, "ringfence: %s\n", rf_error_message(err));
    if (rf_error_hint(err))
        fprintf(stderr, "hint: %s\n", rf_error_hint(err));
    int code = rf_error_exit_code(err);
    rf_error_free(err);
    return code ? code : RF_EXIT_FAILURE;
}

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "ringfence: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    fputs("hint: see 'ringfence --help'\n", stderr);
    return RF_EXIT_FAILURE;
}

/* A number flag: the whole argument must be one, and not negative. */
static int number(json_t *obj, const char *key, const char *arg, bool integer)
{
    char *end = NULL;
    double d = strtod(arg, &end);
    if (!*arg || *end || d < 0 || (integer && d != (double)(json_int_t)d))
        return usage_error("expected a number, got", arg);
    json_object_set_new(obj, key, integer ? json_integer((json_int_t)d) : json_real(d));
    return 0;
}

static json_t *limits(cli *c)
{
    if (!json_object_get(c->flags, "limits"))
        json_object_set_new(c->flags, "limits", json_object());
    return json_object_get(c->flags, "limits");
}

static int option(cli *c, int opt, const char *arg)
{
    rf_error *err = NULL;
    switch (opt) {
    case OPT_CONFIG:
        return rf_config_load_file(c->cfg, arg, &err) < 0 ? report(err) : 0;
    case OPT_TIMEOUT:
        return number(limits(c), "timeout", arg, false);
    case OPT_MEMORY:
        return json_object_set_new(limits(c), "memory", json_string(arg)), 0;
    case OPT_PIDS:
        return number(limits(c), "pids", arg, true);
    case OPT_CPU:
        return number(limits(c), "cpu", arg, false);
    case OPT_WORKSPACE:
        return json_object_set_new(c->flags, "workspace", json_string(arg)), 0;
    case OPT_NETWORK:
        return json_object_set_new(c->flags, "network", json_pack("{s:s}", "mode", arg)), 0;
    case OPT_ACCEPT_WEAKER:
        return json_object_set_new(c->flags, "accept_weaker", json_true()), 0;
    case OPT_ALLOW_SENSITIVE:
        return json_object_set_new(c->flags, "allow_sensitive_workspace", json_true()), 0;
    case OPT_LOG_LEVEL:
        if (strcmp(arg, "debug") && strcmp(arg, "info") && strcmp(arg, "warning") && strcmp(arg, "error"))
            return usage_error("--log-level: expected debug, info, warning or error, got", arg);
        c->debug = !strcmp(arg, "debug");
        return 0;
    default:
        return usage_error("unknown option (see the list)", NULL);
    }
}

/* The flags layer goes last: flags win over files and variables. */
static int parse(cli *c, int argc, char **argv)
{
    rf_error *err = NULL;
    int opt;
    const char *level = getenv("RINGFENCE_LOG_LEVEL");
    c->debug = level && !strcmp(level, "debug");
    if (rf_config_add_env(c->cfg, environ, &err) < 0)
        return report(err);
    while ((opt = getopt_long(argc, argv, "+", options, NULL)) != -1) {
        if (opt == OPT_HELP) {
            fputs(usage_text, stdout);
            exit(0);
        }
        int r = option(c, opt, optarg);
        if (r)
            return r;
    }
    char *text = json_dumps(c->flags, 0);
    if (!text)
        return RF_EXIT_FAILURE;
    int r = rf_config_add_json(c->cfg, "flags", text, &err) < 0 ? report(err) : 0;
    free(text);
    return r;
}

static int run_or_plan(bool run, int argc, char **argv)
{
    cli c = { .cfg = rf_config_new(), .flags = json_object() };
    rf_error *err = NULL;
    rf_win_plan *plan = NULL;
    int code = !c.cfg || !c.flags ? RF_EXIT_FAILURE : parse(&c, argc, argv);
    if (code == 0 && !(plan = rf_win_plan_build(c.cfg, &(rf_win_context){ 0 }, argv + optind, &err)))
        code = report(err), err = NULL;
    if (code == 0 && (!run || c.debug)) {
        char *json = rf_win_plan_to_json(plan);
        fprintf(run ? stderr : stdout, "%s\n", json ? json : "{}");
        free(json);
    }
    for (char *const *w = code == 0 && run ? rf_win_plan_warnings(plan) : NULL; w && *w; w++)
        fprintf(stderr, "ringfence: warning: %s\n", *w);
    if (code == 0 && run && rf_win_run(plan, &code, &err) < 0)
        code = report(err);
    rf_win_plan_free(plan);
    json_decref(c.flags);
    rf_config_free(c.cfg);
    return code;
}

static int doctor(void)
{
    bool ok = false;
    char *text = rf_win_doctor_text(&ok);
    fputs(text ? text : "ringfence: doctor: out of memory\n", stdout);
    free(text);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return RF_EXIT_FAILURE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
        return fputs(usage_text, stdout), 0;
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
        return printf("ringfence %s (windows)\n", rf_version()), 0;
    if (!strcmp(cmd, "run") || !strcmp(cmd, "plan"))
        return run_or_plan(!strcmp(cmd, "run"), argc - 1, argv + 1);
    if (!strcmp(cmd, "doctor"))
        return doctor();
    fprintf(stderr, "ringfence: unknown command '%s' (the Windows build has run, plan and doctor)\n", cmd);
    fputs("hint: run 'ringfence --help'\n", stderr);
    return RF_EXIT_FAILURE;
}
