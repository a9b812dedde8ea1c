/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system log's record check (the daemon's side) and a run's
 * connection to it (system.h). */
#include "audit/system.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/unix.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static json_t *refuse(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static json_t *refuse(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return NULL;
}

static bool event_name_ok(const char *e)
{
    size_t n = strlen(e);
    if (n == 0 || n > RF_AUDIT_SYSTEM_MAX_EVENT || e[0] < 'a' || e[0] > 'z')
        return false;
    return strspn(e, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

json_t *rf_audit_system_check(const char *msg, size_t len, const rf_audit_peer *peer, char *why, size_t why_size)
{
    if (len > RF_AUDIT_SYSTEM_MAX_RECORD)
        return refuse(why, why_size, "too large (%zu bytes; at most %u)", len, RF_AUDIT_SYSTEM_MAX_RECORD);
    json_error_t je;
    json_t *rec = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
    if (!rec)
        return refuse(why, why_size, "not JSON (%s)", je.text);
    const char *event = json_string_value(json_object_get(rec, "event"));
    if (!json_is_object(rec) || !event || !event_name_ok(event)) {
        json_decref(rec);
        return refuse(why, why_size, "not a record (a JSON object whose \"event\" is a name of a-z, 0-9, '.', "
                                     "'_', '-', at most %d characters)", RF_AUDIT_SYSTEM_MAX_EVENT);
    }
    /* Who sent it is the kernel's word, never the sender's. */
    json_t *p = json_pack("{s:I, s:I, s:I}", "uid", (json_int_t)peer->uid, "gid", (json_int_t)peer->gid, "pid",
                          (json_int_t)peer->pid);
    if (!p || json_object_set_new(rec, "peer", p) < 0) {
        json_decref(rec);
        return refuse(why, why_size, "out of memory");
    }
    return rec;
}

struct rf_audit_system {
    int fd; /* -1: not connected, sends nothing */
    bool required;
    int warned;
    char *socket;
};

/* How long a required log's record may wait for the daemon to take it: it
 * reads each uid at its rate, so a run writing faster than that is slowed
 * to it; one that does not take a record in this long has failed it. */
#define REQUIRED_SEND_TIMEOUT_S 5

static int unreachable(const char *socket, int e, rf_error **err)
{
    rf_error_set(err, e, "the system audit log's daemon at %s cannot be reached, and the managed boundary "
                         "requires it (system_audit.required)", socket);
    return rf_error_hint_set(err, "start it: systemctl enable --now ringfence-audit.socket (or run "
                                  "'ringfence audit-daemon' as root)");
}

rf_audit_system *rf_audit_system_open(const char *socket, bool required, rf_error **err)
{
    rf_audit_system *s = calloc(1, sizeof *s);
    if (!s || !(s->socket = strdup(socket))) {
        free(s);
        rf_error_set(err, ENOMEM, "audit");
        return NULL;
    }
    s->fd = rf_unix_connect(socket, SOCK_SEQPACKET);
    s->required = required;
    struct timeval tv = { .tv_sec = REQUIRED_SEND_TIMEOUT_S };
    if (s->fd >= 0 && required)
        (void)setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (s->fd >= 0)
        return s;
    int e = errno;
    if (required) {
        rf_audit_system_close(s);
        unreachable(socket, e, err);
        return NULL;
    }
    fprintf(stderr, "ringfence: warning: the system audit log's daemon at %s cannot be reached (%s): this run "
                    "is recorded in your own trail only (start it: systemctl enable --now "
                    "ringfence-audit.socket)\n", socket, strerror(e));
    s->warned = 1;
    return s;
}

int rf_audit_system_send(rf_audit_system *s, const char *event, const json_t *fields, const char *user_hash,
                         rf_error **err)
{
    if (!s || s->fd < 0)
        return 0;
    json_t *o = json_pack("{s:s}", "event", event);
    if (o && fields)
        json_object_update(o, (json_t *)fields);
    if (o && user_hash)
        json_object_set_new(o, "user_hash", json_string(user_hash));
    _cleanup_free_ char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    /* Optional: never waited for, a daemon that is behind must not hold
     * the run up. Required: waited for (its rate), and a record it does
     * not take fails what it records, as an unwritable user trail does. */
    int flags = MSG_NOSIGNAL | (s->required ? 0 : MSG_DONTWAIT);
    ssize_t n = text ? send(s->fd, text, strlen(text), flags) : -1;
    while (n < 0 && errno == EINTR)
        n = send(s->fd, text, strlen(text), flags);
    if (n >= 0)
        return 0;
    int e = text ? errno : ENOMEM;
    if (s->required) {
        rf_error_set(err, e == EAGAIN ? ETIMEDOUT : e, "the system audit log's daemon at %s did not take the %s "
                     "record, and the managed boundary requires it (system_audit.required)", s->socket, event);
        return rf_error_hint_set(err, "is ringfence-audit.service running? (systemctl status ringfence-audit); a "
                                      "run is slowed to the daemon's rate of 200 records a second per user");
    }
    if (__atomic_exchange_n(&s->warned, 1, __ATOMIC_RELAXED) == 0)
        fprintf(stderr, "ringfence: warning: a record could not be sent to the system audit log at %s (%s); "
                        "your own trail has it (this is said once a run)\n", s->socket, strerror(e));
    return 0;
}

void rf_audit_system_close(rf_audit_system *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->socket);
    free(s);
}
