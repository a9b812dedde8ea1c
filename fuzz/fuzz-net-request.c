/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proxy's request parsers (net/request.c) and the name verdict
 * (net/rules.c) on hostile bytes: never read out of bounds, never accept a
 * host that the rules' alphabet would refuse, and the forwarded head never
 * grows beyond the original. The first byte picks the parser. */
#include "net/net.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_host(const rf_net_request *q)
{
    for (const char *c = q->host; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("-._:", *c))
            abort();
    if (q->port == 0)
        abort();
}

static void verdict(const rf_net_request *q)
{
    static rf_net_rules rules;
    static int built;
    if (!built) {
        char *allow[] = { (char *)"*.example.com", (char *)"api.test:8443", NULL };
        char *ports[] = { (char *)"80", (char *)"443", NULL };
        rf_net_policy p = { .allow_domains = allow, .allow_ports = ports };
        built = rf_net_rules_build(&p, &rules) == 0 ? 1 : -1;
    }
    if (built == 1)
        (void)rf_net_check_name(&rules, q->host, q->port);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    rf_net_request q;
    int code;
    size_t used;
    bool no_auth;
    if (data[0] & 1) {
        char *buf = malloc(size);
        if (!buf)
            return 0;
        memcpy(buf, data + 1, size - 1);
        if (rf_net_parse_http(buf, size - 1, &q) == RF_NET_PARSE_OK) {
            check_host(&q);
            if (q.consumed > size - 1 || (q.forward && q.forward_len > q.consumed + 1 + 19))
                abort();
            verdict(&q);
        }
        rf_net_request_clear(&q);
        free(buf);
    } else if (rf_net_parse_socks_greeting(data + 1, size - 1, &used, &no_auth) == RF_NET_PARSE_OK) {
        if (used > size - 1)
            abort();
        if (rf_net_parse_socks_request(data + 1 + used, size - 1 - used, &q, &code) == RF_NET_PARSE_OK) {
            check_host(&q);
            verdict(&q);
        }
    }
    return 0;
}
