/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence mcp: serve the agent tools (exec, read_file, write_file,
 * edit_file, append_file, list_dir) over the Model Context Protocol on
 * stdin/stdout. It takes the sandbox options of `run`, which shape the
 * sandbox of every exec; stdout carries protocol messages only, logs go to
 * stderr. */
#include "cli.h"
#include "options.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
           "Options:\n");
    rf_cli_print_options(stdout, "mcp", false);
    printf("\n"
           "Register it with an MCP client (e.g. in its mcpServers config):\n"
           "  { \"mcpServers\": { \"ringfence\": {\n"
           "      \"command\": \"ringfence\", \"args\": [\"mcp\", \"--workspace\", \"/path/to/project\"] } } }\n"
           "\n"
           "Protocol versions: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07.\n"
           "Exit status: 0 when the client closes stdin (calls in flight get 5 s to finish\n"
           "and be answered; what still runs then is killed); 125 on a bad option or policy.\n");
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

static int serve(const rf_cli_opts *o, const rf_policy *policy)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigpipe;
    sigaction(SIGPIPE, &sa, NULL);
    rf_mcp_options opts = {
        .max_output_bytes = o->max_output,
        .max_concurrent_calls = o->max_calls,
        .exec_pool_size = o->no_pool ? 0 : 2, /* two ready: most agents run one command at a time */
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
    rf_cli_opts o;
    int code = RF_EXIT_FAILURE;
    int idx = rf_cli_parse_sandbox_options("mcp", argc, argv, &o);
    if (idx < 0)
        goto out;
    if (o.help) {
        help();
        code = 0;
        goto out;
    }
    if (idx < argc) {
        code = rf_cli_usage_error("mcp", "unexpected argument '%s': mcp takes no command", argv[idx]);
        goto out;
    }
    rf_policy *policy = rf_cli_policy(&o, &code);
    rf_error *err = NULL;
    /* --changes overlay: one session for the whole connection (named on
     * stderr: the user applies or discards it). */
    if (policy && rf_policy_start_session(policy, &err) < 0) {
        code = rf_cli_report(err);
        rf_error_free(err);
    } else if (policy && rf_cli_attach_instance(&o, policy, true, &code) == 0) {
        if (rf_policy_session(policy))
            fprintf(stderr, "ringfence mcp: changes go to session %s ('ringfence changes diff|apply|discard %s')\n",
                    rf_policy_session(policy), rf_policy_session(policy));
        code = serve(&o, policy);
    }
    rf_policy_free(policy);
out:
    rf_cli_opts_clear(&o);
    return code;
}
