/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The routes of one proxy, built from the policy's canonical route
 * objects when the proxy starts (a CA file that does not load stops the
 * start, clearly), and the per-route rules: method and path glob. */
#include "net/route.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void route_clear(rf_route *r)
{
    free(r->name);
    for (size_t i = 0; r->allow && r->allow[i]; i++)
        free(r->allow[i]);
    free(r->allow);
    for (size_t i = 0; i < r->n_secrets; i++)
        rf_route_secret_clear(&r->secrets[i]);
    SSL_CTX_free(r->tls);
    memset(r, 0, sizeof *r);
}

void rf_route_table_clear(rf_route_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        route_clear(&t->routes[i]);
    free(t->routes);
    memset(t, 0, sizeof *t);
}

static char *why_route(const char *name, const char *what)
{
    char *w = NULL;
    return asprintf(&w, "route %s: %s", name, what) < 0 ? NULL : w;
}

static int build_rules(rf_route *r, const json_t *allow)
{
    size_t n = json_array_size(allow);
    if (n == 0)
        return 0; /* no rules: every method and path of the upstream */
    r->allow = calloc(n + 1, sizeof *r->allow);
    if (!r->allow)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!(r->allow[i] = strdup(json_string_value(json_array_get(allow, i)) ?: "")))
            return -1;
    return 0;
}

static int build_secrets(rf_route *r, const json_t *headers)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)headers, name, v) {
        if (r->n_secrets >= RF_ROUTE_HEADERS_MAX)
            return -1;
        rf_route_secret *s = &r->secrets[r->n_secrets++];
        pthread_mutex_init(&s->lock, NULL);
        if (!(s->header = strdup(name)) || !(s->source = strdup(json_string_value(v) ?: "")))
            return -1;
    }
    return 0;
}

static int build_one(rf_route *r, const char *spec, char **why)
{
    json_t *o = json_loads(spec, 0, NULL);
    const char *name = json_string_value(json_object_get(o, "name"));
    const char *url = json_string_value(json_object_get(o, "url"));
    const char *ca = json_string_value(json_object_get(o, "ca"));
    const char *uwhy = NULL;
    int rc = -1;
    if (!name || !url || rf_route_url_parse(url, &r->url, &uwhy) < 0) {
        *why = why_route(name ? name : "?", uwhy ? uwhy : "malformed");
    } else if (!(r->name = strdup(name)) || build_rules(r, json_object_get(o, "allow")) < 0 ||
               build_secrets(r, json_object_get(o, "headers")) < 0) {
        *why = why_route(name, "out of memory");
    } else {
        r->allow_http = json_is_true(json_object_get(o, "allow_http"));
        char *twhy = NULL;
        if (!r->url.tls && !r->allow_http) /* the resolver refused it already; fail closed anyway */
            *why = why_route(name, "an http:// upstream needs allow_http");
        else if (r->url.tls && !(r->tls = rf_route_tls_ctx(ca, &twhy)))
            *why = why_route(name, twhy ? twhy : "TLS setup failed");
        else
            rc = 0;
        free(twhy);
    }
    json_decref(o);
    return rc;
}

int rf_route_table_build(rf_route_table *t, char *const *specs, char **why)
{
    memset(t, 0, sizeof *t);
    size_t n = 0;
    while (specs && specs[n])
        n++;
    if (n == 0)
        return 0;
    /* OpenSSL is loaded only now (route_ssl.h), for TLS and for Basic
     * headers (EVP_EncodeBlock), before any request thread runs. */
    if (rf_route_ssl_load(why) < 0)
        return -1;
    if (!(t->routes = calloc(n, sizeof *t->routes)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        t->n = i + 1;
        if (build_one(&t->routes[i], specs[i], why) < 0) {
            rf_route_table_clear(t);
            return -1;
        }
    }
    return 0;
}

rf_route *rf_route_find(const rf_route_table *t, const char *name, size_t len)
{
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->routes[i].name) == len && !memcmp(t->routes[i].name, name, len))
            return &t->routes[i];
    return NULL;
}

/* The path is matched without its query; '*' in a rule matches any
 * characters, '/' included (fnmatch without FNM_PATHNAME). */
const char *rf_route_check(const rf_route *r, const char *method, size_t mlen, const char *path, size_t plen)
{
    if (!r->allow)
        return NULL;
    size_t q = strcspn(path, "? ");
    if (q > plen)
        q = plen;
    char m[64], *p = q ? strndup(path, q) : strdup("/"); /* on the heap: the stack of a kept connection's
                                                            thread stays small */
    if (!p || mlen >= sizeof m) {
        free(p);
        return "not in the route's allow rules";
    }
    snprintf(m, sizeof m, "%.*s", (int)mlen, method);
    for (size_t i = 0; r->allow[i]; i++) {
        const char *sp = strchr(r->allow[i], ' ');
        size_t rm = (size_t)(sp - r->allow[i]);
        bool method_ok = (rm == 1 && r->allow[i][0] == '*') || (rm == mlen && !strncmp(r->allow[i], m, rm));
        if (method_ok && fnmatch(sp + 1, p, 0) == 0) {
            free(p);
            return NULL;
        }
    }
    free(p);
    return "not in the route's allow rules";
}
