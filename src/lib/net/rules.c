/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The allowlist: syntax checks for the resolver, the parsed rules, and the
 * two verdicts the proxy needs: on the name the client asked for, and on
 * the addresses that name resolved to. */
#include "net/net.h"
#include "util/strv.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char **why, const char *text)
{
    if (why)
        *why = text;
    return -1;
}

/* 1..65535, decimal, no sign or spaces. */
int rf_net_parse_port(const char *s, size_t len, uint16_t *out)
{
    if (len == 0 || len > 5)
        return -1;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v == 0 || v > 65535)
        return -1;
    *out = (uint16_t)v;
    return 0;
}

int rf_net_port_check(const char *s, const char **why)
{
    uint16_t p;
    return rf_net_parse_port(s, strlen(s), &p) < 0 ? fail(why, "expected a port from 1 to 65535") : 0;
}

bool rf_net_is_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* One spelling per address ("0:0::1" and "::1" are the same rule). */
void rf_net_ip_canonical(char *host, size_t size)
{
    unsigned char buf[sizeof(struct in6_addr)];
    int af = inet_pton(AF_INET, host, buf) == 1 ? AF_INET : inet_pton(AF_INET6, host, buf) == 1 ? AF_INET6 : 0;
    char out[INET6_ADDRSTRLEN];
    if (af && inet_ntop(af, buf, out, sizeof out) && strlen(out) < size)
        strcpy(host, out);
}

/* Letters, digits and hyphens in labels of 1..63, 253 in all; or an IP
 * literal (v6 in brackets when followed by a port). */
static bool name_ok(const char *s, size_t len)
{
    if (len == 0 || len > RF_NET_NAME_MAX)
        return false;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (label == 0)
                return false;
            label = 0;
        } else if (isalnum((unsigned char)c) || c == '-' || c == '_') {
            if (++label > 63)
                return false;
        } else {
            return false;
        }
    }
    return label > 0;
}

/* Split "host[:port]" / "[v6][:port]" / "v6": host copied into buf. */
static int split_host_port(const char *s, char *buf, size_t size, uint16_t *port)
{
    const char *host = s, *colon = NULL;
    size_t hlen;
    *port = 0;
    if (s[0] == '[') {
        const char *end = strchr(s, ']');
        if (!end)
            return -1;
        host = s + 1;
        hlen = (size_t)(end - host);
        if (end[1] == ':')
            colon = end + 1;
        else if (end[1])
            return -1;
    } else {
        colon = strrchr(s, ':');
        if (colon && strchr(s, ':') != colon)
            colon = NULL; /* a bare v6 literal */
        hlen = colon ? (size_t)(colon - s) : strlen(s);
    }
    if (colon && rf_net_parse_port(colon + 1, strlen(colon + 1), port) < 0)
        return -1;
    if (hlen == 0 || hlen >= size)
        return -1;
    for (size_t i = 0; i < hlen; i++)
        buf[i] = (char)tolower((unsigned char)host[i]);
    buf[hlen] = '\0';
    if (hlen > 1 && buf[hlen - 1] == '.' && !rf_net_is_ip_literal(buf))
        buf[hlen - 1] = '\0';
    return 0;
}

static int pattern_parse(const char *s, rf_net_pattern *out)
{
    char host[RF_NET_NAME_MAX + 2];
    uint16_t port;
    if (split_host_port(s, host, sizeof host, &port) < 0)
        return -1;
    bool wildcard = !strncmp(host, "*.", 2);
    const char *name = wildcard ? host + 2 : host;
    if (!rf_net_is_ip_literal(name) && !name_ok(name, strlen(name)))
        return -1;
    if (wildcard && rf_net_is_ip_literal(name))
        return -1;
    rf_net_ip_canonical(host, sizeof host);
    if (out) {
        out->name = strdup(name);
        out->wildcard = wildcard;
        out->port = port;
        if (!out->name)
            return -1;
    }
    return 0;
}

int rf_net_pattern_check(const char *s, const char **why)
{
    return pattern_parse(s, NULL) < 0
               ? fail(why, "expected a name (api.example.com), a wildcard for its subdomains "
                           "(*.example.com) or an IP address, each optionally with :PORT")
               : 0;
}

static int addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, s, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        *len = sizeof *a4;
        return 0;
    }
    if (inet_pton(AF_INET6, s, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        *len = sizeof *a6;
        return 0;
    }
    return -1;
}

/* NAME:ADDR (docker's --add-host); ADDR may be a v6 literal, so the name
 * ends at the first colon. Also accepts NAME=ADDR (the normalised form). */
int rf_net_host_normalise(const char *s, char **out, const char **why)
{
    const char *sep = strchr(s, '=');
    if (!sep)
        sep = strchr(s, ':');
    if (!sep)
        return fail(why, "expected NAME:ADDRESS, e.g. api.test:127.0.0.1");
    char name[RF_NET_NAME_MAX + 2];
    size_t n = (size_t)(sep - s);
    if (n == 0 || n > RF_NET_NAME_MAX || !name_ok(s, n))
        return fail(why, "the name must be a host name (letters, digits, '-' and '.')");
    for (size_t i = 0; i < n; i++)
        name[i] = (char)tolower((unsigned char)s[i]);
    name[n] = '\0';
    const char *addr = sep + 1;
    char bare[INET6_ADDRSTRLEN + 2];
    size_t al = strlen(addr);
    if (al >= 2 && addr[0] == '[' && addr[al - 1] == ']' && al - 2 < sizeof bare) {
        memcpy(bare, addr + 1, al - 2);
        bare[al - 2] = '\0';
        addr = bare;
    }
    struct sockaddr_storage ss;
    socklen_t len;
    if (addr_parse(addr, &ss, &len) < 0)
        return fail(why, "the address must be an IPv4 or IPv6 address");
    if (out && asprintf(out, "%s=%s", name, addr) < 0)
        return fail(why, "out of memory");
    return 0;
}

/* [HOST_ADDR:]HOST_PORT:SANDBOX_PORT; HOST_ADDR defaults to 127.0.0.1. */
int rf_net_publish_normalise(const char *s, char **out, const char **why)
{
    static const char *const syntax = "expected [HOST_ADDR:]HOST_PORT:SANDBOX_PORT, e.g. 8080:3000";
    const char *last = strrchr(s, ':');
    if (!last)
        return fail(why, syntax);
    uint16_t sport, hport;
    if (rf_net_parse_port(last + 1, strlen(last + 1), &sport) < 0)
        return fail(why, syntax);
    const char *mid = last;
    while (mid > s && mid[-1] != ':')
        mid--;
    if (rf_net_parse_port(mid, (size_t)(last - mid), &hport) < 0)
        return fail(why, syntax);
    char addr[INET6_ADDRSTRLEN + 2] = "127.0.0.1";
    if (mid > s) {
        size_t al = (size_t)(mid - 1 - s);
        const char *a = s;
        if (al >= 2 && a[0] == '[' && a[al - 1] == ']') {
            a++;
            al -= 2;
        }
        if (al == 0 || al >= sizeof addr)
            return fail(why, syntax);
        memcpy(addr, a, al);
        addr[al] = '\0';
    }
    struct sockaddr_storage ss;
    socklen_t len;
    if (addr_parse(addr, &ss, &len) < 0)
        return fail(why, "HOST_ADDR must be an IPv4 or IPv6 address (default 127.0.0.1)");
    if (out && asprintf(out, "%s:%u:%u", addr, (unsigned)hport, (unsigned)sport) < 0)
        return fail(why, "out of memory");
    return 0;
}

static int patterns_build(char *const *list, rf_net_pattern **out, size_t *n)
{
    size_t len = rf_strv_len(list);
    *out = calloc(len + 1, sizeof **out);
    if (!*out)
        return -1;
    for (*n = 0; *n < len; (*n)++)
        if (pattern_parse(list[*n], &(*out)[*n]) < 0)
            return -1;
    return 0;
}

static int hosts_build(char *const *list, rf_net_rules *r)
{
    size_t len = rf_strv_len(list);
    r->hosts = calloc(len + 1, sizeof *r->hosts);
    if (!r->hosts)
        return -1;
    for (r->n_hosts = 0; r->n_hosts < len; r->n_hosts++) {
        rf_net_host *h = &r->hosts[r->n_hosts];
        const char *eq = strchr(list[r->n_hosts], '=');
        if (!eq || !(h->name = strndup(list[r->n_hosts], (size_t)(eq - list[r->n_hosts]))) ||
            addr_parse(eq + 1, &h->addr, &h->addr_len) < 0)
            return -1;
    }
    return 0;
}

int rf_net_rules_build(const rf_net_policy *p, rf_net_rules *out)
{
    memset(out, 0, sizeof *out);
    out->allow_private = p->allow_private_addresses;
    size_t np = rf_strv_len(p->allow_ports);
    out->ports = calloc(np + 1, sizeof *out->ports);
    if (!out->ports)
        goto fail;
    for (; out->n_ports < np; out->n_ports++) {
        const char *s = p->allow_ports[out->n_ports];
        if (rf_net_parse_port(s, strlen(s), &out->ports[out->n_ports]) < 0)
            goto fail;
    }
    if (patterns_build(p->allow_domains, &out->allow, &out->n_allow) < 0 ||
        patterns_build(p->deny_domains, &out->deny, &out->n_deny) < 0 || hosts_build(p->hosts, out) < 0)
        goto fail;
    return 0;
fail:
    rf_net_rules_clear(out);
    errno = EINVAL;
    return -1;
}

void rf_net_rules_clear(rf_net_rules *r)
{
    for (size_t i = 0; r->allow && r->allow[i].name; i++)
        free(r->allow[i].name);
    for (size_t i = 0; r->deny && r->deny[i].name; i++)
        free(r->deny[i].name);
    for (size_t i = 0; r->hosts && r->hosts[i].name; i++)
        free(r->hosts[i].name);
    free(r->allow);
    free(r->deny);
    free(r->hosts);
    free(r->ports);
    memset(r, 0, sizeof *r);
}

/* "*.example.com" matches "a.example.com" and "a.b.example.com", never
 * "example.com" itself nor "evil-example.com". */
static bool name_matches(const rf_net_pattern *p, const char *host)
{
    if (!p->wildcard)
        return !strcmp(p->name, host);
    size_t hl = strlen(host), pl = strlen(p->name);
    return hl > pl + 1 && host[hl - pl - 1] == '.' && !strcmp(host + hl - pl, p->name);
}

static const rf_net_pattern *find(const rf_net_pattern *list, size_t n, const char *host, uint16_t port)
{
    for (size_t i = 0; i < n; i++)
        if (name_matches(&list[i], host) && (list[i].port == 0 || list[i].port == port))
            return &list[i];
    return NULL;
}

const char *rf_net_check_name(const rf_net_rules *r, const char *host, uint16_t port)
{
    if (find(r->deny, r->n_deny, host, port))
        return "in deny_domains";
    const rf_net_pattern *a = find(r->allow, r->n_allow, host, port);
    if (!a)
        return rf_net_is_ip_literal(host) ? "IP address not in allow_domains" : "not in allow_domains";
    if (a->port)
        return NULL; /* the pattern names its port */
    for (size_t i = 0; i < r->n_ports; i++)
        if (r->ports[i] == port)
            return NULL;
    return "port not in allow_ports";
}

const rf_net_host *rf_net_rules_host(const rf_net_rules *r, const char *host)
{
    for (size_t i = 0; i < r->n_hosts; i++)
        if (!strcmp(r->hosts[i].name, host))
            return &r->hosts[i];
    return NULL;
}

static bool v4_private(uint32_t a)
{
    static const struct { uint32_t net, mask; } nets[] = {
        { 0x00000000, 0xff000000 }, /* 0/8 "this network" */
        { 0x0a000000, 0xff000000 }, /* 10/8 */
        { 0x64400000, 0xffc00000 }, /* 100.64/10 carrier-grade NAT */
        { 0x7f000000, 0xff000000 }, /* 127/8 loopback */
        { 0xa9fe0000, 0xffff0000 }, /* 169.254/16 link-local, cloud metadata */
        { 0xac100000, 0xfff00000 }, /* 172.16/12 */
        { 0xc0000000, 0xffffff00 }, /* 192.0.0/24 IETF protocol assignments */
        { 0xc0a80000, 0xffff0000 }, /* 192.168/16 */
        { 0xc6120000, 0xfffe0000 }, /* 198.18/15 benchmarking */
        { 0xe0000000, 0xe0000000 }, /* 224/4 multicast, 240/4 reserved, broadcast */
    };
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        if ((a & nets[i].mask) == nets[i].net)
            return true;
    return false;
}

bool rf_net_addr_is_private(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return v4_private(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
    if (sa->sa_family != AF_INET6)
        return true;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
        uint32_t v4;
        memcpy(&v4, &a->s6_addr[12], 4);
        return v4_private(ntohl(v4));
    }
    const uint8_t *b = a->s6_addr;
    return IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) ||
           IN6_IS_ADDR_SITELOCAL(a) || IN6_IS_ADDR_MULTICAST(a) || (b[0] & 0xfe) == 0xfc /* fc00::/7 */ ||
           (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) /* 2001:db8::/32 doc */ ||
           (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) /* 64:ff9b::/96 NAT64 */;
}
