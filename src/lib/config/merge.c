/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Merging layers (seed 003's rules, applied to ringfence's schema):
 *  - "extend" (the default): scalars override, objects merge recursively,
 *    lists append the entries not already present;
 *  - "replace": everything below this layer is ignored;
 *  - "expose" is keyed by target: the last rule for a target wins
 *    (picoclaw's expose_paths rule), a rule with mode "none" removes it;
 *  - agents.list is keyed by id; agents.defaults and the selected agent
 *    apply on top of the layer that holds them, or at the agent slot;
 *  - null sets a value back to its default.
 * Alongside the merged tree we build a tree of origins with the same shape,
 * so `ringfence config --explain` and errors can name the layer of every
 * value. */
#include "config/config.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct merge_state {
    json_t *tree, *org;        /* the merge so far */
    json_t *pending, *pending_org; /* deferred agents sections */
    const char *agent;
    bool agent_found;
    char **agent_ids;
} merge_state;

/* The origin of child `key` / item `i` of a value whose origin is `so`:
 * either one string for the whole value, or a tree of the same shape. */
static json_t *org_child(json_t *so, const char *key)
{
    json_t *c = json_is_object(so) ? json_object_get(so, key) : so;
    return c ? c : so;
}

static json_t *org_item(json_t *so, size_t i)
{
    json_t *c = json_is_array(so) ? json_array_get(so, i) : so;
    return c ? c : so;
}

/* A new origin tree for `val`, every leaf taken from `so`. */
static json_t *org_mirror(const json_t *val, json_t *so)
{
    if (!json_is_string(so))
        return json_deep_copy(so);
    if (json_is_object(val)) {
        json_t *o = json_object();
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)val, k, c)
            json_object_set_new(o, k, org_mirror(c, so));
        return o;
    }
    if (json_is_array(val)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(val); i++)
            json_array_append(a, so);
        return a;
    }
    return json_incref(so);
}

static const char *expose_key(const json_t *rule)
{
    const char *t = json_string_value(json_object_get(rule, "target"));
    return t && *t ? t : json_string_value(json_object_get(rule, "source"));
}

static void merge_object(json_t *dst, json_t *dorg, const json_t *src, json_t *so, const char *path);

static void array_remove_where(json_t *arr, json_t *aorg, const char *key, bool expose)
{
    for (size_t i = json_array_size(arr); i-- > 0;) {
        json_t *it = json_array_get(arr, i);
        const char *k = expose ? expose_key(it) : json_string_value(json_object_get(it, "id"));
        if (k && key && !strcmp(k, key)) {
            json_array_remove(arr, i);
            json_array_remove(aorg, i);
        }
    }
}

static void merge_array(json_t *dst, json_t *dorg, const json_t *src, json_t *so, const char *path,
                        const char *key)
{
    bool expose = !strcmp(key, "expose");
    bool agents = !strcmp(key, "list") && !strcmp(path, "agents");
    size_t i;
    json_t *item;
    json_array_foreach((json_t *)src, i, item) {
        json_t *io = org_item(so, i);
        if (expose) {
            array_remove_where(dst, dorg, expose_key(item), true);
        } else if (agents) {
            const char *id = json_string_value(json_object_get(item, "id"));
            bool merged = false;
            for (size_t j = 0; j < json_array_size(dst) && !merged; j++) {
                json_t *d = json_array_get(dst, j);
                if (id && !strcmp(id, json_string_value(json_object_get(d, "id")) ?: "")) {
                    merge_object(d, json_array_get(dorg, j), item, io, "agents.list[]");
                    merged = true;
                }
            }
            if (merged)
                continue;
        } else {
            bool seen = false;
            for (size_t j = 0; j < json_array_size(dst) && !seen; j++)
                seen = json_equal(json_array_get(dst, j), item);
            if (seen)
                continue;
        }
        json_array_append_new(dst, json_deep_copy(item));
        json_array_append_new(dorg, org_mirror(item, io));
    }
}

static void merge_object(json_t *dst, json_t *dorg, const json_t *src, json_t *so, const char *path)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)src, key, val) {
        json_t *d = json_object_get(dst, key);
        json_t *kso = org_child(so, key);
        if (json_is_null(val)) {
            json_object_del(dst, key);
            json_object_del(dorg, key);
            continue;
        }
        bool both_obj = json_is_object(val) && json_is_object(d);
        bool both_arr = json_is_array(val) && json_is_array(d);
        json_t *dko = json_object_get(dorg, key);
        if ((both_obj && !json_is_object(dko)) || (both_arr && !json_is_array(dko))) {
            json_t *unknown = json_string("?");
            dko = org_mirror(d, dko ? dko : unknown);
            json_decref(unknown);
            json_object_set_new(dorg, key, dko);
        }
        if (both_obj) {
            _cleanup_free_ char *sub = NULL;
            if (asprintf(&sub, "%s%s%s", path, *path ? "." : "", key) < 0)
                continue;
            merge_object(d, dko, val, kso, sub);
        } else if (both_arr) {
            merge_array(d, dko, val, kso, path, key);
        } else {
            json_object_set_new(dst, key, json_deep_copy(val));
            json_object_set_new(dorg, key, org_mirror(val, kso));
        }
    }
}

/* A layer's top level without the keys that steer merging itself. */
static json_t *layer_body(const json_t *root, bool section)
{
    json_t *body = json_object();
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)root, key, val) {
        if (!strcmp(key, "merge_strategy") || !strcmp(key, "$schema") ||
            !strcmp(key, section ? "id" : "agents"))
            continue;
        json_object_set(body, key, val);
    }
    return body;
}

static bool is_replace(const json_t *obj)
{
    const char *s = json_string_value(json_object_get(obj, "merge_strategy"));
    return s && !strcmp(s, "replace");
}

static void state_reset(merge_state *st, bool pending_too)
{
    json_object_clear(st->tree);
    json_object_clear(st->org);
    if (pending_too) {
        json_object_clear(st->pending);
        json_object_clear(st->pending_org);
    }
}

static void apply_section(merge_state *st, const json_t *sec, json_t *so)
{
    if (!json_is_object(sec))
        return;
    if (is_replace(sec))
        state_reset(st, false);
    json_t *body = layer_body(sec, true);
    merge_object(st->tree, st->org, body, so, "");
    json_decref(body);
}

/* Apply agents.defaults, then the selected agent, from `agents`. */
static void apply_agents(merge_state *st, const json_t *agents, json_t *ao)
{
    apply_section(st, json_object_get(agents, "defaults"), org_child(ao, "defaults"));
    json_t *list = json_object_get(agents, "list"), *lo = org_child(ao, "list");
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *id = json_string_value(json_object_get(item, "id"));
        if (id)
            rf_strv_push_unique(&st->agent_ids, id);
        if (st->agent && id && !strcmp(id, st->agent)) {
            st->agent_found = true;
            apply_section(st, item, org_item(lo, i));
        }
    }
}

/* Origins for one layer's agents object: "file (agents.defaults)", ... */
static json_t *agents_origin(const json_t *agents, const char *origin)
{
    json_t *ao = json_object();
    char *s = NULL;
    if (asprintf(&s, "%s (agents.defaults)", origin) >= 0) {
        json_t *o = json_string(s);
        json_object_set_new(ao, "defaults",
                            org_mirror(json_object_get(agents, "defaults") ?: json_null(), o));
        json_decref(o);
        free(s);
    }
    json_t *list = json_object_get(agents, "list"), *lo = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *id = json_string_value(json_object_get(item, "id"));
        json_t *o = NULL;
        if (asprintf(&s, "%s (agents.list %s)", origin, id ? id : "?") >= 0) {
            o = json_string(s);
            free(s);
        }
        if (!o)
            o = json_string(origin);
        json_array_append_new(lo, org_mirror(item, o));
        json_decref(o);
    }
    json_object_set_new(ao, "list", lo);
    return ao;
}

static void merge_layer(merge_state *st, const rf_layer *l)
{
    if (l->flags & RF_LAYER_AGENT_SLOT) {
        apply_agents(st, st->pending, st->pending_org);
        json_object_clear(st->pending);
        json_object_clear(st->pending_org);
        return;
    }
    if (is_replace(l->root))
        state_reset(st, true);
    json_t *origin = json_string(l->origin);
    json_t *body = layer_body(l->root, false);
    merge_object(st->tree, st->org, body, origin, "");
    json_decref(body);
    json_decref(origin);
    json_t *agents = json_object_get(l->root, "agents");
    if (!json_is_object(agents))
        return;
    json_t *ao = agents_origin(agents, l->origin);
    if (l->flags & RF_LAYER_DEFER_AGENTS)
        merge_object(st->pending, st->pending_org, agents, ao, "agents");
    else
        apply_agents(st, agents, ao);
    json_decref(ao);
}

int rf_config_merge(const rf_config *cfg, rf_merged *out, bool check_agent, rf_error **err)
{
    merge_state st = {
        .tree = json_object(), .org = json_object(),
        .pending = json_object(), .pending_org = json_object(),
        .agent = cfg->agent,
    };
    *out = (rf_merged){ 0 };
    bool ws_seen = false;
    for (size_t i = 0; i < cfg->n_layers; i++) {
        const rf_layer *l = &cfg->layers[i];
        /* The workspace layers (a .mittorc gives several) are checked as
         * one step: before the first, through the last. */
        bool check = (l->flags & RF_LAYER_WORKSPACE) && !cfg->trust_workspace;
        if (check && !ws_seen) {
            out->before_workspace = json_deep_copy(st.tree);
            out->workspace_origin = l->origin;
            ws_seen = true;
        }
        merge_layer(&st, l);
        if (check) {
            json_decref(out->through_workspace);
            out->through_workspace = json_deep_copy(st.tree);
        }
    }
    if (json_object_size(st.pending))
        apply_agents(&st, st.pending, st.pending_org);
    json_decref(st.pending);
    json_decref(st.pending_org);
    out->tree = st.tree;
    out->origins = st.org;
    if (check_agent && cfg->agent && !st.agent_found && !cfg->agent_external) {
        /* Joined by hand, not with open_memstream: the config stage is
         * also built for Windows, which has none. */
        size_t len = 1;
        for (size_t i = 0; st.agent_ids && st.agent_ids[i]; i++)
            len += strlen(st.agent_ids[i]) + 2;
        _cleanup_free_ char *known = calloc(1, len);
        for (size_t i = 0; known && st.agent_ids && st.agent_ids[i]; i++) {
            if (i)
                strcat(known, ", ");
            strcat(known, st.agent_ids[i]);
        }
        rf_strv_free(st.agent_ids);
        rf_merged_clear(out);
        rf_error_set(err, 0, "agent '%s' is not defined in any configuration layer", cfg->agent);
        if (known && *known)
            return rf_error_hint_set(err, "defined agents: %s", known);
        return rf_error_hint_set(err, "add it under agents.list with \"id\": \"%s\"", cfg->agent);
    }
    rf_strv_free(st.agent_ids);
    return 0;
}

void rf_merged_clear(rf_merged *m)
{
    json_decref(m->tree);
    json_decref(m->origins);
    json_decref(m->before_workspace);
    json_decref(m->through_workspace);
    *m = (rf_merged){ 0 };
}

const char *rf_merged_origin(const rf_merged *m, const char *path)
{
    json_t *cur = m->origins;
    const char *p = path;
    while (cur && *p) {
        if (json_is_string(cur))
            return json_string_value(cur);
        if (*p == '[') {
            size_t idx = strtoul(p + 1, (char **)&p, 10);
            if (*p == ']')
                p++;
            cur = json_array_get(cur, idx);
        } else {
            if (*p == '.')
                p++;
            size_t n = strcspn(p, ".[");
            char key[128];
            if (n >= sizeof key)
                return NULL;
            memcpy(key, p, n);
            key[n] = '\0';
            p += n;
            cur = json_object_get(cur, key);
        }
    }
    return json_is_string(cur) ? json_string_value(cur) : NULL;
}
