/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The `network` object: its mode and, for `allowlist`, the names, ports,
 * host mappings and publications, each checked here so a typo is an error
 * with its position at resolve time, never a rule that silently matches
 * nothing. Names are lower-cased (DNS is case-insensitive). */
#include "net/net.h"
#include "policy/resolve.h"
#include "util/error.h"
#include "util/strv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*check_fn)(const char *s, char **normalised, const char **why);

static int check_pattern(const char *s, char **out, const char **why)
{
    if (rf_net_pattern_check(s, why) < 0)
        return -1;
    if (!(*out = strdup(s)))
        return -1;
    for (char *c = *out; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return 0;
}

static int check_port(const char *s, char **out, const char **why)
{
    return rf_net_port_check(s, why) < 0 ? -1 : (*out = strdup(s)) ? 0 : -1;
}

static int net_list(rf_resolver *r, const char *key, check_fn check, const char *hint, char ***out)
{
    char path[64];
    snprintf(path, sizeof path, "network.%s", key);
    const json_t *list = rf_json_path_get(r->tree, path);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        const char *s = json_string_value(v), *why = NULL;
        char *norm = NULL, at[100];
        snprintf(at, sizeof at, "%s[%zu]", path, i);
        if (check(s, &norm, &why) < 0) {
            free(norm);
            rf_resolve_fail(r, at, "\"%s\": %s", s, why ? why : "out of memory");
            return rf_error_hint_set(r->err, "%s", hint);
        }
        if (rf_strv_push_unique(out, norm) < 0) {
            free(norm);
            return rf_error_set(r->err, ENOMEM, "%s", path);
        }
        free(norm);
    }
    return 0;
}

/* hosts is an object {name: address}; kept as "name=address". */
static int net_hosts(rf_resolver *r, rf_net_policy *n)
{
    const json_t *hosts = rf_json_path_get(r->tree, "network.hosts");
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)hosts, name, v) {
        char *spec = NULL, *norm = NULL, at[300];
        const char *why = NULL;
        snprintf(at, sizeof at, "network.hosts.%s", name);
        if (asprintf(&spec, "%s=%s", name, json_string_value(v)) < 0)
            return rf_error_set(r->err, ENOMEM, "network.hosts");
        int rc = rf_net_host_normalise(spec, &norm, &why);
        free(spec);
        if (rc < 0) {
            rf_resolve_fail(r, at, "%s", why);
            return rf_error_hint_set(r->err, "map a host name to an IP address, e.g. api.test: 127.0.0.1");
        }
        /* A later layer's mapping for the same name wins. */
        size_t nl = strcspn(norm, "=");
        for (size_t i = 0; n->hosts && n->hosts[i]; i++)
            if (!strncmp(n->hosts[i], norm, nl + 1)) {
                free(n->hosts[i]);
                n->hosts[i] = norm;
                norm = NULL;
            }
        if (norm && rf_strv_push_take(&n->hosts, norm) < 0)
            return rf_error_set(r->err, ENOMEM, "network.hosts");
    }
    return 0;
}

static int check_publish(const char *s, char **out, const char **why)
{
    return rf_net_publish_normalise(s, out, why);
}

int rf_resolve_network(rf_resolver *r, rf_policy *p)
{
    static const char *const modes[] = { "none", "host", "allowlist", NULL };
    const char *mode = json_string_value(rf_json_path_get(r->tree, "network.mode"));
    p->network_given = rf_json_path_get(r->tree, "network") != NULL;
    for (int i = 0; mode && modes[i]; i++)
        if (!strcmp(mode, modes[i]))
            p->network = (rf_net_mode)i;
    rf_net_policy *n = &p->net;
    const json_t *priv = rf_json_path_get(r->tree, "network.allow_private_addresses");
    if (json_is_boolean(priv))
        n->allow_private_addresses = json_is_true(priv);
    if (net_list(r, "allow_domains", check_pattern,
                 "write names like api.example.com, *.example.com (its subdomains) or 10.0.0.5, "
                 "each optionally with :PORT",
                 &n->allow_domains) < 0 ||
        net_list(r, "deny_domains", check_pattern, "write names like evil.example.com or *.example.com",
                 &n->deny_domains) < 0 ||
        net_list(r, "allow_ports", check_port, "list ports as numbers, e.g. [80, 443]", &n->allow_ports) < 0 ||
        net_list(r, "publish", check_publish, "write [HOST_ADDR:]HOST_PORT:SANDBOX_PORT, e.g. 8080:3000",
                 &n->publish) < 0 ||
        net_hosts(r, n) < 0)
        return -1;
    if (!n->allow_ports && (rf_strv_push(&n->allow_ports, "80") < 0 || rf_strv_push(&n->allow_ports, "443") < 0))
        return rf_error_set(r->err, ENOMEM, "network.allow_ports");
    if (rf_resolve_routes(r, n) < 0 || rf_resolve_ask(r, p) < 0)
        return -1;
    /* Published ports and routes are served by the proxy: with no network
     * otherwise, that is an allowlist that allows no name. */
    if ((n->publish || n->routes) && p->network == RF_NET_NONE)
        p->network = RF_NET_ALLOWLIST;
    if (n->routes && p->network == RF_NET_HOST) {
        rf_resolve_fail(r, "network.routes", "the sandbox shares the host's network (network: host): a route's "
                                             "credential would be one request away from any server");
        return rf_error_hint_set(r->err, "use --network allowlist (the default with --route)");
    }
    if (n->publish && p->network == RF_NET_HOST) {
        rf_resolve_fail(r, "network.publish", "the sandbox shares the host's network (network: host), so there "
                                              "is nothing to publish");
        return rf_error_hint_set(r->err, "drop --publish (the server's port is on the host already), or use "
                                         "--network none or allowlist");
    }
    return 0;
}
