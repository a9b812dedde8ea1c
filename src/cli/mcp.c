/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence mcp: serve the agent tools (exec, read_file, write_file,
 * edit_file, append_file, list_dir) over the Model Context Protocol on
 * stdin/stdout. It takes the sandbox options of `run`, which shape the
 * sandbox of every exec; stdout carries protocol messages only, logs go to
 * stderr. */
#include "cli.h"
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The options only mcp has; the shared ones are parsed by options.c. */
typedef struct mcp_args {
    size_t max_output;
    unsigned max_calls;
} mcp_args;

static void help(void)
{
    printf("Usage: ringfence mcp [OPTIONS]\n"
           "\n"
           "Serve ringfence's agent tools over the Model Context Protocol (JSON-RPC 2.0,\n"
           "one message per line on stdin/stdout), for any MCP client:\n"
           "  exec         run /bin/sh -c COMMAND in a fresh sandbox (guard-checked first)\n"
           "  read_file    write_file  edit_file  append_file  list_dir\n"
           "               file tools confined to the workspace\n"
           "Every exec gets its own sandbox built from the options below, as with\n"
           "'ringfence run'; its working directory is the workspace. --timeout sets the\n"
           "default and the maximum time of one exec (otherwise 60 s, or the config's\n"
           "tools.exec.timeout). Tools listed in the config's tools.disabled are not offered.\n"
           "\n"
           "Options of mcp:\n"
           "  --max-output BYTES           keep at most BYTES of stdout and of stderr per exec\n"
           "                               (default 65536; the rest is counted and marked)\n"
           "  --max-calls N                tool calls running at once (default 8)\n"
           "\n"
           "Sandbox options:\n");
    rf_cli_print_options(stdout, false);
    printf("\n"
           "Register it with an MCP client (e.g. in its mcpServers config):\n"
           "  { \"mcpServers\": { \"ringfence\": {\n"
           "      \"command\": \"ringfence\", \"args\": [\"mcp\", \"--workspace\", \"/path/to/project\"] } } }\n"
           "\n"
           "Protocol versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07.\n"
           "Exit status: 0 when the client closes stdin; 125 on a bad option or policy.\n");
}

static int parse_size(const char *opt, const char *arg, size_t min, size_t max, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
        return rf_cli_usage_error("mcp", "--%s %s: expected a whole number from %zu to %zu", opt, arg, min, max);
    *out = (size_t)v;
    return 0;
}

/* Take mcp's own options out of argv (in place) so the shared parser sees
 * only its own. Both "--opt VALUE" and "--opt=VALUE" are accepted. */
static int take_mcp_options(int *argc, char **argv, mcp_args *a)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--")) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        const char *name = NULL;
        if (!strncmp(s, "--max-output", 12) && (s[12] == '\0' || s[12] == '='))
            name = "max-output";
        else if (!strncmp(s, "--max-calls", 11) && (s[11] == '\0' || s[11] == '='))
            name = "max-calls";
        if (!name) {
            argv[out++] = argv[i];
            continue;
        }
        const char *eq = strchr(s, '=');
        const char *val = eq ? eq + 1 : (i + 1 < *argc ? argv[++i] : NULL);
        if (!val)
            return rf_cli_usage_error("mcp", "option '--%s' needs a value", name), -1;
        size_t v;
        if (!strcmp(name, "max-output")) {
            if (parse_size(name, val, 1, (size_t)64 << 20, &v) != 0)
                return -1;
            a->max_output = v;
        } else {
            if (parse_size(name, val, 1, 256, &v) != 0)
                return -1;
            a->max_calls = (unsigned)v;
        }
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

static void log_line(void *userdata, int level, const char *message)
{
    (void)userdata;
    static const char *const names[] = { "error", "warning", "info", "debug" };
    fprintf(stderr, "ringfence mcp: %s: %s\n", names[level], message);
}

static int log_level(const rf_cli_opts *o)
{
    if (!o->log_level || !strcmp(o->log_level, "warning"))
        return RF_MCP_LOG_WARNING;
    if (!strcmp(o->log_level, "debug"))
        return RF_MCP_LOG_DEBUG;
    if (!strcmp(o->log_level, "info"))
        return RF_MCP_LOG_INFO;
    return RF_MCP_LOG_ERROR;
}

/* A handler, not SIG_IGN: an ignored SIGPIPE would be inherited by every
 * sandboxed command, and `yes | head` would then spin instead of ending. */
static void on_sigpipe(int sig)
{
    (void)sig;
}

static int serve(const rf_cli_opts *o, const mcp_args *a, const rf_policy *policy)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigpipe;
    sigaction(SIGPIPE, &sa, NULL);
    rf_mcp_options opts = {
        .max_output_bytes = a->max_output,
        .max_concurrent_calls = a->max_calls,
        .log = log_line,
        .log_level = log_level(o),
    };
    rf_error *err = NULL;
    rf_mcp_server *server = rf_mcp_server_new(policy, &opts, &err);
    int code = 0;
    if (!server || rf_mcp_server_serve(server, STDIN_FILENO, STDOUT_FILENO, &err) < 0) {
        code = rf_cli_report(err);
        rf_error_free(err);
    }
    rf_mcp_server_free(server);
    return code;
}

int rf_cli_mcp(int argc, char **argv)
{
    mcp_args a = { 0 };
    rf_cli_opts o;
    memset(&o, 0, sizeof o);
    char **args = calloc((size_t)argc + 1, sizeof(char *));
    int code = RF_EXIT_FAILURE;
    if (!args)
        return code;
    memcpy(args, argv, (size_t)argc * sizeof(char *));
    int n = argc;
    if (take_mcp_options(&n, args, &a) < 0)
        goto out;
    int idx = rf_cli_parse_sandbox_options("mcp", n, args, &o);
    if (idx < 0)
        goto out;
    if (o.help) {
        help();
        code = 0;
        goto out;
    }
    if (idx < n) {
        code = rf_cli_usage_error("mcp", "unexpected argument '%s': mcp takes no command", args[idx]);
        goto out;
    }
    rf_policy *policy = rf_cli_policy(&o, &code);
    if (policy) {
        code = serve(&o, &a, policy);
        rf_policy_free(policy);
    }
out:
    rf_cli_opts_clear(&o);
    free(args);
    return code;
}
