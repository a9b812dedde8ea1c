/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence serve: keep sandboxes of one policy ready on a unix socket;
 * ringfence run --via: run a command in one of them. See docs/pool.md. */
#include "cli.h"
#include "options.h"

#include "config/config.h"
#include "limits/limits.h"
#include "util/strv.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile int stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static void help(void)
{
    printf("Usage: ringfence serve --socket PATH [--pool-size N] [RUN OPTIONS]\n"
           "\n"
           "Keep N sandboxes of one policy built and waiting (namespaces, mounts, Landlock,\n"
           "seccomp, limits: everything but the command), and run each command sent with\n"
           "`ringfence run --via PATH -- COMMAND` in one of them: its argv, working directory\n"
           "and stdio (a terminal on its stdin, or --pty: a pty made in the sandbox, relayed by\n"
           "the client). Each sandbox runs exactly one command and is then destroyed; a new one\n"
           "is built in the background. The socket is 0600 and only your uid may use it. A\n"
           "request whose options or configuration differ from the server's is refused; an\n"
           "edited configuration file rebuilds the pool. Stop with SIGINT or SIGTERM; it\n"
           "stops by itself once its socket is removed or replaced (no client could reach it).\n"
           "\n"
           "Options:\n");
    rf_cli_print_options(stdout, "serve", false);
    printf("\n"
           "Example:\n"
           "  ringfence serve --socket /run/user/$UID/rf.sock --pool-size 4 &\n"
           "  ringfence run --via /run/user/$UID/rf.sock -- git status\n");
}

/* What can change the policy: each file the standard stack reads (the
 * system's, the user's and the workspace's configuration, the user's
 * "always" answers, each --config and --profile). Stat'ed, not read: the
 * policy is resolved again only when one of them changed. */
typedef struct watch {
    rf_cli_opts *o;
    char **paths;
    struct stat *seen; /* as last stat'ed (st_mtim and st_size compared); st_size -1: missing */
    char *key;
} watch;

static void add_path(watch *w, const char *dir, const char *name)
{
    char *p = NULL;
    if (dir && asprintf(&p, "%s%s", dir, name) >= 0)
        (void)rf_strv_push_take(&w->paths, p);
}

static bool changed(watch *w)
{
    bool any = false;
    for (size_t i = 0; w->seen && w->paths[i]; i++) {
        struct stat st;
        if (stat(w->paths[i], &st) < 0)
            st = (struct stat){ .st_size = -1 };
        struct stat *was = &w->seen[i];
        if (st.st_mtim.tv_sec != was->st_mtim.tv_sec || st.st_mtim.tv_nsec != was->st_mtim.tv_nsec ||
            st.st_size != was->st_size)
            any = true;
        *was = st;
    }
    return any;
}

static int reload(void *ud, char **new_key, rf_policy **new_policy)
{
    watch *w = ud;
    if (!changed(w))
        return 0;
    int code;
    rf_policy *p = rf_cli_policy(w->o, &code);
    char *key = p ? rf_policy_key(p) : NULL;
    if (!key || !strcmp(key, w->key)) {
        free(key);
        rf_policy_free(p);
        return 0;
    }
    fprintf(stderr, "ringfence: serve: the configuration changed; rebuilding the pool\n");
    free(w->key);
    w->key = strdup(key);
    *new_key = key;
    *new_policy = p;
    return 1;
}

static void watch_files(watch *w, rf_cli_opts *o, const rf_policy *policy)
{
    static const char *const exts[] = { "json", "yaml", "yml" };
    char *user = rf_config_default_user_dir(NULL);
    char *json = rf_policy_to_json(policy);
    json_t *pj = json ? json_loads(json, 0, NULL) : NULL;
    const char *ws = json_string_value(json_object_get(pj, "workspace"));
    for (size_t i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "/etc/ringfence/config.%s", exts[i]);
        add_path(w, "", name);
        snprintf(name, sizeof name, "/config.%s", exts[i]);
        add_path(w, user, name);
        snprintf(name, sizeof name, "/answers.%s", exts[i]);
        add_path(w, user, name);
        snprintf(name, sizeof name, "/.ringfence.%s", exts[i]);
        add_path(w, ws, name);
    }
    add_path(w, ws, "/.mittorc");
    for (size_t i = 0; o->config_files && o->config_files[i]; i++)
        add_path(w, o->config_files[i], "");
    for (size_t i = 0; o->profiles && o->profiles[i]; i++) {
        char *found = rf_profile_find(o->profiles[i], NULL);
        if (found)
            (void)rf_strv_push_take(&w->paths, found);
    }
    json_decref(pj);
    free(json);
    free(user);
    w->seen = calloc(rf_strv_len(w->paths) + 1, sizeof *w->seen);
    changed(w); /* the starting point */
}

int rf_cli_serve(int argc, char **argv)
{
    rf_cli_opts o;
    int code = RF_EXIT_FAILURE;
    int idx = rf_cli_parse_sandbox_options("serve", argc, argv, &o);
    watch w = { .o = &o };
    rf_policy *policy = NULL;
    if (idx < 0)
        goto out;
    if (o.help) {
        help();
        code = 0;
        goto out;
    }
    if (!o.socket || idx < argc) {
        code = rf_cli_usage_error("serve", "%s", !o.socket ? "--socket PATH is required" : "serve takes no command");
        goto out;
    }
    if (!(policy = rf_cli_policy(&o, &code)))
        goto out;
    w.key = rf_policy_key(policy);
    watch_files(&w, &o, policy);
    struct sigaction sa = { .sa_handler = on_stop };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Each command in flight holds seven descriptors in the server
     * (rf_pool_serve: its connection, the three streams it sent, its sandbox's
     * pidfd, report channel and wake-up eventfd): at a user's usual soft limit
     * of 1024, requests past about 145 at once failed (socketpair: EMFILE, or
     * their streams dropped and the request read as malformed). So `serve`
     * raises its soft limit to the hard one, capped as a sandbox caps its own;
     * each sandbox sets its own before exec (rf_limits_apply_rlimits), so the
     * commands see no change. Here, not in the library: a library caller may
     * still use select(), which cannot take descriptors past 1024. */
    (void)rf_limits_raise_nofile(RF_LIMITS_NOFILE_MAX);
    size_t size = o.pool_size ? o.pool_size : 4;
    fprintf(stderr, "ringfence: serve: %zu sandbox%s ready on %s\n", size, size == 1 ? "" : "es", o.socket);
    rf_error *err = NULL;
    int rc = rf_pool_serve(o.socket, policy, w.key, size, reload, &w, &stopping, &err);
    code = rc < 0 ? RF_EXIT_FAILURE : 0;
    if (err && rc < 0)
        code = rf_cli_report(err);
    else if (err) /* 1: its socket is gone; it stopped as on SIGTERM, and says why */
        (void)rf_cli_report(err);
    rf_error_free(err);
out:
    rf_strv_free(w.paths);
    free(w.seen);
    free(w.key);
    rf_policy_free(policy);
    rf_cli_opts_clear(&o);
    return code;
}
