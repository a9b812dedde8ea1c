/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Is a resolved policy within the managed boundary? (managed.h) Each rule
 * reads one setting of the boundary, in the policy's keys; a setting the
 * boundary leaves out bounds nothing. */
#include "managed/managed.h"
#include "config/config.h"
#include "util/cleanup.h"
#include "util/format.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct checker {
    const json_t *b, *p;
    rf_managed_excess *out;
} checker;

static int beyond(checker *c, const char *setting, const char *fmt, ...) RF_PRINTF(3, 4);
static int beyond(checker *c, const char *setting, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    snprintf(c->out->setting, sizeof c->out->setting, "%s", setting);
    vsnprintf(c->out->what, sizeof c->out->what, fmt, ap);
    va_end(ap);
    return 1;
}

static const json_t *at(const json_t *root, const char *a, const char *b)
{
    const json_t *v = json_object_get(root, a);
    return b ? json_object_get(v, b) : v;
}

/* The rank of value in names (weakest first); -1 if not there. */
static int rank(const char *value, const char *const *names)
{
    for (int i = 0; value && names[i]; i++)
        if (!strcmp(value, names[i]))
            return i;
    return -1;
}

/* An enum whose values are ordered from most granting to least (or the
 * reverse): the policy's must not grant more than the boundary's. */
static int enum_rule(checker *c, const char *a, const char *b, const char *const *most_first, const char *name)
{
    const char *bv = json_string_value(at(c->b, a, b)), *pv = json_string_value(at(c->p, a, b));
    if (!bv)
        return 0;
    int br = rank(bv, most_first), pr = rank(pv, most_first);
    if (br < 0)
        return beyond(c, name, "the boundary's value %s is not one of ours%s", bv, ""), -1;
    if (pv && pr >= 0 && pr < br)
        return beyond(c, name, "%s (the boundary allows at most: %s)", pv, bv);
    return 0;
}

/* A host pattern: "*.x.com" covers x.com's subdomains (and their
 * patterns), "*" everything, anything else itself only. */
static bool host_covers(const char *pat, const char *host)
{
    if (!strcmp(pat, "*") || !strcmp(pat, host))
        return true;
    if (strncmp(pat, "*.", 2))
        return false;
    size_t lp = strlen(pat + 1), lh = strlen(host); /* ".x.com" */
    return lh > lp && !strcmp(host + lh - lp, pat + 1);
}

/* "NAME[:PORT]": a boundary entry without a port covers every port. */
static bool domain_covers(const char *pat, const char *dom)
{
    char pn[256], dn[256];
    const char *pp = strrchr(pat, ':'), *dp = strrchr(dom, ':');
    snprintf(pn, sizeof pn, "%.*s", pp ? (int)(pp - pat) : (int)strlen(pat), pat);
    snprintf(dn, sizeof dn, "%.*s", dp ? (int)(dp - dom) : (int)strlen(dom), dom);
    if (pp && (!dp || strcmp(pp, dp)))
        return false;
    return host_covers(pn, dn);
}

static int domains_rule(checker *c)
{
    const json_t *allowed = at(c->b, "network", "allow_domains");
    const json_t *asked = at(c->p, "network", "allow_domains");
    if (!json_is_array(allowed))
        return 0;
    size_t i, j;
    json_t *d, *pat;
    json_array_foreach(asked, i, d) {
        const char *dom = json_string_value(d);
        bool ok = false;
        json_array_foreach(allowed, j, pat)
            ok = ok || (dom && json_is_string(pat) && domain_covers(json_string_value(pat), dom));
        if (!ok) {
            char setting[64];
            snprintf(setting, sizeof setting, "network.allow_domains[%zu]", i);
            _cleanup_free_ char *list = json_dumps(allowed, JSON_COMPACT);
            return beyond(c, setting, "%s (the boundary allows at most: %s)", dom ? dom : "?", list ? list : "");
        }
    }
    return 0;
}

static int ports_rule(checker *c)
{
    const json_t *allowed = at(c->b, "network", "allow_ports");
    if (!json_is_array(allowed))
        return 0;
    size_t i, j;
    json_t *port, *a;
    json_array_foreach(at(c->p, "network", "allow_ports"), i, port) {
        bool ok = false;
        json_array_foreach(allowed, j, a)
            ok = ok || json_equal(a, port) || (json_is_integer(a) && json_is_string(port) &&
                                               json_integer_value(a) == atoll(json_string_value(port)));
        if (!ok) {
            _cleanup_free_ char *list = json_dumps(allowed, JSON_COMPACT);
            _cleanup_free_ char *asked = json_dumps(port, JSON_COMPACT | JSON_ENCODE_ANY);
            return beyond(c, "network.allow_ports", "port %s (the boundary allows at most: %s)",
                          json_is_string(port) ? json_string_value(port) : asked ? asked : "?", list ? list : "");
        }
    }
    return 0;
}

/* Routes: only those the boundary names, to the upstream it names. */
static int routes_rule(checker *c)
{
    const json_t *allowed = at(c->b, "network", "routes");
    if (!json_is_object(allowed))
        return 0;
    size_t i;
    json_t *r;
    json_array_foreach(at(c->p, "network", "routes"), i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        const json_t *b = name ? json_object_get(allowed, name) : NULL;
        const char *burl = json_string_value(json_object_get(b, "url"));
        const char *url = json_string_value(json_object_get(r, "url"));
        if (!b)
            return beyond(c, "network.routes", "route %s (the boundary has no such route%s)", name ? name : "?", "");
        if (burl && (!url || strcmp(burl, url)))
            return beyond(c, "network.routes", "route upstream %s (the boundary allows only %s)", url ? url : "?",
                          burl);
    }
    return 0;
}

/* A switch that loosens when `loose`: the boundary's other value forbids it. */
static int switch_rule(checker *c, const char *a, const char *b, bool loose, const char *name)
{
    const json_t *bv = at(c->b, a, b), *pv = at(c->p, a, b);
    if (!json_is_boolean(bv) || json_is_true(bv) == loose)
        return 0;
    bool pol = pv ? json_is_true(pv) : !loose; /* unset: the safe default */
    if (pol == loose)
        return beyond(c, name, "%s (the boundary requires %s)", loose ? "true" : "false", loose ? "false" : "true");
    return 0;
}

/* A boundary expose entry: "SRC[:DST][:ro|rw]" or {source, mode}. */
static void expose_parts(const json_t *e, char *src, size_t size, bool *rw)
{
    *rw = false;
    src[0] = '\0';
    if (json_is_object(e)) {
        snprintf(src, size, "%s", json_string_value(json_object_get(e, "source")) ?: "");
        *rw = !strcmp(json_string_value(json_object_get(e, "mode")) ?: "ro", "rw");
        return;
    }
    const char *s = json_string_value(e);
    if (!s)
        return;
    const char *colon = strchr(s, ':');
    snprintf(src, size, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
    const char *last = strrchr(s, ':');
    *rw = last && !strcmp(last, ":rw");
}

static bool path_beneath(const char *top, const char *path)
{
    size_t n = strlen(top);
    while (n > 1 && top[n - 1] == '/')
        n--;
    return !strncmp(top, path, n) && (path[n] == '\0' || path[n] == '/' || (n == 1 && top[0] == '/'));
}

static int expose_rule(checker *c)
{
    const json_t *allowed = json_object_get(c->b, "expose");
    if (!json_is_array(allowed))
        return 0;
    size_t i, j;
    json_t *e, *a;
    json_array_foreach(json_object_get(c->p, "expose"), i, e) {
        const char *src = json_string_value(json_object_get(e, "source"));
        bool rw = !strcmp(json_string_value(json_object_get(e, "mode")) ?: "ro", "rw"), ok = false;
        json_array_foreach(allowed, j, a) {
            char top[4096];
            bool top_rw;
            expose_parts(a, top, sizeof top, &top_rw);
            ok = ok || (src && top[0] == '/' && path_beneath(top, src) && (top_rw || !rw));
        }
        if (!ok) {
            char setting[64];
            snprintf(setting, sizeof setting, "expose[%zu]", i);
            return beyond(c, setting, "%s (the boundary exposes nothing that holds it%s)", src ? src : "?",
                          rw ? " read-write" : "");
        }
    }
    return 0;
}

void rf_managed_limits_of(const json_t *boundary, rf_managed_limits *out)
{
    const json_t *l = json_object_get(boundary, "limits");
    memset(out, 0, sizeof *out);
    (void)rf_parse_size(json_object_get(l, "memory"), &out->memory_bytes);
    json_int_t pids = json_integer_value(json_object_get(l, "pids"));
    out->pids = pids > 0 ? (uint64_t)pids : 0;
    out->cpu = json_number_value(json_object_get(l, "cpu"));
    out->timeout_s = json_number_value(json_object_get(l, "timeout"));
}

/* A limit the policy sets must be at least as tight; unset gets the boundary's. */
static int limits_rule(checker *c)
{
    rf_managed_limits b;
    rf_managed_limits_of(c->b, &b);
    const json_t *l = json_object_get(c->p, "limits");
    static const char *const keys[] = { "memory", "pids", "cpu", "timeout" };
    double bv[] = { (double)b.memory_bytes, (double)b.pids, b.cpu, b.timeout_s };
    for (size_t i = 0; i < 4; i++) {
        double pv = json_number_value(json_object_get(l, keys[i]));
        if (bv[i] > 0 && pv > bv[i]) {
            char setting[32], got[64], max[64];
            snprintf(setting, sizeof setting, "limits.%s", keys[i]);
            snprintf(got, sizeof got, "%.15g", pv);
            snprintf(max, sizeof max, "%.15g", bv[i]);
            return beyond(c, setting, "%s (the boundary allows at most: %s)", got, max);
        }
    }
    return 0;
}

static int backend_rule(checker *c)
{
    static const char *const most_first[] = { "none", "landlock", "native", NULL };
    const char *bv = json_string_value(json_object_get(c->b, "backend"));
    const char *pv = json_string_value(json_object_get(c->p, "backend"));
    if (!bv || !pv)
        return 0;
    int br = rank(bv, most_first), pr = rank(pv, most_first);
    br = br < 0 ? 2 : br; /* bwrap, firejail, container, auto: a namespace sandbox */
    pr = pr < 0 ? 2 : pr;
    return pr < br ? beyond(c, "backend", "%s (the boundary allows at most: %s)", pv, bv) : 0;
}

int rf_managed_check(const json_t *boundary, const json_t *policy, rf_managed_excess *out)
{
    static const char *const net[] = { "host", "allowlist", "none", NULL };
    static const char *const landlock[] = { "off", "best-effort", "required", NULL };
    static const char *const seccomp[] = { "off", "default", "strict", NULL };
    checker c = { .b = boundary, .p = policy, .out = out };
    memset(out, 0, sizeof *out);
    int r = 0;
#define RULE(x)                \
    if ((r = (x)) != 0)        \
        return r
    RULE(enum_rule(&c, "network", "mode", net, "network.mode"));
    RULE(domains_rule(&c));
    RULE(ports_rule(&c));
    RULE(routes_rule(&c));
    RULE(switch_rule(&c, "network", "allow_private_addresses", true, "network.allow_private_addresses"));
    RULE(expose_rule(&c));
    RULE(switch_rule(&c, "accept_weaker", NULL, true, "accept_weaker"));
    RULE(switch_rule(&c, "share_tmp", NULL, true, "share_tmp"));
    RULE(switch_rule(&c, "allow_sensitive_workspace", NULL, true, "allow_sensitive_workspace"));
    RULE(switch_rule(&c, "allow_read_outside_workspace", NULL, true, "allow_read_outside_workspace"));
    RULE(switch_rule(&c, "restrict_to_workspace", NULL, false, "restrict_to_workspace"));
    RULE(switch_rule(&c, "audit", NULL, false, "audit"));
    /* A system log is fed by the user trail's records: it needs the trail. */
    if (json_is_object(json_object_get(boundary, "system_audit")) && json_is_false(json_object_get(policy, "audit")))
        return beyond(&c, "audit", "false (the boundary's system_audit needs the audit trail on)");
    RULE(backend_rule(&c));
    RULE(enum_rule(&c, "landlock", NULL, landlock, "landlock"));
    RULE(enum_rule(&c, "seccomp", "profile", seccomp, "seccomp.profile"));
    RULE(limits_rule(&c));
#undef RULE
    return 0;
}
