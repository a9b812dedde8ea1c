/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `network.routes`: credential routes (issue 28). Each is checked here
 * (name, URL, headers and their sources, rules, CA file) and kept as one
 * canonical JSON object, a preset's defaults filled in where the user gave
 * nothing of their own. Only *where* a secret comes from is kept
 * ("env:ANTHROPIC_API_KEY"); the value is read by the proxy, on the host,
 * when a request needs it. */
#include "net/route.h"
#include "policy/resolve.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(rf_resolver *r, const char *name, const char *key, const char *why, const char *hint)
{
    char at[128];
    snprintf(at, sizeof at, "network.routes.%s%s%s", name, key ? "." : "", key ? key : "");
    rf_resolve_fail(r, at, "%s", why);
    return hint ? rf_error_hint_set(r->err, "%s", hint) : -1;
}

/* The preset named by `preset`, or by the route's name when it has no
 * URL of its own. */
static int find_preset(rf_resolver *r, const char *name, const json_t *spec, const rf_route_preset **out)
{
    const char *preset = json_string_value(json_object_get(spec, "preset"));
    *out = NULL;
    if (!preset && json_object_get(spec, "url"))
        return 0;
    const char *want = preset ? preset : name;
    if ((*out = rf_route_preset_find(want)))
        return 0;
    const char *near = rf_route_preset_suggest(want);
    char why[160], hint[200];
    snprintf(why, sizeof why, preset ? "unknown preset '%s'" : "no url, and '%s' is not a preset", want);
    if (near)
        snprintf(hint, sizeof hint, "did you mean '%s'? (presets: %s; or give a URL: --route NAME=https://...)",
                 near, rf_route_preset_names());
    else
        snprintf(hint, sizeof hint, "presets: %s; or give a URL: --route NAME=https://...", rf_route_preset_names());
    return fail(r, name, preset ? "preset" : NULL, why, hint);
}

static int check_url(rf_resolver *r, const char *name, const char *url, bool allow_http)
{
    rf_route_url u;
    const char *why = NULL;
    if (!url)
        return fail(r, name, "url", "a route needs an upstream URL", "--route NAME=https://api.example.com");
    if (rf_route_url_parse(url, &u, &why) < 0)
        return fail(r, name, "url", why, "write https://host[:port][/prefix], e.g. https://api.example.com/v1");
    if (!u.tls && !allow_http)
        return fail(r, name, "url",
                    "an http:// upstream would carry the credential in clear text",
                    "use https://, or allow it for this route (--route-allow-http NAME, allow_http: true)");
    return 0;
}

static int check_headers(rf_resolver *r, const char *name, const json_t *headers)
{
    if (json_object_size(headers) > RF_ROUTE_HEADERS_MAX)
        return fail(r, name, "headers", "at most 8 headers per route", NULL);
    const char *h;
    json_t *v;
    json_object_foreach((json_t *)headers, h, v) {
        const char *why = NULL;
        if (rf_route_check_header_name(h, &why) < 0)
            return fail(r, name, "headers", why, "e.g. --route-header NAME:x-api-key=env:MY_KEY");
        if (!json_is_string(v) || rf_route_check_source(json_string_value(v), &why) < 0)
            return fail(r, name, "headers", why ? why : "a header's source is a string",
                        "env:VAR, file:/abs/path (mode 0600) or cmd:COMMAND, optionally after bearer: or "
                        "basic:USER:");
    }
    return 0;
}

static int check_rules(rf_resolver *r, const char *name, const json_t *allow)
{
    if (json_array_size(allow) > RF_ROUTE_RULES_MAX)
        return fail(r, name, "allow", "at most 64 rules per route", NULL);
    size_t i;
    json_t *v;
    json_array_foreach(allow, i, v) {
        const char *why = NULL;
        if (!json_is_string(v) || rf_route_check_rule(json_string_value(v), &why) < 0)
            return fail(r, name, "allow", why ? why : "a rule is a string",
                        "e.g. \"POST /v1/messages*\" or \"* /v1/*\"");
    }
    return 0;
}

static json_t *strings(const char *const *v)
{
    json_t *a = json_array();
    for (size_t i = 0; v && v[i]; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

/* The canonical object: the user's settings over the preset's. */
static json_t *canonical(const char *name, const json_t *spec, const rf_route_preset *pre)
{
    const json_t *url = json_object_get(spec, "url"), *headers = json_object_get(spec, "headers"),
                 *allow = json_object_get(spec, "allow"), *ca = json_object_get(spec, "ca");
    json_t *o = json_pack("{s:s}", "name", name);
    json_object_set_new(o, "url", json_is_string(url) ? json_copy((json_t *)url) : json_string(pre->url));
    if (pre)
        json_object_set_new(o, "preset", json_string(pre->name));
    json_t *h = json_object_size(headers) ? json_deep_copy(headers) : json_object();
    if (!json_object_size(headers) && pre)
        json_object_set_new(h, pre->header, json_string(pre->source));
    json_object_set_new(o, "headers", h);
    json_object_set_new(o, "allow", json_array_size(allow) ? json_deep_copy(allow) : strings(pre ? pre->allow : NULL));
    if (json_is_string(ca))
        json_object_set_new(o, "ca", json_copy((json_t *)ca));
    json_object_set_new(o, "allow_http", json_boolean(json_is_true(json_object_get(spec, "allow_http"))));
    return o;
}

static int resolve_one(rf_resolver *r, const char *name, const json_t *spec, rf_strv *out)
{
    const char *why = NULL;
    const rf_route_preset *pre = NULL;
    if (rf_route_check_name(name, &why) < 0)
        return fail(r, name, NULL, why, "e.g. --route my-api=https://api.example.com");
    if (!json_is_object(spec))
        return fail(r, name, NULL, "a route is an object {url, headers, allow, ca, allow_http, preset}", NULL);
    if (find_preset(r, name, spec, &pre) < 0)
        return -1;
    const json_t *ca = json_object_get(spec, "ca");
    if (ca && (!json_is_string(ca) || json_string_value(ca)[0] != '/'))
        return fail(r, name, "ca", "the CA file is an absolute path to a PEM bundle", NULL);
    const json_t *url = json_object_get(spec, "url");
    if (check_url(r, name, json_is_string(url) ? json_string_value(url) : pre ? pre->url : NULL,
                  json_is_true(json_object_get(spec, "allow_http"))) < 0 ||
        check_headers(r, name, json_object_get(spec, "headers")) < 0 ||
        check_rules(r, name, json_object_get(spec, "allow")) < 0)
        return -1;
    json_t *o = canonical(name, spec, pre);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    if (!s || rf_strv_push_take(out, s) < 0)
        return rf_error_set(r->err, ENOMEM, "network.routes");
    return 0;
}

int rf_resolve_routes(rf_resolver *r, rf_net_policy *n)
{
    const json_t *routes = rf_json_path_get(r->tree, "network.routes");
    if (routes && !json_is_object(routes))
        return fail(r, "", NULL, "network.routes is an object {NAME: {url, headers, ...}}", NULL);
    if (json_object_size(routes) > RF_ROUTE_MAX)
        return fail(r, "", NULL, "at most 32 routes", NULL);
    const char *name;
    json_t *spec;
    json_object_foreach((json_t *)routes, name, spec) {
        if (json_is_null(spec))
            continue; /* a later layer removed it */
        if (resolve_one(r, name, spec, &n->routes) < 0)
            return -1;
    }
    return 0;
}
