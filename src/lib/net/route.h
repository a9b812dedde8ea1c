/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Credential routes ("keys stay outside", issue 28). The command inside
 * reaches a route over plain HTTP at the sandbox's proxy, with a path
 * prefix: http://127.0.0.1:3128/route/NAME/... The proxy, outside, checks
 * the request against the route's rules, replaces the route's headers with
 * the real credentials (read on the host, at request time) and sends it to
 * the upstream over TLS, which it verifies. The secret never enters the
 * sandbox; the plan and the policy hold only where it comes from
 * ("env:VAR"). See docs/network.md, "Keys stay outside".
 * Internal to libringfence. */
#pragma once
#include "net/route_ssl.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define RF_ROUTE_PATH "/route/"                 /* the proxy's path prefix */
#define RF_ROUTE_BASE "http://127.0.0.1:3128/route/"
#define RF_ROUTE_PLACEHOLDER "ringfence-route-placeholder"
#define RF_ROUTE_MAX 32          /* routes per sandbox */
#define RF_ROUTE_NAME_MAX 32
#define RF_ROUTE_HEADERS_MAX 8   /* secret headers per route */
#define RF_ROUTE_RULES_MAX 64
#define RF_ROUTE_SECRET_MAX 8192 /* a token's bytes */
#define RF_ROUTE_CMD_TTL_S 300   /* a cmd: source's output is reused this long */
#define RF_ROUTE_CMD_TIMEOUT_S 30
#define RF_ROUTE_CMD_RETRY_S 5   /* a failed cmd: is tried again no sooner (its error is reused) */

/* ── route_spec.c: settings, checked when the policy is resolved ──────── */

typedef struct rf_route_preset {
    const char *name, *url, *header, *source;
    const char *const *allow;   /* "METHOD /glob" */
    const char *const *env;     /* "KEY=VALUE"; "{}" in VALUE is the route's base URL */
    const char *doc;            /* one line for --help and errors */
} rf_route_preset;

const rf_route_preset *rf_route_preset_find(const char *name);
/* The closest preset name (did-you-mean), or NULL. */
const char *rf_route_preset_suggest(const char *name);
/* "anthropic, openai, gemini, github" */
const char *rf_route_preset_names(void);

typedef struct rf_route_url {
    bool tls;
    char host[254];
    uint16_t port;
    char prefix[512]; /* "" or "/v2" (no trailing slash) */
} rf_route_url;

/* Each returns 0, or -1 with *why (static text). */
int rf_route_check_name(const char *name, const char **why);
int rf_route_url_parse(const char *url, rf_route_url *out, const char **why);
int rf_route_check_header_name(const char *name, const char **why);
int rf_route_check_source(const char *source, const char **why);
int rf_route_check_rule(const char *rule, const char **why);
/* RINGFENCE_ROUTE_<NAME>_URL for `name` into buf. */
void rf_route_env_name(const char *name, char *buf, size_t size);

/* ── route_http.c: request and response heads, chunked bodies (pure) ──── */

typedef enum { RF_BODY_NONE, RF_BODY_LENGTH, RF_BODY_CHUNKED, RF_BODY_CLOSE } rf_body_kind;

#define RF_ROUTE_HEAD_MAX 16384
#define RF_ROUTE_FIELDS_MAX 100

typedef struct rf_route_req {
    const char *method; size_t method_len;
    const char *name; size_t name_len;    /* the route's name */
    const char *path; size_t path_len;    /* after /route/NAME, with the query; "" means "/" */
    rf_body_kind body;
    uint64_t length;
    bool has_length;                      /* a Content-Length, 0 included (re-sent upstream) */
    bool keep_alive, expect_continue;
    bool http10; /* HTTP/1.0: forwarded as 1.0, so the upstream answers it as one (no chunked body) */
    size_t head_len;
    const char *fields[RF_ROUTE_FIELDS_MAX]; /* header lines to forward, each up to its CRLF */
    size_t field_len[RF_ROUTE_FIELDS_MAX];
    size_t n_fields;
    int status;                           /* BAD: 400, 431... */
    const char *error;                    /* BAD: why (static text) */
} rf_route_req;

/* 1: a whole head; 0: need more; -1: refused (status, error). */
int rf_route_parse_request(const char *buf, size_t len, rf_route_req *out);
/* Is the path (without its query) one a glob can be trusted on: no dot
 * segments, no encoded dot, slash or backslash, no "//"? */
bool rf_route_path_safe(const char *path, size_t len);

typedef struct rf_route_resp {
    int status;
    rf_body_kind body;
    uint64_t length;
    bool close;
    size_t head_len;
} rf_route_resp;
/* `head_request`: the request was HEAD (no body whatever the fields say). */
int rf_route_parse_response(const char *buf, size_t len, bool head_request, rf_route_resp *out);

/* A chunked body, byte by byte: where it ends. */
typedef struct rf_chunked {
    int state;
    uint64_t left;    /* data bytes left in this chunk */
    unsigned line;    /* bytes of the current size or trailer line */
    unsigned digits;
    bool done;
} rf_chunked;
/* Feed bytes; returns how many belong to the body (all of them, or up to
 * its end, then done is set), or -1 when malformed. */
ssize_t rf_chunked_feed(rf_chunked *c, const char *buf, size_t len);

/* ── route_secret.c: a header's value, from the host ──────────────────── */

typedef struct rf_route_secret {
    char *header;     /* "x-api-key" */
    char *source;     /* "env:VAR", "bearer:file:/p", "basic:USER:cmd:..." */
    pthread_mutex_t lock;  /* cmd: one run at a time, and its cache */
    char *cached;
    time_t cached_at;
    char *failed;          /* cmd: why its last run failed, until failed_at + RF_ROUTE_CMD_RETRY_S */
    time_t failed_at;
} rf_route_secret;

/* The header line "Name: value\r\n" (malloc'd, to be wiped and freed with
 * rf_route_secret_wipe), or NULL with *why (malloc'd, never the value). */
char *rf_route_secret_line(rf_route_secret *s, char **why);
void rf_route_secret_wipe(char *line);
void rf_route_secret_clear(rf_route_secret *s);

/* ── route_tls.c: the upstream connection ─────────────────────────────── */

/* System CA store plus `ca_file` (may be NULL). NULL with *why (malloc'd). */
SSL_CTX *rf_route_tls_ctx(const char *ca_file, char **why);
/* TLS on connected `fd` with SNI and a hostname check; NULL and *why. */
SSL *rf_route_tls_connect(SSL_CTX *ctx, int fd, const char *host, int timeout_ms, char **why);

/* ── route.c: the routes of one proxy ─────────────────────────────────── */

typedef struct rf_route {
    char *name;
    rf_route_url url;
    bool allow_http;
    char **allow;                 /* "METHOD /glob", NULL: everything */
    rf_route_secret secrets[RF_ROUTE_HEADERS_MAX];
    size_t n_secrets;
    SSL_CTX *tls;
    /* statistics, under the proxy's lock */
    uint64_t requests, refusals, errors, up, down;
} rf_route;

typedef struct rf_route_table {
    rf_route *routes;
    size_t n;
} rf_route_table;

/* From the policy's canonical JSON strings. */
int rf_route_table_build(rf_route_table *t, char *const *specs, char **why);
void rf_route_table_clear(rf_route_table *t);
rf_route *rf_route_find(const rf_route_table *t, const char *name, size_t len);
/* NULL: allowed; else the reason. */
const char *rf_route_check(const rf_route *r, const char *method, size_t mlen, const char *path, size_t plen);
