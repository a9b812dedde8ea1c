/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system log's record check (src/lib/audit/system.c): what the daemon
 * takes, what it refuses and why, and that the sender's identity is the
 * kernel's (peer overwritten); the boundary's system_audit key
 * (src/lib/managed/load.c, check.c); the log's path rule. */
#include "tap.h"
#include "audit/system.h"
#include "managed/managed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rf_audit_peer me = { .uid = 1002, .gid = 1003, .pid = 77 };

static json_t *check_str(const char *s, char *why, size_t size)
{
    return rf_audit_system_check(s, strlen(s), &me, why, size);
}

static void refused(const char *msg, const char *want, const char *desc)
{
    char why[256] = "";
    json_t *r = check_str(msg, why, sizeof why);
    ok(!r && strstr(why, want), desc);
    if (r || !strstr(why, want))
        printf("#   why: %s\n", why);
    json_decref(r);
}

static void stamping(void)
{
    char why[256];
    json_t *r = check_str("{\"event\":\"run.start\",\"peer\":{\"uid\":0,\"gid\":0,\"pid\":1},\"x\":1}", why, sizeof why);
    ok(r != NULL, "a record is taken");
    json_t *p = json_object_get(r, "peer");
    is_int(json_integer_value(json_object_get(p, "uid")), 1002, "peer.uid is the kernel's, not the sender's 0");
    is_int(json_integer_value(json_object_get(p, "gid")), 1003, "peer.gid too");
    is_int(json_integer_value(json_object_get(p, "pid")), 77, "peer.pid too");
    is_int(json_object_size(p), 3, "peer holds nothing the sender put there");
    is_int(json_integer_value(json_object_get(r, "x")), 1, "the sender's fields are kept");
    json_decref(r);
    r = check_str("{\"event\":\"a\",\"peer\":\"root\"}", why, sizeof why);
    is_int(json_integer_value(json_object_get(json_object_get(r, "peer"), "uid")), 1002, "a peer of another type too");
    json_decref(r);
}

static void refusals(void)
{
    refused("not json", "not JSON", "not JSON");
    refused("{\"event\":\"a\"", "not JSON", "cut-off JSON");
    refused("[1,2]", "not a record", "an array");
    refused("\"run.start\"", "not JSON", "a bare string (JSON text must be an object or array)");
    refused("{\"x\":1}", "not a record", "no event");
    refused("{\"event\":7}", "not a record", "an event that is not a string");
    refused("{\"event\":\"\"}", "not a record", "an empty event");
    refused("{\"event\":\"Run\"}", "not a record", "an event with a capital");
    refused("{\"event\":\"a\\u001b[2J\"}", "not a record", "an event with a control character");
    refused("{\"event\":\"a\",\"event\":\"b\"}", "not JSON", "a duplicate key");
    char ev[RF_AUDIT_SYSTEM_MAX_EVENT + 20];
    memset(ev, 'a', sizeof ev - 1);
    ev[sizeof ev - 1] = '\0';
    char *msg = NULL;
    if (asprintf(&msg, "{\"event\":\"%s\"}", ev) > 0)
        refused(msg, "not a record", "an event longer than the limit");
    free(msg);
    size_t n = RF_AUDIT_SYSTEM_MAX_RECORD + 1;
    char *big = malloc(n);
    char why[256] = "";
    memset(big, ' ', n);
    memcpy(big, "{\"event\":\"a\"}", 13);
    json_t *r = rf_audit_system_check(big, n, &me, why, sizeof why);
    ok(!r && strstr(why, "too large"), "one byte over the limit is too large");
    r = rf_audit_system_check(big, n - 1, &me, why, sizeof why);
    ok(r != NULL, "at the limit it is taken");
    json_decref(r);
    free(big);
    r = rf_audit_system_check("{\"event\":\"a\"}\0junk", 18, &me, why, sizeof why);
    ok(!r, "a NUL and more after the object: refused");
    json_decref(r);
}

static void boundary_key(void)
{
    json_t *b = json_pack("{s:{s:b}}", "system_audit", "required", 1);
    const char *sock = NULL;
    bool req = false;
    ok(rf_managed_system_audit(b, &sock, &req) && req, "system_audit: {required: true}");
    is_str(sock, RF_AUDIT_SYSTEM_SOCKET, "...the socket defaults to /run/ringfence/audit.sock");
    json_t *p = json_pack("{s:b}", "audit", 0);
    rf_managed_excess x;
    is_int(rf_managed_check(b, p, &x), 1, "a policy with audit: false is beyond a boundary with system_audit");
    is_str(x.setting, "audit", "...naming audit");
    json_object_set_new(p, "audit", json_true());
    is_int(rf_managed_check(b, p, &x), 0, "control: audit: true is within");
    json_decref(p);
    json_decref(b);
    b = json_object();
    ok(!rf_managed_system_audit(b, &sock, &req), "no system_audit: none");
    json_decref(b);
}

static void log_path(void)
{
    char *d = rf_audit_system_dir("/var/log/ringfence/audit.log", NULL);
    is_str(d, "/var/log/ringfence", "the log's directory");
    free(d);
    ok(!rf_audit_system_dir("/var/log/ringfence/other.log", NULL), "a log not named audit.log is refused");
    ok(!rf_audit_system_dir("audit.log", NULL), "a relative log is refused");
    ok(!rf_audit_system_dir("/audit.log", NULL), "a log in / is refused");
}

int main(void)
{
    stamping();
    refusals();
    boundary_key();
    log_path();
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
