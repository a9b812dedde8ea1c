/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An instance's own network settings (mode, allowed and denied names,
 * ports, hosts, published ports), stored with it at creation from the
 * policy of the create (or of the first `run --instance`). A later run
 * that names network settings of its own may only narrow them, as an
 * untrusted workspace file may only tighten the policy: a looser setting
 * is refused by name; a run that names none gets the stored ones. */
#include "instance/instance.h"
#include "model/policy.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *rf_instance_net_capture(const rf_policy *p)
{
    if (p->network == RF_NET_NONE && !p->net.publish && !p->net.allow_domains)
        return NULL;
    return rf_net_policy_json(p->network, &p->net);
}

static int rank(rf_net_mode m)
{
    return m == RF_NET_NONE ? 0 : m == RF_NET_ALLOWLIST ? 1 : 2;
}

static rf_net_mode mode_of(const json_t *net)
{
    const char *m = json_string_value(json_object_get(net, "mode"));
    return m && !strcmp(m, "host") ? RF_NET_HOST : m && !strcmp(m, "allowlist") ? RF_NET_ALLOWLIST : RF_NET_NONE;
}

/* The stored list `key` as a strv ("name=address" for hosts). */
static char **list_of(const json_t *net, const char *key)
{
    const json_t *v = json_object_get(net, key);
    char **out = NULL;
    size_t i;
    const char *name;
    json_t *it;
    if (json_is_array(v)) {
        json_array_foreach(v, i, it)
            if (json_is_string(it) && rf_strv_push(&out, json_string_value(it)) < 0)
                break;
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, name, it) {
            char *kv = NULL;
            if (json_is_string(it) && asprintf(&kv, "%s=%s", name, json_string_value(it)) >= 0)
                rf_strv_push_take(&out, kv);
        }
    }
    return out;
}

/* The stored credential routes, back in the policy's canonical form (the
 * resolver's: compact, keys sorted); they hold header sources, no value. */
static char **routes_of(const json_t *net)
{
    const json_t *v = json_object_get(net, "routes");
    char **out = NULL;
    size_t i;
    json_t *it;
    json_array_foreach(v, i, it) {
        char *s = json_is_object(it) ? json_dumps(it, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (s && rf_strv_push_take(&out, s) < 0)
            break;
    }
    return out;
}

static int refuse(const char *name, const char *key, const char *value, rf_error **err)
{
    rf_error_set(err, 0, "instance %s: network.%s: %s is not in the instance's network settings, and a "
                             "run may only narrow them", name, key, value);
    return rf_error_hint_set(err, "see them with `ringfence instance show %s`; run without that setting, or "
                                  "create the instance again with it", name);
}

/* Every entry of the run's list must be one of the instance's. */
static int subset(const char *name, const char *key, char *const *run, const json_t *net, rf_error **err)
{
    char **stored = list_of(net, key);
    int rc = 0;
    for (size_t i = 0; rc == 0 && run && run[i]; i++)
        if (!rf_strv_contains(stored, run[i]))
            rc = refuse(name, key, run[i], err);
    rf_strv_free(stored);
    return rc;
}

static int replace(char ***dst, char **src)
{
    rf_strv_free(*dst);
    *dst = src;
    return 0;
}

int rf_instance_net_apply(rf_policy *p, const rf_instance *in, rf_error **err)
{
    const json_t *net = in->network;
    if (!net)
        return 0;
    rf_net_policy *n = &p->net;
    if (!p->network_given) { /* the run named none: the instance's own */
        p->network = mode_of(net);
        n->allow_private_addresses = json_is_true(json_object_get(net, "allow_private_addresses"));
        replace(&n->allow_domains, list_of(net, "allow_domains"));
        replace(&n->deny_domains, list_of(net, "deny_domains"));
        replace(&n->allow_ports, list_of(net, "allow_ports"));
        replace(&n->hosts, list_of(net, "hosts"));
        replace(&n->publish, list_of(net, "publish"));
        replace(&n->routes, routes_of(net));
        return 0;
    }
    if (rank(p->network) > rank(mode_of(net)))
        return refuse(in->name, "mode", rf_net_mode_name(p->network), err);
    if (n->allow_private_addresses && !json_is_true(json_object_get(net, "allow_private_addresses")))
        return refuse(in->name, "allow_private_addresses", "true", err);
    if (p->network == RF_NET_ALLOWLIST && mode_of(net) == RF_NET_ALLOWLIST &&
        (subset(in->name, "allow_domains", n->allow_domains, net, err) < 0 ||
         subset(in->name, "allow_ports", n->allow_ports, net, err) < 0 ||
         subset(in->name, "hosts", n->hosts, net, err) < 0))
        return -1;
    if (subset(in->name, "publish", n->publish, net, err) < 0)
        return -1;
    /* Denials only narrow: the instance's stay, the run's are added. */
    char **deny = list_of(net, "deny_domains");
    for (size_t i = 0; deny && deny[i]; i++)
        if (rf_strv_push_unique(&n->deny_domains, deny[i]) < 0) {
            rf_strv_free(deny);
            return rf_error_set(err, ENOMEM, "instance");
        }
    rf_strv_free(deny);
    return 0;
}
