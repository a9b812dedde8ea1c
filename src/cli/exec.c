/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence exec: check a shell command with the exec guard (seed 001's
 * deny patterns and workspace paths), then run it with /bin/sh -c in the
 * sandbox of the current policy, in the workspace, with a timeout (60 s
 * unless --timeout or the config says otherwise). The guard is a seatbelt;
 * the sandbox is the wall. */
#include "cli.h"
#include "audit/run.h"
#include "guard/guard.h"
#include "plan/build.h"
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("Usage: ringfence exec [OPTIONS] [--check] -- 'SHELL COMMAND'\n"
           "\n"
           "Run a shell command the way an agent's exec tool would: first the guard, then\n"
           "/bin/sh -c in the sandbox, in the workspace, killed with its whole process tree\n"
           "after the timeout (tools.exec.timeout, 60 s, unless --timeout says otherwise).\n"
           "The guard blocks\n"
           "  - deny patterns: rm -rf, sudo, curl | sh, git push, $(...) and the rest of\n"
           "    the default list (docs/guard.md), matched against the command as written\n"
           "    and against each simple command with quotes, escapes and wrappers\n"
           "    (env, nice, timeout, xargs, sh -c) taken away, so r''m -rf is rm -rf;\n"
           "  - workspace paths: an absolute path, ~ or ../ that leads outside the\n"
           "    workspace (/dev/null and the std streams are fine).\n"
           "It is a seatbelt, not the wall: the sandbox confines whatever gets past it.\n"
           "A command of plain words (git status, make -j4 test) is executed without the\n"
           "shell, one exec less, with the same meaning; anything the shell would\n"
           "interpret, a builtin, or a program the sandbox would not find as the shell\n"
           "does goes to /bin/sh -c.\n"
           "\n"
           "Options (and every option of 'ringfence run'):\n");
    rf_cli_print_options(stdout, "exec", false);
    printf("\n"
           "With --check the verdict goes to stdout: 'allowed', or 'blocked: <message>'\n"
           "followed by 'pattern: <the deny pattern>' and 'detail: <what it matched>'.\n"
           "\n"
           "Examples:\n"
           "  ringfence exec -- 'make -j4 test'\n"
           "  ringfence exec --check -- 'r\"m\" -fr build'             blocked: pattern\n"
           "  ringfence exec --check -- 'cat ../../etc/passwd'       blocked: path\n"
           "  ringfence exec --allow '^git push origin main$' -- 'git push origin main'\n"
           "\n"
           "Exit status: the command's, as for run; 126 blocked by the guard; 124 timed\n"
           "out; 125 bad input (a bad pattern, a command too long or too nested to check).\n");
}

static char *join(int argc, char **argv, int from)
{
    size_t len = 1;
    for (int i = from; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = calloc(1, len), *p = s;
    for (int i = from; s && i < argc; i++)
        p = stpcpy(i > from ? stpcpy(p, " ") : p, argv[i]);
    return s;
}

static void print_verdict(FILE *out, const char *prefix, const rf_guard_verdict *v)
{
    if (v->result == RF_GUARD_ALLOWED) {
        fprintf(out, "allowed\n");
        return;
    }
    fprintf(out, "%sblocked: %s\n", prefix, v->message);
    if (v->pattern)
        fprintf(out, "%spattern: %s\n", prefix, v->pattern);
    if (v->detail)
        fprintf(out, "%sdetail: %s\n", prefix, v->detail);
}

/* The guard's verdict for command, checked where it will run. Returns 0
 * (allowed), RF_EXIT_CANNOT_EXEC (blocked, reported) or 125. */
static int guard(const rf_policy *policy, const char *command, bool check_only)
{
    rf_error *err = NULL;
    rf_guard_verdict v = { 0 };
    rf_guard *g = rf_guard_new_for_one_command(policy, &err);
    int rc = 0;
    if (!g || rf_guard_check(g, command, &v, &err) < 0)
        rc = rf_cli_report(err);
    else if (check_only)
        print_verdict(stdout, "", &v);
    else if (v.result != RF_GUARD_ALLOWED) {
        print_verdict(stderr, "ringfence: ", &v);
        rf_audit_guard_refused(policy, command, &v);
    }
    if (rc == 0 && v.result != RF_GUARD_ALLOWED)
        rc = RF_EXIT_CANNOT_EXEC;
    rf_guard_verdict_clear(&v);
    rf_guard_free(g);
    rf_error_free(err);
    return rc;
}

int rf_cli_exec(int argc, char **argv)
{
    rf_cli_opts o;
    int idx = rf_cli_parse_sandbox_options("exec", argc, argv, &o);
    int code = RF_EXIT_FAILURE;
    char *command = NULL;
    rf_policy *policy = NULL;
    if (idx < 0)
        goto out;
    if (o.help) {
        help();
        code = 0;
        goto out;
    }
    if (idx >= argc) {
        code = rf_cli_usage_error("exec", "no command given; put it after --, e.g. ringfence exec -- 'make test'");
        goto out;
    }
    command = join(argc, argv, idx);
    if (!command || !(policy = rf_cli_policy(&o, &code)))
        goto out;
    rf_error *terr = NULL;
    if (rf_policy_check_tool(policy, "exec", &terr) < 0) { /* tools.disabled: refused, even --check */
        code = rf_cli_report(terr);
        rf_error_free(terr);
        goto out;
    }
    code = guard(policy, command, o.check);
    if (code != 0 || o.check)
        goto out;
    if (rf_cli_attach_instance(&o, policy, true, &code) < 0)
        goto out;
    rf_error *err = NULL;
    rf_plan *plan = rf_plan_build_command(policy, command, 0, &err);
    if (!plan) {
        code = rf_cli_report(err);
        rf_error_free(err);
        goto out;
    }
    o.pty = RF_CLI_PTY_OFF; /* an agent's tool call: its stdio as it is (terminals: ringfence run) */
    code = rf_cli_execute(&o, plan);
    rf_plan_free(plan);
out:
    rf_policy_free(policy);
    free(command);
    rf_cli_opts_clear(&o);
    fflush(stdout);
    return code;
}
