/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence exec: check a shell command with the exec guard (seed 001's
 * deny patterns and workspace paths), then run it with sh -c in the
 * sandbox. This file has the check; running is wired in with the sandbox
 * options. Options come from one table (getopt_long and --help), and the
 * guard's options are built in one place, exec_guard_options(), so config
 * files can fill the same fields later. */
#include "cli.h"
#include "util/strv.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum exec_opt_id {
    EXEC_OPT_HELP = 'h', EXEC_OPT_WORKSPACE = 'w',
    EXEC_OPT_CHECK = 256, EXEC_OPT_DENY, EXEC_OPT_ALLOW, EXEC_OPT_NO_DENY, EXEC_OPT_NO_RESTRICT,
};

static const struct exec_option {
    const char *name;
    int has_arg;
    int id;
    const char *metavar;
    const char *help;
} exec_options[] = {
    { "check", no_argument, EXEC_OPT_CHECK, NULL,
      "only check the command with the guard and print the verdict; run nothing" },
    { "workspace", required_argument, EXEC_OPT_WORKSPACE, "DIR",
      "the working directory paths are checked against (default: the current directory)" },
    { "deny", required_argument, EXEC_OPT_DENY, "PATTERN",
      "also block commands matching this PCRE2 pattern (custom_deny_patterns); repeatable" },
    { "allow", required_argument, EXEC_OPT_ALLOW, "PATTERN",
      "exempt commands matching this pattern from the deny patterns (custom_allow_patterns); repeatable" },
    { "no-deny-patterns", no_argument, EXEC_OPT_NO_DENY, NULL,
      "no pattern checks at all (enable_deny_patterns: false)" },
    { "no-restrict", no_argument, EXEC_OPT_NO_RESTRICT, NULL,
      "do not check paths against the workspace (restrict_to_workspace: false)" },
    { "help", no_argument, EXEC_OPT_HELP, NULL, "show this help" },
};

#define N_EXEC_OPTIONS (sizeof exec_options / sizeof exec_options[0])

typedef struct exec_args {
    bool check, help, no_deny, no_restrict;
    const char *workspace;
    char **deny, **allow;
    char *command;
} exec_args;

static void exec_args_clear(exec_args *a)
{
    rf_strv_free(a->deny);
    rf_strv_free(a->allow);
    free(a->command);
}

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence exec --check [OPTIONS] -- 'SHELL COMMAND'\n"
            "\n"
            "Check a shell command the way an agent's exec tool would, before it runs:\n"
            "  - deny patterns: rm -rf, sudo, curl | sh, git push, $(...) and the rest of\n"
            "    the default list (docs/guard.md), matched against the command as written\n"
            "    and against each simple command with quotes, escapes and wrappers\n"
            "    (env, nice, timeout, xargs, sh -c) taken away, so r''m -rf is rm -rf;\n"
            "  - workspace paths: an absolute path, ~ or ../ that leads outside the\n"
            "    workspace blocks the command (/dev/null and the std streams are fine).\n"
            "It is a seatbelt, not the wall: the sandbox confines whatever gets past it.\n"
            "\n"
            "Options:\n");
    for (size_t i = 0; i < N_EXEC_OPTIONS; i++) {
        const struct exec_option *o = &exec_options[i];
        char head[64];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        fprintf(out, "  %-20s %s\n", head, o->help);
    }
    fprintf(out,
            "\n"
            "Output (stdout): 'allowed', or 'blocked: <message>' followed by\n"
            "'pattern: <the deny pattern>' and 'detail: <what it matched, or the path>'.\n"
            "\n"
            "Examples:\n"
            "  ringfence exec --check -- 'make -j4 test'              allowed\n"
            "  ringfence exec --check -- 'r\"m\" -fr build'            blocked: pattern\n"
            "  ringfence exec --check -- 'cat ../../etc/passwd'       blocked: path\n"
            "  ringfence exec --check --allow '^git push origin main$' -- 'git push origin main'\n"
            "  ringfence exec --check --deny '\\bcurl\\b.*--upload-file' -- 'curl -T x --upload-file y'\n"
            "\n"
            "Exit status: 0 allowed; 126 blocked; 125 bad input (a bad pattern, a\n"
            "command longer than 64 KiB or too deeply nested to check).\n");
}

static int join_command(exec_args *a, int argc, char **argv, int from)
{
    size_t len = 1;
    for (int i = from; i < argc; i++)
        len += strlen(argv[i]) + 1;
    a->command = calloc(1, len);
    if (!a->command)
        return -1;
    for (int i = from; i < argc; i++) {
        if (i > from)
            strcat(a->command, " ");
        strcat(a->command, argv[i]);
    }
    return 0;
}

/* Parse argv into *a. Returns 0, or an exit code after printing why. */
static int parse_args(int argc, char **argv, exec_args *a)
{
    struct option longopts[N_EXEC_OPTIONS + 1];
    for (size_t i = 0; i < N_EXEC_OPTIONS; i++)
        longopts[i] = (struct option){ exec_options[i].name, exec_options[i].has_arg, NULL, exec_options[i].id };
    longopts[N_EXEC_OPTIONS] = (struct option){ 0 };
    optind = 0; /* glibc: start over, whatever parsed argv before */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+hw:", longopts, NULL)) != -1) {
        switch (c) {
        case EXEC_OPT_HELP: a->help = true; break;
        case EXEC_OPT_WORKSPACE: a->workspace = optarg; break;
        case EXEC_OPT_CHECK: a->check = true; break;
        case EXEC_OPT_NO_DENY: a->no_deny = true; break;
        case EXEC_OPT_NO_RESTRICT: a->no_restrict = true; break;
        case EXEC_OPT_DENY:
        case EXEC_OPT_ALLOW:
            if (rf_strv_push(c == EXEC_OPT_DENY ? &a->deny : &a->allow, optarg) < 0)
                return rf_cli_usage_error("exec", "out of memory");
            break;
        default:
            return rf_cli_usage_error("exec", "unknown option or missing value: '%s'", argv[optind - 1]);
        }
    }
    if (a->help)
        return 0;
    if (optind >= argc)
        return rf_cli_usage_error("exec", "no command given: ringfence exec --check -- 'shell command'");
    if (join_command(a, argc, argv, optind) < 0)
        return rf_cli_usage_error("exec", "out of memory");
    return 0;
}

/* The guard's options from the parsed arguments; *ws_out owns the
 * absolute workspace. Config-file settings will be merged here too. */
static int exec_guard_options(const exec_args *a, rf_guard_options *o, char **ws_out)
{
    *o = (rf_guard_options)RF_GUARD_OPTIONS_INIT;
    o->enable_deny_patterns = !a->no_deny;
    o->restrict_to_workspace = !a->no_restrict;
    o->custom_deny = (const char *const *)a->deny;
    o->custom_allow = (const char *const *)a->allow;
    char *ws = a->workspace ? realpath(a->workspace, NULL) : getcwd(NULL, 0);
    if (!ws) {
        fprintf(stderr, "ringfence exec: workspace %s: %s\n", a->workspace ? a->workspace : ".", strerror(errno));
        fprintf(stderr, "hint: give an existing directory with --workspace DIR\n");
        return RF_EXIT_FAILURE;
    }
    o->workspace = *ws_out = ws;
    return 0;
}

static void print_verdict(const rf_guard_verdict *v)
{
    if (v->result == RF_GUARD_ALLOWED) {
        printf("allowed\n");
        return;
    }
    printf("blocked: %s\n", v->message);
    if (v->pattern)
        printf("pattern: %s\n", v->pattern);
    if (v->detail)
        printf("detail: %s\n", v->detail);
}

int rf_cli_exec(int argc, char **argv)
{
    exec_args a = { 0 };
    int rc = parse_args(argc, argv, &a);
    if (rc || a.help) {
        if (a.help)
            print_help(stdout);
        exec_args_clear(&a);
        return rc;
    }
    if (!a.check) {
        exec_args_clear(&a);
        return rf_cli_usage_error("exec", "running the command in the sandbox is not wired in yet; use --check");
    }
    rf_guard_options o;
    char *ws = NULL;
    rf_error *err = NULL;
    rf_guard *g = NULL;
    rf_guard_verdict v = { 0 };
    rc = exec_guard_options(&a, &o, &ws);
    if (rc == 0 && !(g = rf_guard_new(&o, &err)))
        rc = rf_cli_report(err);
    if (rc == 0 && rf_guard_check(g, a.command, &v, &err) < 0)
        rc = rf_cli_report(err);
    if (rc == 0) {
        print_verdict(&v);
        rc = v.result == RF_GUARD_ALLOWED ? 0 : RF_EXIT_CANNOT_EXEC;
    }
    rf_guard_verdict_clear(&v);
    rf_guard_free(g);
    rf_error_free(err);
    free(ws);
    exec_args_clear(&a);
    fflush(stdout);
    return rc;
}
