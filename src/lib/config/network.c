/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `network` is an object ({mode, allow_domains, ...}); the string form of
 * earlier versions and of the compat readers ("network": "host") is short
 * for {"mode": "host"}. Ports may be written as numbers. Rewritten in each
 * layer before the schema check, so merging, explain and errors see one
 * shape. */
#include "config/config.h"

#include <stdio.h>

static void normalise_ports(json_t *net)
{
    json_t *ports = json_object_get(net, "allow_ports");
    size_t i;
    json_t *v;
    json_array_foreach(ports, i, v) {
        if (!json_is_integer(v))
            continue;
        char buf[24];
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        json_array_set_new(ports, i, json_string(buf));
    }
}

static void normalise_one(json_t *policy)
{
    if (!json_is_object(policy))
        return;
    json_t *net = json_object_get(policy, "network");
    if (json_is_string(net)) {
        json_object_set_new(policy, "network", json_pack("{s:O}", "mode", net));
        return;
    }
    if (json_is_object(net))
        normalise_ports(net);
}

void rf_config_normalise_network(json_t *root)
{
    normalise_one(root);
    json_t *agents = json_object_get(root, "agents");
    normalise_one(json_object_get(agents, "defaults"));
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(agents, "list"), i, a)
        normalise_one(a);
}
