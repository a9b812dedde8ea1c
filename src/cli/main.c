/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli.h"
#include "options.h"
#include "util/printable.h"

#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct subcommand {
    const char *name;
    rf_cli_fn fn;
    const char *summary;
} subcommands[] = {
    { "run", rf_cli_run, "run a command in the sandbox" },
    { "plan", rf_cli_plan, "print the sandbox plan as JSON, run nothing" },
    { "config", rf_cli_config, "print the merged policy (--explain: where each value came from)" },
    { "doctor", rf_cli_doctor, "what this host supports, per backend" },
    { "fs", rf_cli_fs, "workspace-confined file tools: read, write, append, edit, list" },
    { "exec", rf_cli_exec, "check a shell command with the exec guard (--check)" },
    { "mcp", rf_cli_mcp, "serve the exec and file tools over MCP on stdio" },
    { "export", rf_cli_export, "write the plan for another runtime: an OCI bundle (crun), Kubernetes objects" },
    { "instance", rf_cli_instance, "named homes for agents, chats and servers: create, list, show, rm, gc" },
    { "learn", rf_cli_learn, "run a command observed, then suggest the rules it needed (--write FILE)" },
    { "profile", rf_cli_profile, "the named policy layers for --profile: list, show NAME" },
    { "changes", rf_cli_changes, "review an overlay session's changes: list, show, diff, apply, discard" },
    { "serve", rf_cli_serve, "keep sandboxes ready on a unix socket for run --via (a warm pool)" },
    { "ps", rf_cli_ps, "the sandboxes running now (root: everyone's), --json" },
    { "top", rf_cli_top, "the running sandboxes, refreshed live, sorted by a column" },
    { "stop", rf_cli_stop, "end a running sandbox's whole tree: stop ID" },
    { "policy", rf_cli_policy_check, "policy check FILE --within BOUNDARY: does a policy stay within a boundary?" },
    { "audit", rf_cli_audit, "the audit trail of every sandbox: path, show, verify, export --format ocsf" },
    { "audit-daemon", rf_cli_audit_daemon, "(root) write the system audit log: every user's runs, stamped with their uid" },
};

static void print_help(FILE *out)
{
    fprintf(out,
            "Usage: ringfence COMMAND [OPTIONS] [-- PROGRAM [ARG...]]\n"
            "\n"
            "Run the processes an AI agent starts inside a Linux sandbox: the workspace\n"
            "read-write, the system read-only, nothing else of yours visible, no network,\n"
            "a clean environment, and the whole process tree gone when it ends.\n"
            "\n"
            "Commands:\n");
    int width = 0; /* the longest name's, so every summary starts in one column */
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if ((int)strlen(subcommands[i].name) > width)
            width = (int)strlen(subcommands[i].name);
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        fprintf(out, "  %-*s %s\n", width, subcommands[i].name, subcommands[i].summary);
    fprintf(out,
            "\n"
            "Run 'ringfence COMMAND --help' for a command's options, 'man ringfence' for all.\n"
            "\n"
            "Examples:\n"
            "  ringfence run -- sh                      a shell confined to this directory\n"
            "  ringfence run --timeout 60 -- make test  kill the whole tree after a minute\n"
            "  ringfence plan -- python3 x.py           show exactly what would be visible\n"
            "\n"
            "Exit status: the command's own; 128+N if it died of signal N; 124 timed out;\n"
            "125 ringfence failed; 126 blocked or not executable; 127 not found.\n");
}

/* An error may name a path a sandboxed command chose (a file of a
 * session, of the workspace): no character of it a terminal acts on is
 * sent as such (util/printable.h). Our messages hold none of their own. */
static void put_visible(const char *prefix, const char *text)
{
    char *v = rf_visible(text, strlen(text), NULL);
    fprintf(stderr, "%s%s\n", prefix, v ? v : "(out of memory)");
    free(v);
}

int rf_cli_report(const rf_error *err)
{
    put_visible("ringfence: ", rf_error_message(err));
    if (rf_error_hint(err))
        put_visible("hint: ", rf_error_hint(err));
    int code = rf_error_exit_code(err);
    return code ? code : RF_EXIT_FAILURE;
}

int rf_cli_usage_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ringfence%s%s: ", sub ? " " : "", sub ? sub : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "hint: see 'ringfence %s%s--help'\n", sub ? sub : "", sub ? " " : "");
    return RF_EXIT_FAILURE;
}

int main(int argc, char **argv)
{
    /* An ignored SIGCHLD, inherited from whoever started us, would have
     * the kernel reap our sandboxes' init before we could read its exit. */
    signal(SIGCHLD, SIG_DFL);
    if (argc < 2) {
        print_help(stderr);
        return RF_EXIT_FAILURE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_help(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--help-options-scdoc")) { /* for docs/gen-man.sh */
        /* with a subcommand: its options only, for ringfence-SUB(1) */
        rf_cli_print_options(stdout, argc > 2 ? argv[2] : NULL, true);
        return 0;
    }
    if (!strcmp(cmd, "--completion")) { /* for meson: the shell completions */
        enum { N = sizeof subcommands / sizeof subcommands[0] };
        const char *names[N], *summaries[N];
        for (size_t i = 0; i < N; i++) {
            names[i] = subcommands[i].name;
            summaries[i] = subcommands[i].summary;
        }
        return rf_cli_completion(argc > 2 ? argv[2] : NULL, names, summaries, N);
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("ringfence %s\n", rf_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (!strcmp(cmd, subcommands[i].name))
            return subcommands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ringfence: unknown command '%s'\n", cmd);
    fprintf(stderr, "hint: run 'ringfence --help' for the list of commands\n");
    return RF_EXIT_FAILURE;
}
