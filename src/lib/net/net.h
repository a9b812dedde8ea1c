/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* network: allowlist. The sandbox keeps its own network namespace with
 * loopback only; a proxy listening on the sandbox's 127.0.0.1 is the one
 * way out. Its work is done in the supervisor, in the host's network
 * namespace: it reads the client's request (HTTP CONNECT, an absolute-URI
 * HTTP request, or SOCKS5), checks the name against the rules, resolves it
 * on the host, checks the addresses, connects and relays. See docs/network.md.
 * Internal to libringfence. */
#pragma once
#include "model/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The proxy's port on the sandbox's loopback (native backend). */
#define RF_NET_PROXY_PORT 3128
#define RF_NET_NAME_MAX 253

/* ── rules.c: the allowlist, parsed once ───────────────────────────────── */

typedef struct rf_net_pattern {
    char *name;     /* lower case, no trailing dot; for a wildcard the suffix
                       without "*." (matches strict subdomains only) */
    bool wildcard;
    uint16_t port;  /* 0: any port in allow_ports */
} rf_net_pattern;

typedef struct rf_net_host {
    char *name;
    struct sockaddr_storage addr; /* port 0 */
    socklen_t addr_len;
} rf_net_host;

typedef struct rf_net_rules {
    rf_net_pattern *allow, *deny;
    size_t n_allow, n_deny;
    uint16_t *ports;
    size_t n_ports;
    rf_net_host *hosts;
    size_t n_hosts;
    bool allow_private;
} rf_net_rules;

/* Checks for the resolver: is `s` a valid domain pattern ("name",
 * "*.name", either with ":PORT"), a port, a "NAME:ADDR" host mapping, a
 * "[HOST_ADDR:]HOST_PORT:SANDBOX_PORT" publication. On error *why says what
 * is wrong (static text). Hosts and publications are normalised into *out
 * (malloc'd: "name=addr", "addr:hport:sport"). */
int rf_net_pattern_check(const char *s, const char **why);
/* s[0..len) as a port 1..65535 (decimal digits only). */
int rf_net_parse_port(const char *s, size_t len, uint16_t *out);
int rf_net_port_check(const char *s, const char **why);
int rf_net_host_normalise(const char *s, char **out, const char **why);
int rf_net_publish_normalise(const char *s, char **out, const char **why);

int rf_net_rules_build(const rf_net_policy *p, rf_net_rules *out);
void rf_net_rules_clear(rf_net_rules *r);

/* The verdict on a name the client asked for. NULL: allowed; else the
 * reason ("not in allow_domains", "in deny_domains", "port 25 not in
 * allow_ports"). `host` is lower-cased already. */
const char *rf_net_check_name(const rf_net_rules *r, const char *host, uint16_t port);
/* Is `host` an IP literal (v4 dotted quad, or v6 without brackets)? */
bool rf_net_is_ip_literal(const char *host);
/* Rewrite an IP literal in place to its canonical spelling. */
void rf_net_ip_canonical(char *host, size_t size);
/* Loopback, private, link-local (cloud metadata), unique-local, CGNAT,
 * multicast, unspecified, reserved: where a public name must not lead. */
bool rf_net_addr_is_private(const struct sockaddr *sa);
/* The user's own mapping for `host` (--add-host), or NULL. */
const rf_net_host *rf_net_rules_host(const rf_net_rules *r, const char *host);

/* ── request.c: the first bytes of a client connection ────────────────── */

typedef enum {
    RF_NET_PARSE_MORE = 0, /* need more bytes */
    RF_NET_PARSE_OK = 1,
    RF_NET_PARSE_BAD = -1,
} rf_net_parse_result;

typedef enum { RF_NET_HTTP_CONNECT, RF_NET_HTTP_FORWARD, RF_NET_SOCKS5 } rf_net_kind;

#define RF_NET_HEAD_MAX 16384

typedef struct rf_net_request {
    rf_net_kind kind;
    char host[RF_NET_NAME_MAX + 1]; /* lower case; v6 literals without [] */
    uint16_t port;
    size_t consumed;       /* bytes of the request head */
    char *forward;         /* HTTP_FORWARD: the head to send upstream, with
                              an origin-form target and no Proxy-* headers */
    size_t forward_len;
    const char *error;     /* PARSE_BAD: why (static text) */
    int http_status;       /* PARSE_BAD: 400, 405, 431... */
} rf_net_request;

/* An HTTP proxy request head (CONNECT host:port, or METHOD http://...). */
rf_net_parse_result rf_net_parse_http(const char *buf, size_t len, rf_net_request *out);
/* SOCKS5: the greeting (version, methods): *no_auth says whether "no
 * authentication" was offered; then the CONNECT request. */
rf_net_parse_result rf_net_parse_socks_greeting(const unsigned char *buf, size_t len, size_t *consumed,
                                                bool *no_auth);
rf_net_parse_result rf_net_parse_socks_request(const unsigned char *buf, size_t len, rf_net_request *out,
                                               int *socks_reply);
void rf_net_request_clear(rf_net_request *r);

/* ── proxy.c: the supervisor's side ───────────────────────────────────── */

typedef struct rf_net_proxy rf_net_proxy;

/* Start relaying for one sandbox: `listen_fd` (taken) is the listening
 * socket in the sandbox's network namespace. Blocked attempts are written
 * as lines to log_fd when it is >= 0. With policy->ask, questions go to
 * ask_fn (the library's callback) when set, else to network.ask. */
rf_net_proxy *rf_net_proxy_start(const rf_net_policy *policy, int listen_fd, int log_fd, rf_ask_fn ask_fn,
                                 void *ask_data, rf_error **err);
/* Publish: accept on the host's HOST_ADDR:HOST_PORT and connect to the
 * sandbox's 127.0.0.1:SANDBOX_PORT through sockets of the sandbox's network
 * namespace, one per connection, asked for on `socket_chan` (taken: a byte
 * out, a descriptor back; the sandbox's init answers). */
int rf_net_proxy_publish(rf_net_proxy *p, char *const *publish, int socket_chan, rf_error **err);
/* A socket of the sandbox's namespace, from its init (publish.c), or -1. */
int rf_net_sandbox_socket(rf_net_proxy *p);
/* The sandbox's trail (audit/run.h; NULL: auditing is off) and the file
 * `ringfence ps` reads its bytes out and refusals from (<run>/<id>.net;
 * NULL: none). Both borrowed until rf_net_proxy_stop. Until this is
 * called, a connection waits before its record (rf_spawn calls it right
 * after run.start), so no record precedes run.start and none is lost;
 * rf_net_proxy_stop ends the wait too. net/audit.c. */
struct rf_audit_run;
void rf_net_proxy_set_audit(rf_net_proxy *p, const struct rf_audit_run *audit, const char *stats_path);
/* The command line named in questions (on_blocked: ask). */
void rf_net_proxy_set_command(rf_net_proxy *p, char *const *argv);
/* Start the loop thread (after the listeners are added). */
int rf_net_proxy_run(rf_net_proxy *p, rf_error **err);
/* Stop accepting, close every connection, wait for the loop thread
 * (handshake threads still resolving end on their own). */
void rf_net_proxy_stop(rf_net_proxy *p);
/* The status JSON's "network" object, as a malloc'd one-line string. */
char *rf_net_proxy_report(rf_net_proxy *p);
void rf_net_proxy_free(rf_net_proxy *p);
