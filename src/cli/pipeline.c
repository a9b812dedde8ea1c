/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config → policy → plan for the subcommands that start a sandbox. The
 * command line is the last layer of the standard stack: built-in defaults,
 * /etc/ringfence, the user's file, --config files, the agent's section, the
 * workspace file, RINGFENCE_* variables, then the flags. */
#include "cli.h"
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>

static void print_warnings(char *const *warnings)
{
    for (size_t i = 0; warnings && warnings[i]; i++)
        fprintf(stderr, "ringfence: warning: %s\n", warnings[i]);
}

static int report(rf_error *err)
{
    int code = err ? rf_cli_report(err) : RF_EXIT_FAILURE;
    rf_error_free(err);
    return code;
}

rf_config *rf_cli_load_config(const rf_cli_opts *o, int *exit_code)
{
    rf_error *err = NULL;
    rf_config_sources src = {
        .config_files = (const char *const *)o->config_files,
        .agent = o->agent,
        .runner = o->runner,
        .trust_workspace_config = o->trust_workspace_config,
        .no_system_file = o->no_config,
        .no_user_file = o->no_config,
        .no_workspace_file = o->no_config || o->no_workspace_config,
        .profiles = (const char *const *)o->profiles,
    };
    if (o->config_format) {
        int f = rf_config_format_parse(o->config_format);
        if (f < 0) {
            *exit_code = rf_cli_usage_error(NULL, "--config-format %s: expected ringfence, picoclaw, mitto or srt",
                                            o->config_format);
            return NULL;
        }
        src.format = (rf_config_format)f;
    }
    char *flags = json_dumps(o->flags, JSON_COMPACT);
    src.flags_json = flags;
    rf_config *cfg = rf_config_new();
    if (!cfg || !flags || rf_config_load_standard(cfg, &src, &err) < 0) {
        *exit_code = report(err);
        rf_config_free(cfg);
        cfg = NULL;
    }
    free(flags);
    return cfg;
}

rf_policy *rf_cli_policy(const rf_cli_opts *o, int *exit_code)
{
    rf_config *cfg = rf_cli_load_config(o, exit_code);
    if (!cfg)
        return NULL;
    rf_error *err = NULL;
    rf_policy *policy = rf_policy_resolve(cfg, NULL, &err);
    rf_config_free(cfg);
    if (!policy)
        *exit_code = report(err);
    return policy;
}

rf_plan *rf_cli_plan_for(const rf_cli_opts *o, rf_policy *policy, char **argv, int *exit_code)
{
    rf_error *err = NULL;
    rf_plan *plan = rf_plan_build(policy, argv, &err);
    if (!plan) {
        *exit_code = report(err);
        return NULL;
    }
    print_warnings(rf_plan_warnings(plan));
    rf_plan_set_network_log_fd(plan, STDERR_FILENO); /* blocked connections, as they happen */
    if (rf_cli_debug(o)) {
        char *json = rf_plan_to_json(plan);
        fprintf(stderr, "ringfence: debug: linux isolation mount plan\n%s\n", json ? json : "");
        free(json);
    }
    return plan;
}

/* The instance remembers the one profile that is about the instance
 * itself (chat's limits: rf_policy_use_instance applies them to its later
 * runs), as it did before profiles were files. */
const char *rf_cli_instance_profile(const rf_cli_opts *o)
{
    for (size_t i = 0; o->profiles && o->profiles[i]; i++)
        if (!strcmp(o->profiles[i], "chat"))
            return "chat";
    return NULL;
}

static rf_instance *create_instance(const rf_cli_opts *o, const rf_policy *policy, const char *root,
                                    const char *name, bool ephemeral, rf_error **err)
{
    rf_instance_options io;
    rf_instance_options_init(&io);
    io.ephemeral = ephemeral;
    io.profile = rf_cli_instance_profile(o);
    io.own_identity = o->own_identity;
    io.network_of = policy;
    io.home = getenv("HOME");
    return rf_instance_create(root, name, &io, err);
}

int rf_cli_attach_instance(rf_cli_opts *o, rf_policy *policy, bool create, int *exit_code)
{
    bool ephemeral = false;
    const char *name = rf_policy_instance(policy, &ephemeral);
    if (!name && !ephemeral)
        return 0;
    char fresh[64];
    if (!name) { /* --ephemeral alone: an instance of this run only */
        snprintf(fresh, sizeof fresh, "ephemeral-%ld-%ld", (long)getpid(), (long)time(NULL));
        name = fresh;
    }
    const char *root = rf_policy_instance_root(policy);
    rf_error *err = NULL;
    rf_instance *in = rf_instance_open(root, name, &err);
    if (!in && create && rf_error_errno(err) == ENOENT) {
        rf_error_free(err);
        err = NULL;
        in = create_instance(o, policy, root, name, ephemeral, &err);
    }
    if (!in && !create && rf_error_errno(err) == ENOENT) {
        /* plan: show where it would be, create nothing. */
        fprintf(stderr, "ringfence: note: instance %s does not exist yet; `run` would create it\n", name);
        rf_error_free(err);
        return 0;
    }
    if (!in || rf_policy_use_instance(policy, in, &err) < 0) {
        rf_instance_close(in);
        *exit_code = report(err);
        return -1;
    }
    o->instance = in;
    return 0;
}

int rf_cli_prepare(const char *sub, int argc, char **argv, void (*help)(void), rf_cli_opts *o, rf_plan **plan,
                   int *exit_code)
{
    *plan = NULL;
    *exit_code = RF_EXIT_FAILURE;
    int idx = rf_cli_parse_sandbox_options(sub, argc, argv, o);
    if (idx < 0)
        return 0;
    if (o->help) {
        help();
        *exit_code = 0;
        return 0;
    }
    if (idx >= argc) {
        *exit_code = rf_cli_usage_error(sub, "no command given; put it after --, e.g. ringfence %s -- sh", sub);
        return 0;
    }
    rf_policy *policy = rf_cli_policy(o, exit_code);
    if (!policy)
        return 0;
    if (rf_cli_attach_instance(o, policy, !strcmp(sub, "run") || !strcmp(sub, "learn"), exit_code) < 0) {
        rf_policy_free(policy);
        return 0;
    }
    /* The plan holds copies of everything it needs from the policy. */
    *plan = rf_cli_plan_for(o, policy, argv + idx, exit_code);
    rf_policy_free(policy);
    return *plan != NULL;
}
