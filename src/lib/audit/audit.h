/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit trail (docs/audit.md): an append-only JSON-lines log under the
 * instance root, <root>/audit/, which no sandbox sees (plan.c masks the
 * instance root wherever a bind would show it). Each record carries the
 * hash of the one before it ("prev") and its own ("hash", SHA-256 of the
 * record's text without it); the last record's seq and hash are also kept
 * in audit/head, so an edited, removed, reordered or cut-off record is
 * found by rf_audit_verify. Appends from concurrent runs are serialised by
 * an flock on audit/head. */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define RF_AUDIT_LOG "audit.log"
/* A log larger than this is renamed audit.log.<last seq, 12 digits> and a
 * new one started; the chain runs on across the files. */
#define RF_AUDIT_ROTATE_BYTES (16u << 20)
/* The longest record read back (a longer line is damage). */
#define RF_AUDIT_MAX_LINE (256u << 10)
#define RF_AUDIT_HASH_LEN 64

/* <root>/audit, malloc'd, or NULL (ENOMEM). */
char *rf_audit_dir(const char *instance_root);

/* Append one record: fields (borrowed) plus "seq", "time", "event",
 * "prev" first, "hash" last. The directory is made (0700) if missing.
 * ret_head (may be NULL) gets the new record's hash. */
int rf_audit_append(const char *dir, const char *event, const json_t *fields, char ret_head[RF_AUDIT_HASH_LEN + 1],
                    rf_error **err);

/* The same, with the journal copy only when journal: the system log's
 * daemon (daemon.c) leaves it out, its senders have sent one already. */
int rf_audit_append_ex(const char *dir, const char *event, const json_t *fields, bool journal,
                       char ret_head[RF_AUDIT_HASH_LEN + 1], rf_error **err);

/* changes.applied (r: what apply did) or changes.discarded (r NULL) of a
 * session (audit/changes.c). */
int rf_audit_session(const char *instance_root, const char *event, const char *session, const char *workspace,
                     const rf_apply_report *r, rf_error **err);

/* Every record, oldest first, across the rotated files; fn returns < 0 to
 * stop. The record is the line's text as parsed JSON (borrowed). */
typedef int (*rf_audit_visit_fn)(void *ud, const json_t *record, const char *line);
int rf_audit_read(const char *dir, rf_audit_visit_fn fn, void *ud, rf_error **err);

/* The result of a verification. */
typedef struct rf_audit_check {
    bool intact;
    uint64_t records;
    uint64_t first_seq;       /* > 1: earlier files were removed (not an error) */
    char head[RF_AUDIT_HASH_LEN + 1];
    char problem[512];        /* the first bad record, named; "" when intact */
} rf_audit_check;
/* Check every record's hash, the chain and the head. < 0 only when the log
 * cannot be read at all; damage is reported in *out. */
int rf_audit_verify(const char *dir, rf_audit_check *out, rf_error **err);

/* One line of a record's hash: the text of line (len bytes, no newline)
 * without its trailing ,"hash":"..." and whether that hash is right.
 * Pure; exported for the unit test and the fuzz target. */
bool rf_audit_line_ok(const char *line, size_t len);

/* journal.c: the record (line, len bytes, no newline) to the systemd
 * journal if there is one; never fails, never waits. */
void rf_audit_journal(const char *event, const char *sandbox, const char *line, size_t len, const char *hash);

/* A new sandbox id: 12 lower-case hex digits from getrandom. */
void rf_audit_new_id(char out[13]);
/* The current time as 2026-01-02T03:04:05.678Z. */
void rf_audit_now(char out[32]);

/* ocsf.c: the record as an OCSF 1.3 event (new reference), NULL when it
 * is not a record; and a record's time in ms since the epoch (0: none). */
json_t *rf_audit_ocsf(const json_t *record);
long long rf_audit_time_ms(const char *iso);
