/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system audit log (docs/audit.md, "A system-wide log"): a root
 * process, `ringfence audit-daemon` (daemon.c), receives every run's
 * records over a unix socket and chains them into a root-owned log that
 * no user can read or rewrite. The sender cannot forge who it is: the
 * daemon stamps each record with the connection's SO_PEERCRED. What a
 * user can still do is send false records, which carry their own uid. */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RF_AUDIT_SYSTEM_SOCKET "/run/ringfence/audit.sock"
#define RF_AUDIT_SYSTEM_LOG "/var/log/ringfence/audit.log"
/* The largest message (one record) the daemon takes. */
#define RF_AUDIT_SYSTEM_MAX_RECORD (64u << 10)
/* The longest event name. */
#define RF_AUDIT_SYSTEM_MAX_EVENT 64

/* Who sent a message, as the kernel says (SO_PEERCRED). */
typedef struct rf_audit_peer {
    uid_t uid;
    gid_t gid;
    pid_t pid;
} rf_audit_peer;

/* Check one message (len bytes) and stamp it: a JSON object whose "event"
 * is a name of [a-z0-9._-] starting with a letter, at most
 * RF_AUDIT_SYSTEM_MAX_RECORD bytes. Returns the record (new reference)
 * with "peer": {uid, gid, pid} set from *peer, whatever the sender put
 * there; NULL with the reason in why otherwise. Pure: the unit test and
 * fuzz/fuzz-audit-daemon.c call it. */
json_t *rf_audit_system_check(const char *msg, size_t len, const rf_audit_peer *peer, char *why, size_t why_size);

/* A run's connection to the daemon (client side). */
typedef struct rf_audit_system rf_audit_system;

/* Connect to socket. When it cannot be reached: required, NULL with *err;
 * otherwise a warning on stderr and a connection that sends nothing. */
rf_audit_system *rf_audit_system_open(const char *socket, bool required, rf_error **err);
/* Send one record (event plus fields, borrowed; user_hash: the record's
 * hash in the user trail, or NULL). Any thread. Optional log: never
 * waits, a daemon that is gone or behind is reported once on stderr, 0.
 * Required log: waits for the daemon (its per-uid rate) up to 5 s, and a
 * record it does not take is -1 with *err: what it records fails. */
int rf_audit_system_send(rf_audit_system *s, const char *event, const json_t *fields, const char *user_hash,
                         rf_error **err);
void rf_audit_system_close(rf_audit_system *s);

/* The daemon (daemon.c): socket_path NULL takes the socket systemd
 * passed (LISTEN_FDS/LISTEN_PID, fd 3), else RF_AUDIT_SYSTEM_SOCKET;
 * log_path NULL is RF_AUDIT_SYSTEM_LOG (its name must be audit.log: the
 * head and rotated files go beside it). Runs until SIGTERM or SIGINT,
 * then returns 0 after the record in hand; -1 with *err when it cannot
 * start. Refuses a caller that is not root (test-hook builds:
 * RINGFENCE_TEST_AUDIT_DAEMON_ANY_USER=1 lets one run as its user). */
int rf_audit_daemon_run(const char *socket_path, const char *log_path, rf_error **err);

/* The directory of a system log path (audit.log's): malloc'd, or NULL
 * with *err when the name is not audit.log. */
char *rf_audit_system_dir(const char *log_path, rf_error **err);
