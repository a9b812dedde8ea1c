/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence instance create|list|show|rm|gc: named homes for agents,
 * chats and servers (docs/instances.md). Running in one is `run
 * --instance NAME` (and exec, mcp). */
#include "cli.h"
#include "options.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("Usage: ringfence instance create NAME [--target DIR] [--credential SRC[:DEST]]... [--copy SRC[:DEST]]...\n"
           "                                  [--ephemeral] [--profile chat] [--own-identity]\n"
           "                                  [--allow-domain NAME]... [--publish PORTS]... (network flags of run)\n"
           "       ringfence instance list [--json]\n"
           "       ringfence instance show NAME [--json]\n"
           "       ringfence instance rm NAME [--force]\n"
           "       ringfence instance gc\n"
           "\n"
           "An instance is a home of its own for an agent, a chat or a server: config, data,\n"
           "state, cache, runtime, home and tmp directories (0700) below the instance root\n"
           "($RINGFENCE_HOME or ~/.ringfence, in instances/NAME), which become the command's\n"
           "XDG_*, HOME and TMPDIR with `ringfence run --instance NAME`. For a root caller each\n"
           "instance also has its own uid and gid, so two instances' files stay apart even\n"
           "outside the sandbox; an unprivileged caller's, with --own-identity, from its\n"
           "/etc/subuid range. Credentials are copied (0600), never linked. Network flags given\n"
           "at creation are stored: later runs get them and may only narrow them.\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "instance", false);
    printf("\n"
           "Examples:\n"
           "  ringfence instance create opencode --credential ~/.local/share/opencode/auth.json:data/opencode/auth.json\n"
           "  ringfence run --instance opencode --allow-domain api.anthropic.com -- opencode serve\n"
           "  ringfence run --instance chat-42 --profile chat -- ./bot\n"
           "  ringfence instance rm chat-42 --force\n");
}

static const char **strings_of(const json_t *arr)
{
    size_t n = json_array_size(arr);
    const char **v = calloc(n + 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = json_string_value(json_array_get(arr, i));
    return v;
}

static int create(rf_cli_opts *o, const rf_policy *policy, const char *root, const char *name)
{
    rf_instance_options io;
    rf_instance_options_init(&io);
    const char **creds = strings_of(json_object_get(o->instance_files, "credentials"));
    const char **copies = strings_of(json_object_get(o->instance_files, "copies"));
    io.target = o->target;
    io.credentials = creds;
    io.copies = copies;
    io.profile = rf_cli_instance_profile(o);
    io.own_identity = o->own_identity;
    io.network_of = policy;
    io.home = getenv("HOME");
    io.ephemeral = json_is_true(json_object_get(o->flags, "delete_on_exit"));
    rf_error *err = NULL;
    rf_instance *in = rf_instance_create(root, name, &io, &err);
    free(creds);
    free(copies);
    if (!in) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    char *json = rf_instance_to_json(in);
    puts(json ? json : "{}");
    free(json);
    rf_instance_close(in);
    return 0;
}

static void print_list(const char *json)
{
    json_t *list = json_loads(json, 0, NULL);
    size_t i;
    json_t *it;
    printf("%-24s %-8s %-11s %s\n", "NAME", "RUNNING", "UID", "PATH");
    json_array_foreach(list, i, it) {
        const json_t *id = json_object_get(it, "identity");
        printf("%-24s %-8lld %-11lld %s%s\n", json_string_value(json_object_get(it, "name")),
               (long long)json_integer_value(json_object_get(it, "running")),
               (long long)json_integer_value(json_object_get(id, "uid")),
               json_string_value(json_object_get(it, "path")),
               json_is_true(json_object_get(it, "ephemeral")) ? " (ephemeral)" : "");
    }
    json_decref(list);
}

static void print_strings(const char *label, const json_t *v)
{
    size_t i;
    json_t *it;
    if (!json_array_size(v))
        return;
    printf("  %-16s", label);
    json_array_foreach(v, i, it) printf("%s%s", i ? ", " : "", json_string_value(it));
    printf("\n");
}

/* instance show, for people: the same facts as --json. */
static void print_show(const char *json)
{
    json_t *o = json_loads(json, 0, NULL);
    const json_t *id = json_object_get(o, "identity"), *net = json_object_get(o, "network");
    const char *profile = json_string_value(json_object_get(o, "profile"));
    printf("instance   %s%s\n", json_string_value(json_object_get(o, "name")),
           json_is_true(json_object_get(o, "ephemeral")) ? " (ephemeral)" : "");
    printf("path       %s\n", json_string_value(json_object_get(o, "path")));
    printf("identity   uid %lld, gid %lld: %s\n", (long long)json_integer_value(json_object_get(id, "uid")),
           (long long)json_integer_value(json_object_get(id, "gid")),
           json_string_value(json_object_get(id, "model_text")));
    if (json_string_value(json_object_get(id, "how")))
        printf("           %s\n", json_string_value(json_object_get(id, "how")));
    printf("profile    %s\n", profile ? profile : "none (the policy's limits)");
    if (!net || json_is_null(net)) {
        printf("network    none stored (each run's own settings)\n");
    } else {
        printf("network    %s (later runs may only narrow it)\n", json_string_value(json_object_get(net, "mode")));
        print_strings("allow_domains", json_object_get(net, "allow_domains"));
        print_strings("deny_domains", json_object_get(net, "deny_domains"));
        print_strings("allow_ports", json_object_get(net, "allow_ports"));
        print_strings("publish", json_object_get(net, "publish"));
    }
    printf("running    %lld sandbox(es)\n", (long long)json_integer_value(json_object_get(o, "running")));
    json_decref(o);
}

static int verb(rf_cli_opts *o, const rf_policy *policy, const char *what, const char *name)
{
    const char *root = rf_policy_instance_root(policy);
    rf_error *err = NULL;
    char *out = NULL;
    int rc = 0;
    if (!strcmp(what, "create"))
        return create(o, policy, root, name);
    if (!strcmp(what, "list"))
        rc = (out = rf_instance_list_json(root, &err)) ? 0 : -1;
    else if (!strcmp(what, "show"))
        rc = (out = rf_instance_show_json(root, name, &err)) ? 0 : -1;
    else if (!strcmp(what, "rm"))
        rc = rf_instance_remove(root, name, o->force, &err);
    else
        rc = rf_instance_gc(root, &err);
    if (rc < 0) {
        int code = rf_cli_report(err);
        rf_error_free(err);
        return code;
    }
    if (out && !strcmp(what, "list") && !o->json)
        print_list(out);
    else if (out && !strcmp(what, "show") && !o->json)
        print_show(out);
    else if (out)
        puts(out);
    free(out);
    return 0;
}

int rf_cli_instance(int argc, char **argv)
{
    static const char *const verbs[] = { "create", "list", "show", "rm", "gc", NULL };
    static const bool needs_name[] = { true, false, true, true, false };
    rf_cli_opts o;
    const char *what = argc > 1 ? argv[1] : NULL;
    int idx = rf_cli_parse_sandbox_options("instance", argc - (what ? 1 : 0), argv + (what ? 1 : 0), &o);
    int code = RF_EXIT_FAILURE;
    if (idx < 0)
        goto out;
    if (o.help || !what || !strcmp(what, "--help") || !strcmp(what, "-h")) {
        help();
        code = o.help || what ? 0 : RF_EXIT_FAILURE;
        goto out;
    }
    size_t v = 0;
    while (verbs[v] && strcmp(verbs[v], what))
        v++;
    if (!verbs[v]) {
        code = rf_cli_usage_error("instance", "unknown action '%s': expected create, list, show, rm or gc", what);
        goto out;
    }
    int rest = argc - 1 - idx;
    const char *name = rest > 0 ? argv[1 + idx] : NULL;
    if (needs_name[v] != (rest == 1) || rest > 1) {
        code = rf_cli_usage_error("instance", "%s %s", what, needs_name[v] ? "needs one NAME" : "takes no NAME");
        goto out;
    }
    /* Only the instance root is needed: any directory will do as workspace. */
    json_object_set_new(o.flags, "allow_sensitive_workspace", json_true());
    rf_policy *policy = rf_cli_policy(&o, &code);
    if (policy)
        code = verb(&o, policy, what, name);
    rf_policy_free(policy);
out:
    rf_cli_opts_clear(&o);
    return code;
}
