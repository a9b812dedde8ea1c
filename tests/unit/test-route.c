/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Credential routes' pure parts: the request parser (what it refuses is
 * what request smuggling needs), the chunked decoder, path safety, URLs,
 * header sources, rules and presets. */
#include "net/route.h"
#include "tap.h"

static int req(const char *head, rf_route_req *q)
{
    return rf_route_parse_request(head, strlen(head), q);
}

static void test_request(void)
{
    rf_route_req q;
    is_int(req("POST /route/api/v1/messages?beta=1 HTTP/1.1\r\nHost: x\r\nx-api-key: p\r\nContent-Length: 5\r\n\r\n",
               &q), 1, "a request head parses");
    ok(q.name_len == 3 && !strncmp(q.name, "api", 3), "its route's name");
    ok(q.path_len == 19 && !strncmp(q.path, "/v1/messages?beta=1", 19), "its path, query kept");
    ok(q.body == RF_BODY_LENGTH && q.length == 5 && q.keep_alive, "Content-Length framing, kept alive");
    is_int(q.n_fields, 1, "Host and Content-Length are not forwarded as they came");
    is_int(req("GET /route/api/v1/x HTTP/1.1\r\nHost: x", &q), 0, "an unfinished head asks for more");
    is_int(req("GET /route/api HTTP/1.0\r\n\r\n", &q), 1, "HTTP/1.0, no path");
    ok(!q.keep_alive && q.path_len == 0, "HTTP/1.0 closes; the path is empty");
    ok(q.http10, "HTTP/1.0 is marked (forwarded as 1.0)");
    is_int(req("GET /route/api HTTP/1.1\r\n\r\n", &q), 1, "HTTP/1.1");
    ok(!q.http10, "...is not");
    static const struct { const char *head; int status; const char *desc; } bad[] = {
        { "POST /route/a/x HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "CL + TE" },
        { "POST /route/a/x HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\n", 400, "two CL" },
        { "POST /route/a/x HTTP/1.1\r\nContent-Length: 4, 4\r\n\r\n", 400, "a CL list" },
        { "POST /route/a/x HTTP/1.1\r\nContent-Length: +4\r\n\r\n", 400, "a signed CL" },
        { "POST /route/a/x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400, "a TE list" },
        { "POST /route/a/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
          "two TE" },
        { "POST /route/a/x HTTP/1.1\r\nX: 1\r\n Transfer-Encoding: chunked\r\n\r\n", 400, "obs-fold" },
        { "POST /route/a/x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "TE in HTTP/1.0" },
        { "POST /route/a/x HTTP/1.1\r\nContent-Length : 4\r\n\r\n", 400, "space before the colon" },
        { "POST /route/a/x HTTP/1.1\nX: 1\n\n", 400, "bare LF" },
        { "POST /route/a/x HTTP/1.1\r\nX: a\vb\r\n\r\n", 400, "a control byte in a value" },
        { "GET /route/a/x/../y HTTP/1.1\r\n\r\n", 400, "a dot segment" },
        { "GET /route/a/x/%2E%2e/y HTTP/1.1\r\n\r\n", 400, "an encoded dot segment" },
        { "GET /route/a/x%2fy HTTP/1.1\r\n\r\n", 400, "an encoded slash" },
        { "GET /elsewhere HTTP/1.1\r\n\r\n", 404, "not a route" },
        { "GET /route/a/x HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", 400, "an upgrade" },
        { "GET /route/a/x HTTP/1.1\r\nExpect: something\r\n\r\n", 417, "an unknown expectation" },
        { "GET /route/a/x HTTP/2.0\r\n\r\n", 400, "HTTP/2 in a 1.1 head" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = req(bad[i].head, &q);
        char desc[128];
        snprintf(desc, sizeof desc, "refused: %s (%d)", bad[i].desc, bad[i].status);
        ok(rc == -1 && q.status == bad[i].status, desc);
    }
    char big[RF_ROUTE_HEAD_MAX + 64];
    snprintf(big, sizeof big, "GET /route/a/x HTTP/1.1\r\nX: ");
    memset(big + strlen(big), 'a', RF_ROUTE_HEAD_MAX);
    big[sizeof big - 1] = '\0';
    ok(req(big, &q) == -1 && q.status == 431, "a head over 16 KiB: 431");
}

static void test_chunked(void)
{
    const char body[] = "5\r\nhello\r\n3;x=1\r\nabc\r\n0\r\nT: 1\r\n\r\nNEXT";
    rf_chunked c = { 0 };
    ssize_t n = 0;
    for (size_t i = 0; i < sizeof body - 1 && !c.done; i++)
        n += rf_chunked_feed(&c, body + i, 1);
    ok(c.done && n == (ssize_t)(sizeof body - 1 - 4), "a chunked body fed byte by byte ends before NEXT");
    rf_chunked d = { 0 };
    is_int(rf_chunked_feed(&d, "zz\r\n", 4), -1, "a size that is not hex is refused");
    rf_chunked e = { 0 };
    is_int(rf_chunked_feed(&e, "5\r\nhelloXX", 10), -1, "data not followed by CRLF is refused");
    rf_chunked f = { 0 };
    is_int(rf_chunked_feed(&f, "1000000000000000\r\n", 18), -1, "a size over 15 hex digits is refused");
}

static void test_response(void)
{
    rf_route_resp r;
    const char *h = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n";
    ok(rf_route_parse_response(h, strlen(h), false, &r) == 1 && r.body == RF_BODY_CHUNKED, "chunked wins over CL");
    h = "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n";
    ok(rf_route_parse_response(h, strlen(h), false, &r) == 1 && r.body == RF_BODY_NONE, "204 has no body");
    h = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
    ok(rf_route_parse_response(h, strlen(h), true, &r) == 1 && r.body == RF_BODY_NONE, "a HEAD's answer has none");
    h = "HTTP/1.1 200 OK\r\n\r\n";
    ok(rf_route_parse_response(h, strlen(h), false, &r) == 1 && r.body == RF_BODY_CLOSE, "no framing: until close");
    h = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n";
    is_int(rf_route_parse_response(h, strlen(h), false, &r), -1, "two lengths in a response: refused");
}

static void test_settings(void)
{
    rf_route_url u;
    const char *why;
    ok(rf_route_url_parse("https://api.example.com:8443/v1/", &u, &why) == 0 && u.tls && u.port == 8443 &&
           !strcmp(u.prefix, "/v1") && !strcmp(u.host, "api.example.com"),
       "an https URL with a port and a prefix");
    ok(rf_route_url_parse("https://user:pw@x.com", &u, &why) < 0, "credentials in the URL refused");
    ok(rf_route_url_parse("https://x.com/a/../b", &u, &why) < 0, "a dot segment in the prefix refused");
    ok(rf_route_url_parse("ftp://x.com", &u, &why) < 0, "another scheme refused");
    ok(rf_route_check_source("env:ANTHROPIC_API_KEY", &why) == 0, "env: source");
    ok(rf_route_check_source("bearer:file:/home/u/key", &why) == 0, "bearer:file: source");
    ok(rf_route_check_source("basic:x-access-token:cmd:gh auth token", &why) == 0, "basic:USER:cmd: source");
    ok(rf_route_check_source("file:relative", &why) < 0, "a relative file refused");
    ok(rf_route_check_source("literal-secret", &why) < 0, "a literal value refused (it would be in the policy)");
    ok(rf_route_check_header_name("x-api-key", &why) == 0, "a header name");
    ok(rf_route_check_header_name("x-a\r\nb", &why) < 0, "CR LF in a header name refused");
    ok(rf_route_check_header_name("Host", &why) < 0, "Host is the proxy's own");
    ok(rf_route_check_rule("POST /v1/messages*", &why) == 0 && rf_route_check_rule("* /v1/*", &why) == 0,
       "rules");
    ok(rf_route_check_rule("post /v1", &why) < 0 && rf_route_check_rule("GET v1", &why) < 0, "bad rules refused");
    ok(rf_route_check_name("my-api2", &why) == 0 && rf_route_check_name("My_Api", &why) < 0, "route names");
    char var[64];
    rf_route_env_name("my-api", var, sizeof var);
    ok(!strcmp(var, "RINGFENCE_ROUTE_MY_API_URL"), "RINGFENCE_ROUTE_<NAME>_URL: upper case, '-' as '_'");
    ok(rf_route_preset_find("anthropic") && !rf_route_preset_find("anthropik"), "presets");
    ok(rf_route_preset_suggest("antropic") && !strcmp(rf_route_preset_suggest("antropic"), "anthropic"),
       "did you mean anthropic");
    rf_route r = { .name = (char *)"a" };
    char *allow[] = { (char *)"POST /v1/messages*", (char *)"GET /*/info/refs", NULL };
    r.allow = allow;
    ok(!rf_route_check(&r, "POST", 4, "/v1/messages?x", 14), "a rule allows its method and path");
    ok(!rf_route_check(&r, "GET", 3, "/o/r.git/info/refs?service=git-upload-pack", 42), "'*' spans '/'");
    ok(rf_route_check(&r, "GET", 3, "/v1/messages", 12) != NULL, "another method is refused");
    ok(rf_route_check(&r, "POST", 4, "/v1/files", 9) != NULL, "another path is refused");
}

int main(void)
{
    test_request();
    test_chunked();
    test_response();
    test_settings();
    printf("1..%d\n", tap_n);
    return tap_failed != 0;
}
