/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One sandbox's part of the audit trail: run.start when rf_spawn has
 * started it, the network's record and run.end when rf_proc_wait has
 * seen it end (docs/audit.md lists the events). */
#pragma once
#include "audit/audit.h"
#include "model/plan.h"

#include <sys/types.h>

typedef struct rf_audit_run {
    char *dir;
    char id[13];
    char *instance; /* or NULL */
    char head[RF_AUDIT_HASH_LEN + 1]; /* after the last record written */
    /* The system log's daemon (plan->system_audit_socket), or NULL: each
     * record written here is also sent there, on one connection a run. */
    struct rf_audit_system *system;
} rf_audit_run;

/* Connect to the system log's daemon the plan names, before the sandbox
 * starts: *ret is the connection, or NULL when the plan names none. -1
 * with *err when a required one cannot be reached: the run is refused
 * before anything of it exists. */
int rf_audit_run_connect(const rf_plan *plan, struct rf_audit_system **ret, rf_error **err);
/* Append run.start for the sandbox `id` whose init is `pid`; system (from
 * rf_audit_run_connect, or NULL) is taken, and closed on failure. NULL
 * with *err when the record cannot be written (the caller refuses the
 * run: an unrecorded run is what auditing exists to prevent). */
rf_audit_run *rf_audit_run_start(const rf_plan *plan, const char *id, pid_t pid, struct rf_audit_system *system,
                                 rf_error **err);
/* A warm pool's sandbox was handed its command (run.start named the
 * pool's placeholder): run.command with argv and cwd. */
int rf_audit_run_command(rf_audit_run *r, char *const *argv, const char *cwd, rf_error **err);
/* One record of this sandbox as it happens, from another thread (the
 * network proxy's: net.allowed, net.refused, route.request): fields
 * (taken) plus sandbox and instance. Touches nothing of r but reads its
 * id, dir and instance, which never change, so any thread may call it
 * while r lives; r->head is left to the caller's thread (run.end's). */
int rf_audit_run_event(const rf_audit_run *r, const char *event, json_t *fields, rf_error **err);
/* The network's destinations (net.allowed, net.refused, net.asked,
 * route.summary) and run.end; the head afterwards in r->head. */
int rf_audit_run_end(rf_audit_run *r, const rf_status *st, rf_error **err);
/* The sandbox is being freed without a wait (an idle pool sandbox at the
 * pool's end, a caller that gave up): run.end with "waited": false, so
 * every run.start has its end. Errors are dropped: nothing is left to refuse. */
void rf_audit_run_discard(rf_audit_run *r);
void rf_audit_run_free(rf_audit_run *r);

/* refusal.c: guard.refused for a command the exec guard blocked (it ran
 * nowhere, so no sandbox records it). Errors are dropped: the command is
 * refused either way. */
void rf_audit_guard_refused(const rf_policy *policy, const char *command, const rf_guard_verdict *v);
