/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sandbox's records: run.start, the network's, run.end (run.h). */
#include "audit/run.h"
#include "audit/system.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv-json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *start_fields(const rf_plan *plan, const char *id, pid_t pid)
{
    json_t *o = json_pack("{s:s, s:o, s:s*, s:s, s:s, s:o, s:o, s:s*, s:s*, s:i, s:i, s:s}", "sandbox", id,
                          "command", rf_strv_json(plan->argv), "workspace", plan->workspace, "backend",
                          rf_backend_name(plan->backend), "policy", plan->policy_digest, "weaker",
                          rf_strv_json(plan->cannot), "weakenings", rf_strv_json(plan->weakenings), "instance",
                          plan->instance, "session", plan->session, "pid", (int)pid, "uid", (int)getuid(),
                          "network", rf_net_mode_name(plan->network));
    return o;
}

int rf_audit_run_connect(const rf_plan *plan, struct rf_audit_system **ret, rf_error **err)
{
    *ret = NULL;
    if (!plan->audit || !plan->system_audit_socket)
        return 0;
    *ret = rf_audit_system_open(plan->system_audit_socket, plan->system_audit_required, err);
    return *ret ? 0 : -1;
}

rf_audit_run *rf_audit_run_start(const rf_plan *plan, const char *id, pid_t pid, struct rf_audit_system *system,
                                 rf_error **err)
{
    rf_audit_run *r = calloc(1, sizeof *r);
    json_t *f = r ? start_fields(plan, id, pid) : NULL;
    if (r)
        r->system = system; /* freed with r from here */
    else
        rf_audit_system_close(system);
    if (!f || !(r->dir = rf_audit_dir(plan->instance_root)) ||
        (plan->instance && !(r->instance = strdup(plan->instance)))) {
        json_decref(f);
        rf_audit_run_free(r);
        rf_error_set(err, ENOMEM, "audit");
        return NULL;
    }
    snprintf(r->id, sizeof r->id, "%s", id);
    int rc = rf_audit_append(r->dir, "run.start", f, r->head, err);
    if (rc == 0 && rf_audit_system_send(r->system, "run.start", f, r->head, err) < 0) {
        /* Refused: the user trail says so rather than keep a start that
         * never ends. */
        json_t *end = json_pack("{s:s, s:b, s:s}", "sandbox", r->id, "waited", false, "error",
                                "refused: the system audit log did not take run.start");
        if (end)
            (void)rf_audit_append(r->dir, "run.end", end, NULL, NULL);
        json_decref(end);
        json_decref(f);
        rf_audit_run_free(r);
        return NULL;
    }
    json_decref(f);
    if (rc < 0) {
        rf_error_hint_set(err, "the audit trail lives in the instance root's audit/ (RINGFENCE_HOME); free "
                               "space there or fix its permissions, or turn auditing off with audit: false "
                               "(RINGFENCE_AUDIT=false) where no boundary requires it");
        rf_audit_run_free(r);
        return NULL;
    }
    return r;
}

/* ret_head: where the new head goes (NULL: nowhere). */
static int append_to(const rf_audit_run *r, const char *event, json_t *f, char *ret_head, rf_error **err)
{
    if (!f)
        return rf_error_set(err, ENOMEM, "audit");
    json_t *o = json_pack("{s:s, s:s*}", "sandbox", r->id, "instance", r->instance);
    char hash[RF_AUDIT_HASH_LEN + 1];
    int rc = o && json_object_update(o, f) == 0 ? rf_audit_append(r->dir, event, o, hash, err)
                                                : rf_error_set(err, ENOMEM, "audit");
    if (rc == 0) {
        if (ret_head)
            memcpy(ret_head, hash, sizeof hash);
        rc = rf_audit_system_send(r->system, event, o, hash, err);
    }
    json_decref(o);
    json_decref(f);
    return rc;
}

static int append(rf_audit_run *r, const char *event, json_t *f, rf_error **err)
{
    return append_to(r, event, f, r->head, err);
}

int rf_audit_run_event(const rf_audit_run *r, const char *event, json_t *fields, rf_error **err)
{
    return append_to(r, event, fields, NULL, err);
}

int rf_audit_run_command(rf_audit_run *r, char *const *argv, const char *cwd, rf_error **err)
{
    return append(r, "run.command", json_pack("{s:o, s:s*}", "command", rf_strv_json(argv), "cwd", cwd), err);
}

/* At the end, one net.summary per destination (verdict allowed or
 * refused, with its counts and bytes) and per question, as the proxy
 * counted them over the run; per route its counts, never a header. The
 * connections themselves were recorded as they happened (net/audit.c). */
static json_t *summary_fields(const char *key, const json_t *item)
{
    json_t *o = json_is_object(item) ? json_deep_copy(item) : json_pack("{s:O}", "value", item);
    if (o && !strcmp(key, "allowed"))
        json_object_set_new(o, "verdict", json_string("allowed"));
    else if (o && !strcmp(key, "blocked_destinations"))
        json_object_set_new(o, "verdict", json_string("refused"));
    return o;
}

static int network_events(rf_audit_run *r, const char *network_json, rf_error **err)
{
    json_t *net = network_json ? json_loads(network_json, 0, NULL) : NULL;
    if (!net)
        return 0;
    static const struct { const char *key, *event; } lists[] = {
        { "allowed", "net.summary" }, { "blocked_destinations", "net.summary" },
        { "asked", "net.asked" },     { "asked_files", "file.asked" },
        { "routes", "route.summary" },
    };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof lists / sizeof lists[0]; i++) {
        json_t *a = json_object_get(net, lists[i].key);
        size_t j;
        json_t *item;
        if (json_is_object(a)) /* asked/asked_files: {"answers": [...]} or similar: kept whole */
            rc = append(r, lists[i].event, json_pack("{s:O}", lists[i].key, a), err);
        else
            json_array_foreach(a, j, item)
                if (rc == 0)
                    rc = append(r, lists[i].event, summary_fields(lists[i].key, item), err);
    }
    json_decref(net);
    return rc;
}

static json_t *end_fields(const rf_status *st)
{
    json_t *o = json_pack("{s:i, s:i, s:b, s:b, s:b, s:I, s:I}", "exit_code", st->exit_code, "signal", st->signal,
                          "timed_out", st->timed_out, "oom_killed", st->oom_killed, "pids_limit_hit",
                          st->pids_limit_hit, "duration_ms", (json_int_t)(st->wall_seconds * 1000), "peak_memory_bytes",
                          (json_int_t)st->peak_memory_bytes);
    if (o && st->setup_error)
        json_object_set_new(o, "error", json_string(st->setup_error));
    return o;
}

int rf_audit_run_end(rf_audit_run *r, const rf_status *st, rf_error **err)
{
    if (network_events(r, st->network_json, err) < 0)
        return -1;
    if (st->timed_out && append(r, "limit.timeout", json_pack("{s:f}", "limit", st->timeout_seconds), err) < 0)
        return -1;
    if (st->oom_killed && append(r, "limit.oom", json_pack("{s:I}", "limit", (json_int_t)st->memory_limit_bytes),
                                 err) < 0)
        return -1;
    if (st->pids_limit_hit && append(r, "limit.pids", json_pack("{s:I}", "limit", (json_int_t)st->pids_limit),
                                     err) < 0)
        return -1;
    return append(r, "run.end", end_fields(st), err);
}

void rf_audit_run_discard(rf_audit_run *r)
{
    if (r)
        (void)append(r, "run.end", json_pack("{s:b}", "waited", false), NULL);
}

void rf_audit_run_free(rf_audit_run *r)
{
    if (!r)
        return;
    rf_audit_system_close(r->system);
    free(r->dir);
    free(r->instance);
    free(r);
}
