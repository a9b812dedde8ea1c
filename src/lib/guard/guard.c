/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The exec guard's public API: build a guard once from the options (the
 * patterns are compiled here), then check any number of commands with it,
 * from any number of threads: a check only reads the guard. */
#include "guard/guard.h"
#include "util/error.h"
#include "util/path.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Seed 001's messages, verbatim: agents and their tests look for them. */
#define MSG_PATTERN "Command blocked by safety guard (dangerous pattern detected)"
#define MSG_PATH "Command blocked by safety guard (path outside working dir)"

static size_t count(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

static int set_dirs(rf_guard *g, const rf_guard_options *o, rf_error **err)
{
    if (!o->workspace || o->workspace[0] != '/') {
        rf_error_set(err, 0, "restrict_to_workspace needs an absolute workspace, got '%s'",
                     o->workspace ? o->workspace : "(none)");
        return rf_error_hint_set(err, "set the workspace, or turn restrict_to_workspace off");
    }
    g->workspace = rf_path_normalize(o->workspace);
    g->cwd = rf_path_normalize(o->cwd ? o->cwd : o->workspace);
    if (!g->workspace || !g->cwd)
        return o->cwd && o->cwd[0] != '/' ? rf_error_set(err, 0, "the working directory '%s' is not absolute", o->cwd)
                                          : rf_error_set(err, ENOMEM, "creating the guard");
    if (!rf_path_is_beneath(g->cwd, g->workspace))
        return rf_error_set(err, 0, "the working directory %s is outside the workspace %s", g->cwd, g->workspace);
    return 0;
}

rf_guard *rf_guard_new_jit(const rf_guard_options *opts, bool jit, rf_error **err)
{
    if (!opts) {
        rf_error_set(err, EINVAL, "creating the guard");
        return NULL;
    }
    size_t n = count(opts->custom_deny) + count(opts->custom_allow);
    if (n > RF_GUARD_MAX_PATTERNS) {
        rf_error_set(err, 0, "too many custom exec patterns: %zu (limit %u)", n, RF_GUARD_MAX_PATTERNS);
        rf_error_hint_set(err, "merge patterns with alternation (a|b)");
        return NULL;
    }
    rf_guard *g = calloc(1, sizeof(*g));
    if (!g) {
        rf_error_set(err, ENOMEM, "creating the guard");
        return NULL;
    }
    g->deny_enabled = opts->enable_deny_patterns;
    g->restrict_to_workspace = opts->restrict_to_workspace;
    g->mctx = pcre2_match_context_create(NULL);
    if (!g->mctx) {
        rf_error_set(err, ENOMEM, "creating the guard");
        goto fail;
    }
    pcre2_set_match_limit(g->mctx, RF_GUARD_MATCH_LIMIT);
    pcre2_set_depth_limit(g->mctx, RF_GUARD_DEPTH_LIMIT);
    pcre2_set_heap_limit(g->mctx, RF_GUARD_HEAP_LIMIT_KIB);
    if ((g->restrict_to_workspace && set_dirs(g, opts, err) < 0) ||
        (g->deny_enabled && rf_guard_patterns_add_defaults(&g->deny, jit, err) < 0) ||
        rf_guard_patterns_add(&g->deny, opts->custom_deny, "custom_deny_patterns", jit, err) < 0 ||
        rf_guard_patterns_add(&g->allow, opts->custom_allow, "custom_allow_patterns", jit, err) < 0)
        goto fail;
    return g;
fail:
    rf_guard_free(g);
    return NULL;
}

RF_EXPORT rf_guard *rf_guard_new(const rf_guard_options *opts, rf_error **err)
{
    return rf_guard_new_jit(opts, true, err);
}

RF_EXPORT void rf_guard_free(rf_guard *g)
{
    if (!g)
        return;
    rf_guard_patterns_free(&g->deny);
    rf_guard_patterns_free(&g->allow);
    pcre2_match_context_free(g->mctx);
    free(g->workspace);
    free(g->cwd);
    free(g);
}

static int build_views(rf_gcheck *c)
{
    c->views = calloc(c->parse.n_lists, sizeof(*c->views));
    if (!c->views)
        return -1;
    for (size_t li = 0; li < c->parse.n_lists; li++) {
        const rf_glist *l = c->parse.lists[li];
        c->views[li] = calloc(l->n_segs + 1, sizeof(**c->views));
        if (!c->views[li])
            return -1;
        for (size_t si = 0; si < l->n_segs; si++)
            if (rf_guard_view_build(l, &l->segs[si], &c->views[li][si]) < 0)
                return -1;
    }
    return 0;
}

static void check_clear(rf_gcheck *c)
{
    for (size_t li = 0; c->views && li < c->parse.n_lists; li++) {
        for (size_t si = 0; c->views[li] && si < c->parse.lists[li]->n_segs; si++)
            rf_guard_view_clear(&c->views[li][si]);
        free(c->views[li]);
    }
    free(c->views);
    rf_guard_parse_free(&c->parse);
    pcre2_match_data_free(c->md);
    free(c->detail);
}

static int fill_verdict(rf_gcheck *c, rf_guard_verdict *out, rf_error **err)
{
    rf_guard_verdict v = { .result = c->result };
    if (c->result != RF_GUARD_ALLOWED) {
        v.message = strdup(c->result == RF_GUARD_BLOCKED_PATH ? MSG_PATH : MSG_PATTERN);
        v.pattern = c->pattern ? strdup(c->pattern) : NULL;
        v.detail = c->detail;
        c->detail = NULL;
        if (!v.message || (c->pattern && !v.pattern)) {
            rf_guard_verdict_clear(&v);
            return rf_error_set(err, ENOMEM, "checking the command");
        }
    }
    *out = v;
    return 0;
}

RF_EXPORT int rf_guard_check(const rf_guard *g, const char *command, rf_guard_verdict *out, rf_error **err)
{
    if (out)
        *out = (rf_guard_verdict){ 0 };
    if (!g || !command || !out)
        return rf_error_set(err, EINVAL, "checking a command");
    size_t len = strnlen(command, RF_GUARD_MAX_COMMAND + 1);
    if (len > RF_GUARD_MAX_COMMAND) {
        rf_error_set(err, 0, "command too long to check: more than %u bytes", RF_GUARD_MAX_COMMAND);
        return rf_error_hint_set(err, "write long scripts to a file in the workspace and run that");
    }
    rf_gcheck c = { .g = g, .command = command, .result = RF_GUARD_ALLOWED };
    int r = rf_guard_parse(&c.parse, command, err);
    if (r == 0 && (build_views(&c) < 0 || !(c.md = pcre2_match_data_create(1, NULL))))
        r = rf_error_set(err, ENOMEM, "checking the command");
    if (r == 0)
        r = rf_guard_scan_patterns(&c, err);
    if (r == 0 && c.result == RF_GUARD_ALLOWED)
        r = rf_guard_scan_paths(&c, err);
    if (r == 0)
        r = fill_verdict(&c, out, err);
    check_clear(&c);
    return r;
}

RF_EXPORT void rf_guard_verdict_clear(rf_guard_verdict *v)
{
    if (!v)
        return;
    free(v->message);
    free(v->pattern);
    free(v->detail);
    *v = (rf_guard_verdict){ 0 };
}
