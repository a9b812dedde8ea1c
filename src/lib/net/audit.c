/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The proxy's part of the audit trail (docs/audit.md): one record per
 * connection as its verdict is known (net.allowed, net.refused), one per
 * request through a route (route.request), written by the handshake
 * thread that served it; and the bytes out and refusals `ringfence ps`
 * shows, in a small file beside the sandbox's registry entry.
 *
 * The records go through rf_audit_append like every other (its flock
 * orders them with the caller's own); audit_lock is held while one is
 * written so that rf_net_proxy_stop, which takes it, knows no record is
 * half-way when run.end follows. No fsync: the trail never syncs. */
#include "net/proxy-internal.h"
#include "audit/run.h"
#include "util/error.h"
#include "util/printable.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The longest path kept in a route.request record (bytes, before escaping). */
#define PATH_MAX_KEPT 1024
/* ps's file: "BYTES_OUT REFUSALS\n", each 20 digits, rewritten in place. */
#define STATS_LEN 42

void rf_net_audit_init(rf_net_proxy *p)
{
    pthread_mutex_init(&p->audit_lock, NULL);
    pthread_mutex_init(&p->who_lock, NULL);
    pthread_cond_init(&p->audit_told, NULL);
    p->stats_fd = -1;
}

void rf_net_audit_destroy(rf_net_proxy *p)
{
    if (p->stats_fd >= 0)
        close(p->stats_fd);
    pthread_mutex_destroy(&p->audit_lock);
    pthread_mutex_destroy(&p->who_lock);
    pthread_cond_destroy(&p->audit_told);
}

void rf_net_proxy_set_audit(rf_net_proxy *p, const struct rf_audit_run *audit, const char *stats_path)
{
    if (!p)
        return;
    /* O_NOFOLLOW, 0600: in the caller's own run directory, which no
     * sandbox sees; the loop thread alone writes it once it is set. */
    int fd = stats_path ? open(stats_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    pthread_mutex_lock(&p->audit_lock);
    if (!atomic_load(&p->stopping)) {
        p->audit = audit;
        p->audit_known = true;
    }
    pthread_cond_broadcast(&p->audit_told);
    pthread_mutex_unlock(&p->audit_lock);
    pthread_mutex_lock(&p->lock);
    if (p->stats_fd < 0 && !atomic_load(&p->stopping)) {
        p->stats_fd = fd;
        fd = -1;
    }
    pthread_mutex_unlock(&p->lock);
    if (fd >= 0)
        close(fd);
}

void rf_net_audit_detach(rf_net_proxy *p)
{
    pthread_mutex_lock(&p->audit_lock);
    p->audit = NULL;
    p->audit_known = true;
    pthread_cond_broadcast(&p->audit_told);
    pthread_mutex_unlock(&p->audit_lock);
}

/* With audit_lock held: wait until rf_spawn has said whether there is a
 * trail (it is told within the same rf_spawn call). */
static const struct rf_audit_run *told(rf_net_proxy *p)
{
    while (!p->audit_known && !atomic_load(&p->stopping))
        pthread_cond_wait(&p->audit_told, &p->audit_lock);
    return p->audit;
}

static bool trail_on(rf_net_proxy *p)
{
    pthread_mutex_lock(&p->audit_lock);
    bool on = told(p) != NULL;
    pthread_mutex_unlock(&p->audit_lock);
    return on;
}

/* Write one record (fields taken) if the trail is still there. */
static int write_record(rf_net_proxy *p, const char *event, json_t *fields)
{
    rf_error *err = NULL;
    pthread_mutex_lock(&p->audit_lock);
    const struct rf_audit_run *a = told(p);
    int rc = a ? rf_audit_run_event(a, event, fields, &err) : (json_decref(fields), 0);
    pthread_mutex_unlock(&p->audit_lock);
    if (rc < 0) {
        char line[600];
        snprintf(line, sizeof line, "ringfence: network: audit: %s\n", rf_error_message(err));
        rf_net_log(p, line);
    }
    rf_error_free(err);
    return rc;
}

/* The process inside that holds the connection, or why it is not known:
 * never a guess. */
static void add_process(rf_net_proxy *p, json_t *o, int client_fd, const rf_ask_who *who)
{
    rf_ask_who found;
    if (!who && client_fd >= 0 && rf_net_who(p, client_fd, &found) == 0)
        who = &found;
    if (who) {
        json_object_set_new(o, "process", json_pack("{s:I, s:s}", "pid", (json_int_t)who->pid, "name", who->name));
        return;
    }
    json_object_set_new(o, "process", json_null());
    json_object_set_new(o, "process_unknown",
                        json_string("no process of the sandbox could be seen holding the connection's "
                                    "socket (it closed it or passed it on, or made itself undumpable)"));
}

int rf_net_audit_connection(rf_net_proxy *p, int client_fd, const char *host, uint16_t port, const char *protocol,
                            const char *reason, bool connected, bool asked, const rf_ask_who *who)
{
    if (!trail_on(p))
        return 0; /* and no /proc walk for a record nobody keeps */
    char *h = rf_visible(host, strlen(host), NULL); /* the sandbox chose it */
    json_t *o = h ? json_pack("{s:s, s:i, s:s}", "host", h, "port", (int)port, "protocol", protocol) : NULL;
    free(h);
    if (!o)
        return -1;
    if (reason)
        json_object_set_new(o, "reason", json_string(reason));
    else if (!connected)
        json_object_set_new(o, "error", json_string("the destination could not be reached"));
    if (asked)
        json_object_set_new(o, "asked", json_true());
    add_process(p, o, client_fd, who);
    return write_record(p, reason ? "net.refused" : "net.allowed", o);
}

/* The path as recorded: up to the query (a query string is where tokens
 * travel: ?access_token=, ?key=), control bytes and non-UTF-8 made
 * visible, at most PATH_MAX_KEPT bytes of it. */
static json_t *path_json(const char *path, size_t len)
{
    const char *q = memchr(path, '?', len);
    const char *h = memchr(path, '#', len);
    if (q)
        len = (size_t)(q - path);
    if (h && h < path + len)
        len = (size_t)(h - path);
    bool cut = len > PATH_MAX_KEPT;
    char *v = rf_visible(len ? path : "/", len ? (cut ? PATH_MAX_KEPT : len) : 1, NULL);
    json_t *s = v ? json_string(v) : NULL;
    free(v);
    return s;
}

int rf_net_audit_route(rf_net_proxy *p, const char *route, const char *method, size_t method_len, const char *path,
                       size_t path_len, int status, uint64_t sent, uint64_t received)
{
    if (!trail_on(p))
        return 0;
    char *r = rf_visible(route, strlen(route), NULL);
    char *m = rf_visible(method, method_len > 32 ? 32 : method_len, NULL);
    json_t *o = r && m ? json_pack("{s:s, s:s, s:o, s:i, s:I, s:I}", "route", r, "method", m, "path",
                                   path_json(path, path_len), "status", status, "bytes_sent", (json_int_t)sent,
                                   "bytes_received", (json_int_t)received)
                       : NULL;
    free(r);
    free(m);
    if (!o)
        return -1;
    return write_record(p, "route.request", o);
}

static long long ms_since(const struct timespec *t)
{
    struct timespec n;
    clock_gettime(CLOCK_MONOTONIC, &n);
    return (long long)(n.tv_sec - t->tv_sec) * 1000 + (n.tv_nsec - t->tv_nsec) / 1000000;
}

int rf_net_stats_write(rf_net_proxy *p, bool now)
{
    pthread_mutex_lock(&p->lock);
    int fd = p->stats_fd;
    uint64_t out = p->up_total, refusals = p->blocked_total;
    for (size_t i = 0; i < p->routes.n; i++)
        out += p->routes.routes[i].up;
    pthread_mutex_unlock(&p->lock);
    out += rf_net_relay_live_up(p);
    /* A refusal is counted by a handshake thread, which does not wake the
     * loop: with a file to keep, the loop looks once a second. */
    if (fd < 0)
        return 5000;
    if (out == p->stats_out && refusals == p->stats_refusals)
        return 1000;
    if (!now && p->stats_at.tv_sec && ms_since(&p->stats_at) < 1000)
        return 1000; /* at most once a second */
    char buf[STATS_LEN + 1];
    snprintf(buf, sizeof buf, "%020" PRIu64 " %020" PRIu64 "\n", out, refusals);
    if (pwrite(fd, buf, STATS_LEN, 0) == STATS_LEN) {
        p->stats_out = out;
        p->stats_refusals = refusals;
    }
    clock_gettime(CLOCK_MONOTONIC, &p->stats_at);
    return 1000;
}
