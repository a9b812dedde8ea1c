/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A record of the audit trail as an OCSF 1.3 event, for a SIEM
 * (`ringfence audit export --format ocsf`; docs/audit.md has the table).
 * The record itself rides along in "unmapped", hash and all. */
#include "audit/audit.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SEVERITY_INFO = 1, SEVERITY_MEDIUM = 3 };

typedef struct ocsf_class {
    const char *prefix; /* the events it takes (a prefix: "net.") */
    int class_uid, category_uid, activity_id;
    const char *class_name, *category_name, *activity_name;
} ocsf_class;

static const ocsf_class classes[] = {
    { "run.start", 1007, 1, 1, "Process Activity", "System Activity", "Launch" },
    { "run.end", 1007, 1, 2, "Process Activity", "System Activity", "Terminate" },
    { "net.allowed", 4001, 4, 6, "Network Activity", "Network Activity", "Traffic" },
    { "net.refused", 4001, 4, 5, "Network Activity", "Network Activity", "Refuse" },
    { "net.", 4001, 4, 99, "Network Activity", "Network Activity", "Other" },
    { "route.", 4002, 4, 99, "HTTP Activity", "Network Activity", "Other" },
    { "file.", 1001, 1, 99, "File System Activity", "System Activity", "Other" },
    { "changes.", 1001, 1, 3, "File System Activity", "System Activity", "Update" },
    { "limit.", 2004, 2, 1, "Detection Finding", "Findings", "Create" },
    { "guard.", 2004, 2, 1, "Detection Finding", "Findings", "Create" },
    { "", 1007, 1, 99, "Process Activity", "System Activity", "Other" },
};

/* "2026-01-02T03:04:05.678Z" as milliseconds since the epoch; 0 if not. */
long long rf_audit_time_ms(const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest)
        return 0;
    long long ms = 0;
    if (rest[0] == '.' && rest[1] >= '0' && rest[1] <= '9' && rest[2] >= '0' && rest[2] <= '9' && rest[3] >= '0' &&
        rest[3] <= '9')
        ms = (rest[1] - '0') * 100 + (rest[2] - '0') * 10 + (rest[3] - '0');
    return (long long)timegm(&tm) * 1000 + ms;
}

static const ocsf_class *class_of(const char *event)
{
    size_t i = 0;
    while (strncmp(event, classes[i].prefix, strlen(classes[i].prefix)))
        i++; /* the last prefix, "", matches anything */
    return &classes[i];
}

static json_t *command_line(const json_t *argv)
{
    size_t i;
    json_t *w;
    json_t *s = json_string("");
    json_array_foreach(argv, i, w)
        if (json_is_string(w)) {
            const char *old = json_string_value(s);
            size_t a = strlen(old), b = json_string_length(w);
            char *cat = malloc(a + b + 2);
            if (!cat)
                break;
            memcpy(cat, old, a);
            cat[a] = i ? ' ' : '\0';
            memcpy(cat + a + (i ? 1 : 0), json_string_value(w), b);
            cat[a + (i ? 1 : 0) + b] = '\0';
            json_string_set(s, cat);
            free(cat);
        }
    return s;
}

/* route.request: the request and the answer as OCSF's HTTP Activity has
 * them (the path as recorded: without its query). */
static void add_http_fields(json_t *o, const json_t *rec)
{
    const json_t *method = json_object_get(rec, "method"), *path = json_object_get(rec, "path");
    const json_t *status = json_object_get(rec, "status");
    if (json_is_string(method) && json_is_string(path))
        json_object_set_new(o, "http_request",
                            json_pack("{s:O, s:{s:O}}", "http_method", method, "url", "path", path));
    if (json_is_integer(status))
        json_object_set_new(o, "http_response", json_pack("{s:O}", "code", status));
}

/* The parts a class has beyond the common ones. */
static void add_class_fields(json_t *o, const ocsf_class *c, const char *event, const json_t *rec)
{
    const json_t *host = json_object_get(rec, "host"), *port = json_object_get(rec, "port");
    if (c->class_uid == 4001 || c->class_uid == 4002) {
        json_t *dst = json_object();
        if (host)
            json_object_set(dst, "hostname", (json_t *)host);
        if (port)
            json_object_set(dst, "port", (json_t *)port);
        json_object_set_new(o, "dst_endpoint", dst);
        const char *verdict = json_string_value(json_object_get(rec, "verdict")); /* net.summary */
        bool refused = !strcmp(event, "net.refused") || (verdict && !strcmp(verdict, "refused"));
        json_object_set_new(o, "action_id", json_integer(refused ? 2 : 1));
        json_object_set_new(o, "action", json_string(refused ? "Denied" : "Allowed"));
        json_object_set_new(o, "disposition_id", json_integer(refused ? 2 : 1));
        json_object_set_new(o, "disposition", json_string(refused ? "Blocked" : "Allowed"));
        add_http_fields(o, rec);
    } else if (c->class_uid == 2004) {
        json_object_set_new(o, "finding_info", json_pack("{s:s, s:O?}", "title", event, "uid",
                                                         json_object_get(rec, "hash")));
        json_object_set_new(o, "severity_id", json_integer(SEVERITY_MEDIUM));
    }
}

json_t *rf_audit_ocsf(const json_t *rec)
{
    const char *event = json_string_value(json_object_get(rec, "event"));
    if (!event)
        return NULL;
    const ocsf_class *c = class_of(event);
    const json_t *argv = json_object_get(rec, "command");
    json_t *process = json_object();
    if (json_object_get(rec, "pid"))
        json_object_set(process, "pid", json_object_get(rec, "pid"));
    /* net.allowed, net.refused: the process inside that connected (its pid
     * as the sandbox numbers it), when it was known. */
    const json_t *inside = json_object_get(rec, "process");
    if (json_is_object(inside)) {
        json_object_set(process, "pid", json_object_get(inside, "pid"));
        json_object_set(process, "name", json_object_get(inside, "name"));
    }
    if (json_is_array(argv))
        json_object_set_new(process, "cmd_line", command_line(argv));
    json_t *o = json_pack("{s:i, s:s, s:i, s:s, s:i, s:s, s:I, s:I, s:i, s:s, s:{s:s, s:{s:s, s:s}, s:O?, s:O?}}",
                          "class_uid", c->class_uid, "class_name", c->class_name, "category_uid", c->category_uid,
                          "category_name", c->category_name, "activity_id", c->activity_id, "activity_name",
                          c->activity_name, "type_uid", (json_int_t)c->class_uid * 100 + c->activity_id, "time",
                          (json_int_t)rf_audit_time_ms(json_string_value(json_object_get(rec, "time"))),
                          "severity_id", SEVERITY_INFO, "status", "Success", "metadata", "version", "1.3.0",
                          "product", "name", "ringfence", "vendor_name", "ringfence", "uid",
                          json_object_get(rec, "hash"), "correlation_uid", json_object_get(rec, "sandbox"));
    if (!o) {
        json_decref(process);
        return NULL;
    }
    json_object_set_new(o, "process", process);
    if (json_object_get(rec, "uid"))
        json_object_set_new(o, "actor", json_pack("{s:{s:O}}", "user", "uid", json_object_get(rec, "uid")));
    add_class_fields(o, c, event, rec);
    json_object_set(o, "unmapped", (json_t *)rec);
    return o;
}
