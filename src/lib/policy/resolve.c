/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_policy_resolve: merged config + caller context → a checked policy.
 * The context (home, user, cwd, environment) is read here and nowhere
 * after. Order matters for variables: the instance root is resolved first
 * (it may use $HOME, $USER, $TMPDIR), then the workspace (which may also
 * use $RINGFENCE_HOME), then everything else (which may use $WORKSPACE). */
#include "policy/checks.h"
#include "policy/resolve.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

typedef struct caller {
    char *cwd, *home, *user, *tmpdir, *rf_home_env;
} caller;

static void caller_clear(caller *c)
{
    free(c->cwd);
    free(c->home);
    free(c->user);
    free(c->tmpdir);
    free(c->rf_home_env);
}

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

static int caller_load(const rf_context *ctx, caller *c, rf_error **err)
{
    static const rf_context none = { 0 };
    if (!ctx)
        ctx = &none;
    struct passwd *pw = getpwuid(geteuid());
    c->cwd = ctx->cwd ? strdup(ctx->cwd) : getcwd(NULL, 0);
    if (!c->cwd)
        return rf_error_set(err, errno, "cannot determine the current directory");
    c->home = dup_or_null(ctx->home ? ctx->home : getenv("HOME"));
    if (!c->home && pw)
        c->home = dup_or_null(pw->pw_dir);
    c->user = dup_or_null(ctx->user ? ctx->user : (pw ? pw->pw_name : NULL));
    if (!c->user)
        c->user = dup_or_null(getenv("USER"));
    c->tmpdir = dup_or_null(ctx->tmpdir ? ctx->tmpdir : getenv("TMPDIR"));
    if (!c->tmpdir)
        c->tmpdir = strdup("/tmp");
    c->rf_home_env = dup_or_null(ctx->rf_home ? ctx->rf_home : getenv("RINGFENCE_HOME"));
    return 0;
}

int rf_resolve_fail(rf_resolver *r, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    _cleanup_free_ char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    const char *origin = r->m ? rf_merged_origin(r->m, path) : NULL;
    if (n < 0)
        return rf_error_set(r->err, ENOMEM, "resolving %s", path);
    if (origin)
        return rf_error_set(r->err, 0, "%s (from %s): %s", path, origin, msg);
    return rf_error_set(r->err, 0, "%s: %s", path, msg);
}

const char *rf_resolve_what(const rf_resolver *r, const char *path, char *buf, size_t size)
{
    const char *origin = r->m ? rf_merged_origin(r->m, path) : NULL;
    if (!origin)
        return path;
    snprintf(buf, size, "%s (from %s)", path, origin);
    return buf;
}

/* The instance root: the config's instance_root, else the context's
 * override, else $RINGFENCE_HOME, else ~/.ringfence. Never "." or
 * relative (seed 000: refuse to fall back to "."). */
static int resolve_instance_root(rf_resolver *r, const caller *c, rf_policy *p)
{
    const char *conf = json_string_value(json_object_get(r->tree, "instance_root"));
    _cleanup_free_ char *raw = NULL;
    if (conf)
        raw = strdup(conf);
    else if (c->rf_home_env)
        raw = strdup(c->rf_home_env);
    else if (c->home && c->home[0] == '/' && asprintf(&raw, "%s/.ringfence", c->home) < 0)
        raw = NULL;
    if (!raw) {
        rf_error_set(r->err, 0, "instance_root: cannot determine the instance root: no home "
                                "directory and RINGFENCE_HOME is not set");
        return rf_error_hint_set(r->err, "set RINGFENCE_HOME to an absolute path");
    }
    const char *what = conf ? "instance_root" : "instance_root (RINGFENCE_HOME)";
    char buf[512];
    if (conf)
        what = rf_resolve_what(r, "instance_root", buf, sizeof buf);
    p->instance_root = rf_vars_path(&r->vars, raw, what, r->err);
    if (!p->instance_root)
        return rf_error_hint_set(r->err, "the instance root must be an absolute path, never '.'; "
                                         "set RINGFENCE_HOME or instance_root");
    return 0;
}

static int resolve_workspace(rf_resolver *r, const caller *c, rf_policy *p)
{
    const char *conf = json_string_value(json_object_get(r->tree, "workspace"));
    char buf[512];
    const char *what = rf_resolve_what(r, "workspace", buf, sizeof buf);
    _cleanup_free_ char *path = conf ? rf_vars_path(&r->vars, conf, what, r->err)
                                     : rf_path_normalize(c->cwd);
    if (!path)
        return conf ? -1 : rf_error_set(r->err, 0, "the current directory %s is not absolute", c->cwd);
    struct stat st;
    if (stat(path, &st) < 0) {
        rf_resolve_fail(r, "workspace", "%s: %s", path, strerror(errno));
        return rf_error_hint_set(r->err, "create the directory or point workspace at an existing one");
    }
    if (!S_ISDIR(st.st_mode)) {
        rf_resolve_fail(r, "workspace", "%s is not a directory", path);
        return rf_error_hint_set(r->err, "the workspace must be a directory");
    }
    /* The real path: mounts and the confinement checks compare against it. */
    p->workspace = realpath(path, NULL);
    if (!p->workspace)
        return rf_resolve_fail(r, "workspace", "%s: %s", path, strerror(errno));
    p->allow_sensitive_workspace = json_is_true(json_object_get(r->tree, "allow_sensitive_workspace"));
    return rf_policy_check_workspace(p->workspace, c->home, p->allow_sensitive_workspace,
                                     conf ? what : "workspace (the current directory)", r->err);
}

static int resolve_chdir(rf_resolver *r, rf_policy *p)
{
    const char *conf = json_string_value(json_object_get(r->tree, "chdir"));
    if (!conf)
        return 0;
    char buf[512];
    p->chdir = rf_vars_path(&r->vars, conf, rf_resolve_what(r, "chdir", buf, sizeof buf), r->err);
    return p->chdir ? 0 : -1;
}

static int resolve_context(rf_resolver *r, const caller *c, rf_policy *p)
{
    r->vars = (rf_vars){ .home = c->home, .user = c->user, .tmpdir = c->tmpdir };
    if (resolve_instance_root(r, c, p) < 0)
        return -1;
    r->vars.rf_home = p->instance_root;
    if (resolve_workspace(r, c, p) < 0)
        return -1;
    r->vars.workspace = p->workspace;
    p->caller_cwd = rf_path_normalize(c->cwd);
    p->user = c->user ? strdup(c->user) : NULL;
    return resolve_chdir(r, p);
}

int rf_policy_take_caller_env(rf_policy *p, char *const *envp);

static int resolve_one(const rf_config *cfg, const json_t *tree, const rf_merged *m,
                       const caller *c, const rf_context *ctx, rf_policy *p, size_t *expose_index,
                       rf_error **err)
{
    rf_resolver r = {
        .m = m, .tree = tree, .envp = ctx && ctx->envp ? ctx->envp : environ, .err = err,
        .expose_index = expose_index,
    };
    rf_policy_init_defaults(p);
    r.warnings = &p->warnings;
    if (resolve_context(&r, c, p) < 0 || rf_resolve_tree(&r, p) < 0 ||
        rf_policy_take_caller_env(p, r.envp) < 0) {
        rf_policy_clear(p);
        return -1;
    }
    for (size_t i = 0; cfg->warnings && cfg->warnings[i]; i++)
        rf_strv_push_unique(&p->warnings, cfg->warnings[i]);
    return 0;
}

/* A workspace file may only tighten: resolve the merge before and through
 * it, and compare. */
static int check_workspace_layer(const rf_config *cfg, const rf_merged *m, const caller *c,
                                 const rf_context *ctx, rf_error **err)
{
    rf_policy before, after;
    if (resolve_one(cfg, m->before_workspace, m, c, ctx, &before, NULL, err) < 0)
        return -1;
    if (resolve_one(cfg, m->through_workspace, m, c, ctx, &after, NULL, err) < 0) {
        rf_policy_clear(&before);
        return -1;
    }
    int r = rf_policy_check_tighter(&before, &after, m->workspace_origin, err);
    rf_policy_clear(&before);
    rf_policy_clear(&after);
    return r;
}

static rf_policy *resolve_explained(const rf_config *cfg, const rf_context *ctx, rf_merged *m,
                                    size_t **expose_index, bool bounded, rf_error **err)
{
    if (!cfg) {
        rf_error_set(err, EINVAL, "rf_policy_resolve: no config");
        return NULL;
    }
    if (rf_config_merge(cfg, m, true, err) < 0)
        return NULL;
    caller c = { 0 };
    rf_policy *p = calloc(1, sizeof(*p));
    size_t n = json_array_size(json_object_get(m->tree, "expose"));
    if (expose_index)
        *expose_index = calloc(n + 1, sizeof(size_t));
    int r = p && (!expose_index || *expose_index) ? caller_load(ctx, &c, err)
                                                  : rf_error_set(err, ENOMEM, "resolving the policy");
    if (r == 0 && m->before_workspace)
        r = check_workspace_layer(cfg, m, &c, ctx, err);
    if (r == 0)
        r = resolve_one(cfg, m->tree, m, &c, ctx, p, expose_index ? *expose_index : NULL, err);
    if (r == 0 && bounded && (r = rf_policy_enforce_managed(p, m, err)) < 0)
        rf_policy_clear(p);
    caller_clear(&c);
    if (r < 0) {
        free(p);
        rf_merged_clear(m);
        if (expose_index) {
            free(*expose_index);
            *expose_index = NULL;
        }
        return NULL;
    }
    return p;
}

rf_policy *rf_policy_resolve_explained(const rf_config *cfg, const rf_context *ctx, rf_merged *m,
                                       size_t **expose_index, rf_error **err)
{
    return resolve_explained(cfg, ctx, m, expose_index, true, err);
}

rf_policy *rf_policy_resolve_unbounded(const rf_config *cfg, const rf_context *ctx, rf_error **err)
{
    rf_merged m;
    rf_policy *p = resolve_explained(cfg, ctx, &m, NULL, false, err);
    if (p)
        rf_merged_clear(&m);
    return p;
}

RF_EXPORT rf_policy *rf_policy_resolve(const rf_config *cfg, const rf_context *ctx, rf_error **err)
{
    rf_merged m;
    rf_policy *p = rf_policy_resolve_explained(cfg, ctx, &m, NULL, err);
    if (p)
        rf_merged_clear(&m);
    return p;
}

int rf_policy_workspace_of(const rf_config *cfg, const rf_context *ctx, char **out, rf_error **err)
{
    rf_merged m;
    if (rf_config_merge(cfg, &m, false, err) < 0)
        return -1;
    caller c = { 0 };
    rf_policy p;
    rf_policy_init_defaults(&p);
    rf_resolver r = { .m = &m, .tree = m.tree, .err = err, .warnings = &p.warnings };
    int ret = caller_load(ctx, &c, err);
    if (ret == 0)
        ret = resolve_context(&r, &c, &p);
    if (ret == 0)
        *out = steal_ptr(&p.workspace);
    rf_policy_clear(&p);
    caller_clear(&c);
    rf_merged_clear(&m);
    return ret;
}
