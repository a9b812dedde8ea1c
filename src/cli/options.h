/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox options shared by run, plan, exec and mcp. One table drives
 * getopt_long, --help and the man page's option list; every option becomes
 * a key of the "flags" config layer, so a flag and a config file fill the
 * same policy field through the same validation. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct rf_cli_opts {
    json_t *flags;         /* the flags layer, ringfence's config schema */
    char **config_files;   /* --config FILE... */
    const char *agent;     /* --agent NAME */
    const char *config_format;
    const char *runner;
    bool trust_workspace_config;
    bool no_config;        /* --no-config: built-in defaults and flags only */
    bool no_workspace_config; /* audit, ps, stop: the instance root only, never from a workspace file */
    const char *log_level; /* --log-level; also RINGFENCE_LOG_LEVEL */
    const char *status_json_file;
    int status_fd;
    bool explain;          /* config --explain */
    bool check;            /* exec --check */
    size_t max_output;     /* mcp --max-output (0: the library's default) */
    unsigned max_calls;    /* mcp --max-calls (0: the library's default) */
    const char *format;    /* plan --format: "json" (NULL) or "sbpl" */
    char **profiles;       /* --profile NAME..., in order (later wins) */
    const char *target;    /* instance create --target */
    json_t *instance_files;/* {"credentials": [...], "copies": [...]} */
    bool force, json;      /* instance rm --force, list --json */
    bool own_identity;     /* --own-identity of a new instance */
    const char *socket;    /* serve --socket */
    size_t pool_size;      /* serve --pool-size (0: default) */
    const char *via;       /* run --via */
    enum { RF_CLI_PTY_AUTO, RF_CLI_PTY_ON, RF_CLI_PTY_OFF } pty; /* run --pty, --no-pty */
    bool no_pool;          /* mcp --no-pool */
    bool explain_denials;  /* run --explain-denials */
    bool learn;            /* ringfence learn: observe, then report */
    const char *write_file;/* learn --write FILE */
    char *const *command;  /* learn: the command, for the written file's header */
    struct rf_instance *instance; /* the instance run in (closed by rf_cli_opts_clear) */
    bool help;
} rf_cli_opts;

/* Parse the shared options from argv (stops at "--" or the first
 * non-option). Returns the index of the command's argv[0] in argv, or -1
 * after printing a usage error (exit 125). `extra` options of a subcommand
 * are looked up by the caller through the same table (see cli_option). */
int rf_cli_parse_sandbox_options(const char *sub, int argc, char **argv, rf_cli_opts *o);
void rf_cli_opts_clear(rf_cli_opts *o);
/* Every option of the table, in order (for the shell completions). */
void rf_cli_each_option(void (*fn)(void *ud, const char *name, bool has_arg, const char *only, const char *help),
                        void *ud);
/* root[key] as an object, created empty if missing (borrowed). */
json_t *rf_cli_json_obj_at(json_t *root, const char *key);

/* Print the options section of --help (or the man page fragment with
 * `man` set, in scdoc syntax). */
void rf_cli_print_options(FILE *out, const char *sub, bool man);

/* Build config → policy → plan from the parsed options. Prints errors and
 * warnings; returns NULL with *exit_code set on failure. */
#include "ringfence.h"
rf_config *rf_cli_load_config(const rf_cli_opts *o, int *exit_code);
rf_policy *rf_cli_policy(const rf_cli_opts *o, int *exit_code);
rf_plan *rf_cli_plan_for(const rf_cli_opts *o, rf_policy *policy, char **argv, int *exit_code);
/* The policy names an instance (--instance, --ephemeral): open it, or
 * create it when `create`, and make the policy use it (o->instance).
 * Returns 0, or -1 with *exit_code set after printing the error. */
int rf_cli_attach_instance(rf_cli_opts *o, rf_policy *policy, bool create, int *exit_code);
bool rf_cli_debug(const rf_cli_opts *o);
/* "chat" when --profile chat was given: the profile a new instance keeps. */
const char *rf_cli_instance_profile(const rf_cli_opts *o);

/* The common start of run and plan: parse the sandbox options, answer
 * --help with help(), require a command, and build policy and plan.
 * Returns 1 with *plan set (caller frees plan and opts), or 0 with
 * *exit_code set when there is nothing more to do (help shown, or an error
 * already printed). */
int rf_cli_prepare(const char *sub, int argc, char **argv, void (*help)(void), rf_cli_opts *o, rf_plan **plan,
                   int *exit_code);
