/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* network: allowlist, the pure parts: pattern syntax, the verdict on a
 * name (wildcards, ports, deny over allow), which addresses count as
 * private, host mappings and publications, and the request parsers. */
#include "tap.h"
#include "net/net.h"
#include "util/strv.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **strv(const char *a, const char *b, const char *c)
{
    char **v = calloc(1, sizeof *v);
    const char *in[] = { a, b, c };
    for (int i = 0; i < 3; i++)
        if (in[i])
            rf_strv_push(&v, in[i]);
    return v;
}

static void test_patterns(void)
{
    const char *good[] = { "example.com", "*.example.com", "api.example.com:8443", "10.0.0.5", "[::1]:443",
                           "::1", "xn--bcher-kva.example", "a_b.internal" };
    const char *bad[] = { "", "exa mple.com", "*.", "*.*.com", "example..com", ".example.com", "example.com:0",
                          "example.com:65536", "example.com:x", "*.10.0.0.5", "http://example.com", "a/b",
                          "[::1", "example.com:80:90" };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ok(rf_net_pattern_check(good[i], NULL) == 0, good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why = NULL;
        ok(rf_net_pattern_check(bad[i], &why) < 0 && why, bad[i]);
    }
}

static void test_verdicts(void)
{
    rf_net_policy pol = { .allow_domains = strv("*.example.com", "api.test", "pinned.test:8443"),
                          .deny_domains = strv("bad.example.com", NULL, NULL),
                          .allow_ports = strv("80", "443", NULL) };
    rf_net_rules r;
    ok(rf_net_rules_build(&pol, &r) == 0, "rules build");
    ok(rf_net_check_name(&r, "a.example.com", 443) == NULL, "wildcard: a subdomain");
    ok(rf_net_check_name(&r, "a.b.example.com", 80) == NULL, "wildcard: a deeper subdomain");
    ok(rf_net_check_name(&r, "example.com", 443) != NULL, "wildcard: not the domain itself");
    ok(rf_net_check_name(&r, "evil-example.com", 443) != NULL, "wildcard: not evil-example.com");
    ok(rf_net_check_name(&r, "example.com.evil.test", 443) != NULL, "wildcard: not a suffix trick");
    ok(rf_net_check_name(&r, "xexample.com", 443) != NULL, "wildcard: not xexample.com");
    is_str(rf_net_check_name(&r, "bad.example.com", 443), "in deny_domains", "deny wins over a wildcard");
    ok(rf_net_check_name(&r, "api.test", 443) == NULL, "exact name");
    ok(rf_net_check_name(&r, "x.api.test", 443) != NULL, "exact name: no subdomains");
    is_str(rf_net_check_name(&r, "api.test", 25), "port not in allow_ports", "port outside allow_ports");
    ok(rf_net_check_name(&r, "pinned.test", 8443) == NULL, "a name:port pattern allows its port");
    ok(rf_net_check_name(&r, "pinned.test", 443) != NULL, "...and only that port");
    is_str(rf_net_check_name(&r, "10.0.0.5", 443), "IP address not in allow_domains", "IP literal not listed");
    rf_net_rules_clear(&r);
    rf_strv_free(pol.allow_domains);
    rf_strv_free(pol.deny_domains);
    rf_strv_free(pol.allow_ports);
}

static bool priv(const char *addr)
{
    struct sockaddr_storage ss = { 0 };
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1)
        a4->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1)
        a6->sin6_family = AF_INET6;
    return rf_net_addr_is_private((struct sockaddr *)&ss);
}

static void test_private(void)
{
    const char *private[] = { "127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255",
                              "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
                              "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12::1",
                              "::ffff:127.0.0.1", "::ffff:169.254.169.254", "ff02::1" };
    const char *public[] = { "93.184.216.34", "8.8.8.8", "172.32.0.1", "192.169.0.1", "100.128.0.1",
                             "2606:4700::1111", "::ffff:8.8.8.8" };
    for (size_t i = 0; i < sizeof private / sizeof private[0]; i++)
        ok(priv(private[i]), private[i]);
    for (size_t i = 0; i < sizeof public / sizeof public[0]; i++)
        ok(!priv(public[i]), public[i]);
}

static void test_hosts_publish(void)
{
    char *out = NULL;
    ok(rf_net_host_normalise("API.test:127.0.0.1", &out, NULL) == 0 && !strcmp(out, "api.test=127.0.0.1"),
       "host mapping normalised");
    free(out);
    out = NULL;
    ok(rf_net_host_normalise("v6.test:[::1]", &out, NULL) == 0 && !strcmp(out, "v6.test=::1"), "v6 mapping");
    free(out);
    ok(rf_net_host_normalise("x.test:nothost", NULL, NULL) < 0, "mapping to a name is refused");
    ok(rf_net_host_normalise("bad name:1.2.3.4", NULL, NULL) < 0, "bad name refused");
    out = NULL;
    ok(rf_net_publish_normalise("8080:3000", &out, NULL) == 0 && !strcmp(out, "127.0.0.1:8080:3000"),
       "publish defaults to 127.0.0.1");
    free(out);
    out = NULL;
    ok(rf_net_publish_normalise("0.0.0.0:80:8000", &out, NULL) == 0 && !strcmp(out, "0.0.0.0:80:8000"),
       "publish with an address");
    free(out);
    ok(rf_net_publish_normalise("8080", NULL, NULL) < 0, "publish needs two ports");
    ok(rf_net_publish_normalise("x:1:2", NULL, NULL) < 0, "publish address must be an IP");
    ok(rf_net_publish_normalise("1:70000", NULL, NULL) < 0, "publish port range");
}

static void test_http(void)
{
    rf_net_request q;
    const char *c = "CONNECT API.Example.com:443 HTTP/1.1\r\nHost: x\r\n\r\nTLS";
    ok(rf_net_parse_http(c, strlen(c), &q) == RF_NET_PARSE_OK, "CONNECT parses");
    ok(q.kind == RF_NET_HTTP_CONNECT && !strcmp(q.host, "api.example.com") && q.port == 443, "CONNECT target");
    is_int((int)q.consumed, (int)strlen(c) - 3, "the head ends before the tunnel's bytes");
    rf_net_request_clear(&q);
    ok(rf_net_parse_http(c, 20, &q) == RF_NET_PARSE_MORE, "a partial head wants more");
    const char *g = "GET http://h.test:8080/a?b HTTP/1.1\r\nHost: h.test\r\nProxy-Authorization: x\r\n"
                    "Proxy-Connection: keep-alive\r\n\r\n";
    ok(rf_net_parse_http(g, strlen(g), &q) == RF_NET_PARSE_OK && q.kind == RF_NET_HTTP_FORWARD, "GET parses");
    ok(!strcmp(q.host, "h.test") && q.port == 8080, "GET target");
    const char *want = "GET /a?b HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n\r\n";
    ok(q.forward && q.forward_len == strlen(want) && !strncmp(q.forward, want, q.forward_len),
       "origin-form, Proxy-* headers dropped, Connection: close");
    rf_net_request_clear(&q);
    const char *ka = "GET http://h.test/ HTTP/1.1\r\nConnection: keep-alive\r\nKeep-Alive: 5\r\n\r\n";
    ok(rf_net_parse_http(ka, strlen(ka), &q) == RF_NET_PARSE_OK && q.forward &&
           !strncmp(q.forward, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n", q.forward_len),
       "the client's keep-alive is replaced by close");
    rf_net_request_clear(&q);
    const char *d = "GET http://h.test HTTP/1.1\r\n\r\n";
    ok(rf_net_parse_http(d, strlen(d), &q) == RF_NET_PARSE_OK && q.port == 80 && !strncmp(q.forward, "GET / ", 6),
       "default port 80 and path /");
    rf_net_request_clear(&q);
    const char *v6 = "CONNECT [::1]:443 HTTP/1.1\r\n\r\n";
    ok(rf_net_parse_http(v6, strlen(v6), &q) == RF_NET_PARSE_OK && !strcmp(q.host, "::1"), "v6 literal");
    rf_net_request_clear(&q);
    const char *bads[] = { "GET / HTTP/1.1\r\n\r\n", "CONNECT host HTTP/1.1\r\n\r\n",
                           "GET https://h.test/ HTTP/1.1\r\n\r\n", "GET http://u:p@h.test/ HTTP/1.1\r\n\r\n",
                           "CONNECT h.test:443 HTTP/1.1\nHost: x\n\n", "get http://h.test/ HTTP/1.1\r\n\r\n",
                           "CONNECT h.test:0 HTTP/1.1\r\n\r\n", "CONNECT h\x01.test:1 HTTP/1.1\r\n\r\n",
                           "CONNECT [h.test]:1 HTTP/1.1\r\n\r\n", "CONNECT h.test:1 FTP/1.0\r\n\r\n" };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        char desc[80];
        snprintf(desc, sizeof desc, "refused: %.*s", (int)strcspn(bads[i], "\r\n"), bads[i]);
        for (char *x = desc; *x; x++)
            if (!isprint((unsigned char)*x))
                *x = '?';
        ok(rf_net_parse_http(bads[i], strlen(bads[i]), &q) == RF_NET_PARSE_BAD && q.error, desc);
        rf_net_request_clear(&q);
    }
    char big[RF_NET_HEAD_MAX];
    memset(big, 'a', sizeof big);
    ok(rf_net_parse_http(big, sizeof big, &q) == RF_NET_PARSE_BAD && q.http_status == 431, "head too large");
    rf_net_request_clear(&q);
}

static void test_socks(void)
{
    size_t used;
    bool no_auth;
    const unsigned char g1[] = { 5, 2, 2, 0 };
    ok(rf_net_parse_socks_greeting(g1, sizeof g1, &used, &no_auth) == RF_NET_PARSE_OK && no_auth && used == 4,
       "greeting offering no-auth");
    const unsigned char g2[] = { 5, 1, 2 };
    ok(rf_net_parse_socks_greeting(g2, sizeof g2, &used, &no_auth) == RF_NET_PARSE_OK && !no_auth,
       "greeting without no-auth");
    ok(rf_net_parse_socks_greeting(g2, 2, &used, &no_auth) == RF_NET_PARSE_MORE, "partial greeting");
    const unsigned char g3[] = { 4, 1, 0 };
    ok(rf_net_parse_socks_greeting(g3, sizeof g3, &used, &no_auth) == RF_NET_PARSE_BAD, "SOCKS4 refused");
    rf_net_request q;
    int code;
    const unsigned char r1[] = { 5, 1, 0, 3, 6, 'A', '.', 'T', 'e', 's', 't', 1, 187 };
    ok(rf_net_parse_socks_request(r1, sizeof r1, &q, &code) == RF_NET_PARSE_OK && !strcmp(q.host, "a.test") &&
           q.port == 443,
       "CONNECT by name");
    const unsigned char r2[] = { 5, 1, 0, 1, 127, 0, 0, 1, 0, 80 };
    ok(rf_net_parse_socks_request(r2, sizeof r2, &q, &code) == RF_NET_PARSE_OK && !strcmp(q.host, "127.0.0.1"),
       "CONNECT by IPv4");
    const unsigned char r3[] = { 5, 2, 0, 1, 127, 0, 0, 1, 0, 80 };
    ok(rf_net_parse_socks_request(r3, sizeof r3, &q, &code) == RF_NET_PARSE_BAD && code == 7, "BIND refused");
    const unsigned char r4[] = { 5, 3, 0, 1, 127, 0, 0, 1, 0, 80 };
    ok(rf_net_parse_socks_request(r4, sizeof r4, &q, &code) == RF_NET_PARSE_BAD && code == 7,
       "UDP ASSOCIATE refused");
    const unsigned char r5[] = { 5, 1, 0, 3, 3, 'a', ':', 'b', 0, 80 };
    ok(rf_net_parse_socks_request(r5, sizeof r5, &q, &code) == RF_NET_PARSE_BAD, "colon in a SOCKS name");
    ok(rf_net_parse_socks_request(r1, 8, &q, &code) == RF_NET_PARSE_MORE, "partial request");
}

int main(void)
{
    test_patterns();
    test_verdicts();
    test_private();
    test_hosts_publish();
    test_http();
    test_socks();
    return done_testing();
}
