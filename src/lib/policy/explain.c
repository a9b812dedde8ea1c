/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `ringfence config --explain`: the resolved policy, and for each of its
 * values the layer it came from, so a user can see why a path is or is not
 * visible. Values no layer set are "default"; values the caller's context
 * supplies (current directory, home) say so. */
#include "config/config.h"
#include "policy/resolve.h"
#include "util/cleanup.h"
#include "managed/managed.h"
#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct explainer {
    const rf_merged *m;
    const size_t *expose_index;
    json_t *sources;
} explainer;

static const char *context_origin(const char *path)
{
    if (!strcmp(path, "workspace"))
        return "context (current directory)";
    if (!strcmp(path, "instance_root"))
        return "context ($RINGFENCE_HOME, else ~/.ringfence)";
    if (!strcmp(path, "caller_cwd") || !strcmp(path, "user"))
        return "context";
    return "default";
}

/* The origin of list item `v` at `path`: the merged item equal to it. */
static const char *item_origin(explainer *ex, const char *path, size_t i, const json_t *v)
{
    char p[256];
    if (!strcmp(path, "expose")) {
        snprintf(p, sizeof p, "expose[%zu]", ex->expose_index ? ex->expose_index[i] : i);
        return rf_merged_origin(ex->m, p);
    }
    const json_t *list = rf_json_path_get(ex->m->tree, path);
    size_t j;
    json_t *item;
    json_array_foreach(list, j, item) {
        if (json_equal(item, v)) {
            snprintf(p, sizeof p, "%s[%zu]", path, j);
            return rf_merged_origin(ex->m, p);
        }
    }
    return NULL;
}

static void walk(explainer *ex, const json_t *v, const char *path)
{
    if (!strcmp(path, "warnings") || !strcmp(path, "backend_reason"))
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c) {
            _cleanup_free_ char *sub = NULL;
            if (asprintf(&sub, "%s%s%s", path, *path ? "." : "", k) >= 0)
                walk(ex, c, sub);
        }
        return;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c) {
            char p[300];
            snprintf(p, sizeof p, "%s[%zu]", path, i);
            const char *o = item_origin(ex, path, i, c);
            json_object_set_new(ex->sources, p, json_string(o ? o : "default"));
        }
        return;
    }
    if (json_is_null(v))
        return;
    const char *o = rf_merged_origin(ex->m, path);
    json_object_set_new(ex->sources, path, json_string(o ? o : context_origin(path)));
}

/* The managed boundary the policy was checked against (it passed, or
 * resolving would have failed), or null: where it is and what it says. */
static json_t *managed_part(void)
{
    _cleanup_free_ char *path = NULL;
    json_t *b = rf_managed_load(NULL, &path, NULL);
    return b ? json_pack("{s:s, s:o}", "path", path, "boundary", b) : json_null();
}

RF_EXPORT char *rf_config_explain(const rf_config *cfg, const rf_context *ctx, rf_error **err)
{
    rf_merged m;
    _cleanup_free_ size_t *idx = NULL;
    rf_policy *p = rf_policy_resolve_explained(cfg, ctx, &m, &idx, err);
    if (!p)
        return NULL;
    json_t *pj = rf_policy_to_json_value(p);
    explainer ex = { .m = &m, .expose_index = idx, .sources = json_object() };
    walk(&ex, pj, "");
    json_t *out = json_pack("{s:o, s:o, s:o}", "policy", pj, "sources", ex.sources, "managed", managed_part());
    char *s = out ? json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(out);
    rf_policy_free(p);
    rf_merged_clear(&m);
    if (!s)
        rf_error_set(err, ENOMEM, "explaining the configuration");
    return s;
}
