/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The decisions of one sandbox's questions. A name being asked about has
 * one entry: the thread that asks holds the transport, the others wait on
 * the entry for the same answer (one question per name, however many
 * connections). Answers "run" and "always" stay in the table for the rest
 * of the run; "once" serves the connections that waited for it. At most
 * RF_ASK_PER_MINUTE questions a minute: beyond, refused without asking.
 * Any failure while asking is a refusal. */
#include "net/ask.h"
#include "util/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *host;
    uint16_t port;
    bool pending, allow, remember;
    unsigned round; /* answers given so far: a waiter waits for the next */
} entry;

typedef struct record {
    uint64_t id;
    char *host;
    uint16_t port;
    const char *protocol, *decision, *scope, *by, *reason;
    long ms;
} record;

struct rf_net_ask {
    rf_ask_socket sock; /* path NULL: the callback or the terminal */
    bool tty;
    rf_ask_fn fn;
    void *fn_data;
    unsigned timeout_ms;
    int stop_fd;
    char *command;
    pthread_mutex_t lock; /* everything below; `transport` orders questions */
    pthread_mutex_t transport;
    pthread_cond_t answered;
    entry *names;
    size_t n_names;
    struct timespec recent[RF_ASK_PER_MINUTE]; /* when the last questions were asked (a ring) */
    size_t recent_next;
    uint64_t next_id, asked, allowed, refused, rate_limited, timeouts;
    record records[RF_ASK_MAX_RECORDS];
    size_t n_records;
};

rf_net_ask *rf_net_ask_new(const rf_net_policy *policy, int stop_fd, rf_ask_fn fn, void *data)
{
    bool sock = policy->ask_via && !strncmp(policy->ask_via, "socket:", 7);
    bool tty = policy->ask_via && !strcmp(policy->ask_via, "tty");
    if (!policy->ask || (!fn && !sock && !tty))
        return NULL;
    rf_net_ask *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->fn = fn;
    a->fn_data = data;
    a->names = calloc(RF_ASK_MAX_NAMES, sizeof *a->names);
    a->tty = !fn && tty;
    a->sock.path = fn || tty ? NULL : strdup(policy->ask_via + 7);
    if (!a->names || (!fn && !tty && !a->sock.path)) {
        free(a->names);
        free(a->sock.path);
        free(a);
        return NULL;
    }
    a->sock.fd = -1;
    a->timeout_ms = policy->ask_timeout_ms ? policy->ask_timeout_ms : 30000;
    a->stop_fd = stop_fd;
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->transport, NULL);
    pthread_cond_init(&a->answered, NULL);
    return a;
}

void rf_net_ask_free(rf_net_ask *a)
{
    if (!a)
        return;
    rf_ask_socket_close(&a->sock);
    free(a->sock.path);
    free(a->command);
    for (size_t i = 0; i < a->n_names; i++)
        free(a->names[i].host);
    for (size_t i = 0; i < a->n_records; i++)
        free(a->records[i].host);
    free(a->names);
    pthread_mutex_destroy(&a->lock);
    pthread_mutex_destroy(&a->transport);
    pthread_cond_destroy(&a->answered);
    free(a);
}

void rf_net_ask_set_command(rf_net_ask *a, char *const *argv)
{
    if (!a || !argv)
        return;
    size_t len = 0;
    for (size_t i = 0; argv[i] && len < 1024; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len + 1), *p = s;
    for (size_t i = 0; s && argv[i] && (size_t)(p - s) + strlen(argv[i]) + 1 <= len; i++)
        p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
    pthread_mutex_lock(&a->lock);
    free(a->command);
    a->command = s;
    pthread_mutex_unlock(&a->lock);
}

/* `clock`'s now (or `from`, when given) plus ms. */
static struct timespec after_ms(clockid_t clock, const struct timespec *from, unsigned ms)
{
    return from ? rf_timespec_add_ms(*from, ms) : rf_clock_after_ms(clock, ms);
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Under the lock. */
static void note(rf_net_ask *a, uint64_t id, const char *host, uint16_t port, const char *protocol, bool allow,
                 const char *scope, const char *by, const char *reason, long ms)
{
    allow ? a->allowed++ : a->refused++;
    if (a->n_records == RF_ASK_MAX_RECORDS)
        return;
    char *h = strdup(host);
    if (!h)
        return;
    a->records[a->n_records++] = (record){ .id = id, .host = h, .port = port, .protocol = protocol,
                                           .decision = allow ? "allow" : "deny", .scope = scope, .by = by,
                                           .reason = reason, .ms = ms };
}

/* Under the lock: may one more question be asked this minute? */
static bool rate_ok(rf_net_ask *a)
{
    const struct timespec *oldest = &a->recent[a->recent_next];
    if ((oldest->tv_sec || oldest->tv_nsec) && ms_since(oldest) < 60000)
        return false;
    clock_gettime(CLOCK_MONOTONIC, &a->recent[a->recent_next]);
    a->recent_next = (a->recent_next + 1) % RF_ASK_PER_MINUTE;
    return true;
}

static entry *find(rf_net_ask *a, const char *host, uint16_t port)
{
    for (size_t i = 0; i < a->n_names; i++)
        if (a->names[i].port == port && !strcmp(a->names[i].host, host))
            return &a->names[i];
    return NULL;
}

/* Another connection asks about the same name: wait for its answer. */
static const char *wait_for(rf_net_ask *a, entry *e, const struct timespec *until)
{
    unsigned round = e->round;
    while (e->pending && e->round == round)
        if (pthread_cond_timedwait(&a->answered, &a->lock, until) == ETIMEDOUT)
            return "asked, no answer in time";
    return e->allow ? NULL : "refused when asked";
}

static const char *scope_name(rf_ask_scope s)
{
    return s == RF_ASK_ALWAYS ? "always" : s == RF_ASK_RUN ? "run" : "once";
}

static const char *via_name(const rf_net_ask *a)
{
    return a->fn ? "callback" : a->tty ? "tty" : "socket";
}

/* The library's callback: its answer counts only within the timeout. */
static int ask_callback(rf_net_ask *a, const rf_ask_question *q, const struct timespec *deadline,
                        rf_ask_answer *ans, const char **why)
{
    rf_ask_request req = { .id = q->id, .host = q->host, .port = q->port, .protocol = q->protocol,
                           .command = q->command ? q->command : "", .pid = q->who ? q->who->pid : 0,
                           .process = q->who ? q->who->name : NULL };
    int scope = RF_ASK_SCOPE_ONCE;
    int allow = a->fn(a->fn_data, &req, &scope);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec > deadline->tv_nsec)) {
        *why = "no answer in time";
        return -2;
    }
    if ((allow != 0 && allow != 1) || scope < RF_ASK_SCOPE_ONCE || scope > RF_ASK_SCOPE_ALWAYS) {
        *why = "the answer was not understood";
        return -1;
    }
    ans->allow = allow == 1;
    ans->scope = scope == RF_ASK_SCOPE_ALWAYS ? RF_ASK_ALWAYS : scope == RF_ASK_SCOPE_RUN ? RF_ASK_RUN : RF_ASK_ONCE;
    return 0;
}

/* Ask, on the transport, in order. The answer is written to `e` under
 * the lock by the caller. */
static const char *ask_now(rf_net_ask *a, const rf_ask_question *q, const struct timespec *deadline,
                           rf_ask_answer *ans, const char **by)
{
    const char *why = NULL;
    struct timespec until = after_ms(CLOCK_REALTIME, NULL, a->timeout_ms);
    *by = "timeout";
    if (pthread_mutex_timedlock(&a->transport, &until) != 0)
        return "asked, no answer in time";
    int rc = a->fn    ? ask_callback(a, q, deadline, ans, &why)
             : a->tty ? rf_ask_tty_ask(q, a->stop_fd, deadline, ans, &why)
                      : rf_ask_socket_ask(&a->sock, q, a->stop_fd, deadline, ans, &why);
    pthread_mutex_unlock(&a->transport);
    *by = rc == -2 ? "timeout" : via_name(a);
    if (rc < 0) {
        *ans = (rf_ask_answer){ 0 }; /* nothing of a refused answer is kept */
        return rc == -2 ? "asked, no answer in time" : why;
    }
    /* A file's "always" lasts the run: an expose rule is not written for it. */
    if (ans->scope == RF_ASK_ALWAYS && strcmp(q->protocol, "file") &&
        rf_ask_always_write(q->host, q->port, ans->allow, q->command) < 0)
        *by = "always: the answers file could not be written, kept for this run";
    return ans->allow ? NULL : "refused when asked";
}

const char *rf_net_ask_decide(rf_net_ask *a, const char *host, uint16_t port, const char *protocol,
                              const rf_ask_who *who)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timespec until = after_ms(CLOCK_REALTIME, NULL, a->timeout_ms + 1000); /* waiters: the asker's, and a second */
    pthread_mutex_lock(&a->lock);
    entry *e = find(a, host, port);
    if (e && (e->pending || e->remember)) {
        const char *r = e->pending ? wait_for(a, e, &until) : e->allow ? NULL : "refused when asked (for this run)";
        pthread_mutex_unlock(&a->lock);
        return r;
    }
    if (!e && a->n_names == RF_ASK_MAX_NAMES) {
        note(a, 0, host, port, protocol, false, "once", "limit", "too many names asked about", 0);
        pthread_mutex_unlock(&a->lock);
        return "not asked: too many names asked about in this run";
    }
    if (!rate_ok(a)) {
        a->rate_limited++;
        note(a, 0, host, port, protocol, false, "once", "rate-limit", "more than 30 questions a minute", 0);
        pthread_mutex_unlock(&a->lock);
        return "not asked: more than 30 questions a minute";
    }
    if (!e) {
        char *h = strdup(host);
        if (!h) {
            pthread_mutex_unlock(&a->lock);
            return "not asked: out of memory";
        }
        e = &a->names[a->n_names++];
        *e = (entry){ .host = h, .port = port };
    }
    e->pending = true;
    rf_ask_question q = { .id = ++a->next_id, .host = e->host, .port = port, .protocol = protocol, .who = who };
    char *command = a->command ? strdup(a->command) : NULL;
    q.command = command;
    a->asked++;
    pthread_mutex_unlock(&a->lock);

    struct timespec deadline = after_ms(CLOCK_MONOTONIC, &t0, a->timeout_ms);
    rf_ask_answer ans = { 0 };
    const char *by = "socket";
    const char *reason = ask_now(a, &q, &deadline, &ans, &by);
    free(command);

    pthread_mutex_lock(&a->lock);
    if (!strcmp(by, "timeout"))
        a->timeouts++;
    e->allow = reason == NULL;
    e->remember = ans.scope != RF_ASK_ONCE; /* set only by an answer understood */
    e->pending = false;
    e->round++;
    note(a, q.id, host, port, protocol, e->allow, strcmp(by, "timeout") ? scope_name(ans.scope) : "once", by,
         reason, ms_since(&t0));
    pthread_cond_broadcast(&a->answered);
    pthread_mutex_unlock(&a->lock);
    return reason;
}

json_t *rf_net_ask_report(rf_net_ask *a)
{
    pthread_mutex_lock(&a->lock);
    json_t *list = json_array();
    for (size_t i = 0; i < a->n_records; i++) {
        const record *r = &a->records[i];
        json_t *o = json_pack("{s:I, s:s, s:i, s:s, s:s, s:s, s:s, s:I}", "id", (json_int_t)r->id, "host", r->host,
                              "port", (int)r->port, "protocol", r->protocol, "decision", r->decision, "scope",
                              r->scope, "by", r->by, "ms", (json_int_t)r->ms);
        if (o && r->reason)
            json_object_set_new(o, "reason", json_string(r->reason));
        json_array_append_new(list, o);
    }
    json_t *out = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:b}", "via", via_name(a),
                            "questions",
                            (json_int_t)a->asked, "allowed", (json_int_t)a->allowed, "refused",
                            (json_int_t)a->refused, "rate_limited", (json_int_t)a->rate_limited, "timeouts",
                            (json_int_t)a->timeouts, "list", list, "truncated",
                            a->n_records == RF_ASK_MAX_RECORDS);
    pthread_mutex_unlock(&a->lock);
    return out;
}
