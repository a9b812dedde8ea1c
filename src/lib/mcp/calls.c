/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tools/call in flight: a worker thread per call, a cap on how many run
 * at once, and cancellation. A worker that starts a sandbox also waits for
 * it: rf_spawn() ties the sandbox's life to the calling thread
 * (PR_SET_PDEATHSIG), so that thread must outlive it.
 *
 * A worker whose call is done waits for the next one, up to
 * RF_MCP_IDLE_WORKERS of them: handing a call to a waiting thread is a
 * wakeup (about 40 us on the 2-vCPU development VM), starting one is about
 * 90 us, on every call. The sandbox of a finished exec goes back to the
 * warm pool's thread after the answer (rf_mcp_exec_release). */
#include "mcp/mcp.h"
#include "util/clock.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Locked: the call no longer counts against the cap nor can be cancelled. */
static void unlink_call(rf_mcp_server *s, rf_mcp_call *c)
{
    for (rf_mcp_call **pp = &s->calls; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    s->n_calls--;
}

static void call_free(rf_mcp_call *c)
{
    json_decref(c->id);
    json_decref(c->args);
    json_decref(c->progress_token);
    free(c);
}

#define RF_MCP_IDLE_WORKERS 4

static void run_call(rf_mcp_server *s, rf_mcp_call *c)
{
    json_t *result = c->tool->run(s, c, c->args);
    if (!result)
        result = rf_mcp_tool_text("internal error: out of memory", true);
    /* Free the slot before answering: a client that sends its next call
     * the moment it has this answer must find the slot free. */
    pthread_mutex_lock(&s->calls_lock);
    bool cancelled = c->cancelled;
    unlink_call(s, c);
    pthread_mutex_unlock(&s->calls_lock);
    pthread_cond_broadcast(&s->calls_changed); /* rf_mcp_calls_finish counts calls */
    if (cancelled) { /* MCP: a cancelled request gets no answer */
        rf_mcp_log(s, RF_MCP_LOG_DEBUG, "%s: cancelled, no answer sent", c->tool->name);
        json_decref(result);
        rf_mcp_reply(s, c->batch, NULL);
    } else {
        rf_mcp_reply(s, c->batch, rf_mcp_response(c->id, result));
    }
    rf_mcp_exec_release(s, c->finished);
    call_free(c);
}

/* Locked: wait, idle, for a call queued for this worker. NULL when it
 * should end instead: enough workers wait already, or the server drains. */
static rf_mcp_call *next_call_locked(rf_mcp_server *s)
{
    if (s->draining || s->n_idle >= RF_MCP_IDLE_WORKERS)
        return NULL;
    s->n_idle++;
    while (!s->queue && !s->draining)
        pthread_cond_wait(&s->work, &s->calls_lock);
    rf_mcp_call *c = s->queue;
    if (!c) { /* draining: nobody claimed this worker */
        s->n_idle--;
        return NULL;
    }
    s->queue = c->queued_next; /* its claimant took n_idle down already */
    if (!s->queue)
        s->queue_tail = NULL;
    return c;
}

static void *worker(void *arg)
{
    rf_mcp_call *c = arg;
    rf_mcp_server *s = c->server;
    for (;;) {
        run_call(s, c);
        pthread_mutex_lock(&s->calls_lock);
        if (!(c = next_call_locked(s)))
            break;
        pthread_mutex_unlock(&s->calls_lock);
    }
    s->n_workers--;
    pthread_cond_broadcast(&s->calls_changed);
    /* After this unlock the server may be freed: nothing of it is touched. */
    pthread_mutex_unlock(&s->calls_lock);
    return NULL;
}

static rf_mcp_call *find_locked(rf_mcp_server *s, json_t *id)
{
    for (rf_mcp_call *c = s->calls; c; c = c->next)
        if (json_equal(c->id, id))
            return c;
    return NULL;
}

int rf_mcp_calls_start(rf_mcp_server *s, json_t *id, const rf_mcp_tool *tool, json_t *args, json_t *progress_token,
                       rf_mcp_batch *batch)
{
    pthread_mutex_lock(&s->calls_lock);
    if (s->n_calls >= s->opts.max_concurrent_calls) {
        pthread_mutex_unlock(&s->calls_lock);
        /* A tool error, not a protocol one: the model can wait and retry. */
        rf_mcp_reply(s, batch,
                     rf_mcp_response(id, rf_mcp_tool_textf(true,
                                                           "%s: too many tool calls running at once (limit %u); "
                                                           "retry when one has finished",
                                                           tool->name, s->opts.max_concurrent_calls)));
        return -1;
    }
    if (find_locked(s, id)) {
        pthread_mutex_unlock(&s->calls_lock);
        rf_mcp_reply(s, batch,
                     rf_mcp_error(id, RF_JSONRPC_INVALID_REQUEST, "request id already used by a running call"));
        return -1;
    }
    rf_mcp_call *c = calloc(1, sizeof *c);
    if (!c) {
        pthread_mutex_unlock(&s->calls_lock);
        rf_mcp_reply(s, batch, rf_mcp_error(id, RF_JSONRPC_INTERNAL_ERROR, "out of memory"));
        return -1;
    }
    c->server = s;
    /* Copies, not references: jansson values are not thread-safe, and the
     * reading thread frees the message these came in while the worker
     * still uses them (a data race on the refcounts TSan found). */
    c->id = json_deep_copy(id);
    c->args = json_deep_copy(args);
    c->progress_token = progress_token ? json_deep_copy(progress_token) : NULL;
    if (!c->id || !c->args || (progress_token && !c->progress_token)) {
        pthread_mutex_unlock(&s->calls_lock);
        rf_mcp_reply(s, batch, rf_mcp_error(id, RF_JSONRPC_INTERNAL_ERROR, "out of memory"));
        call_free(c);
        return -1;
    }
    c->tool = tool;
    c->batch = batch;
    c->next = s->calls;
    s->calls = c;
    s->n_calls++;
    if (s->n_idle > 0) { /* claim a waiting worker */
        s->n_idle--;
        if (s->queue_tail)
            s->queue_tail->queued_next = c;
        else
            s->queue = c;
        s->queue_tail = c;
        pthread_mutex_unlock(&s->calls_lock);
        /* After the unlock: a worker woken while we still held the lock
         * would only block on it and need a second wake-up (seen in
         * strace on every call: FUTEX_WAIT on calls_lock, then a WAKE). */
        pthread_cond_signal(&s->work);
        return 0;
    }
    s->n_workers++;
    pthread_mutex_unlock(&s->calls_lock);

    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&thread, &attr, worker, c);
    pthread_attr_destroy(&attr);
    if (e != 0) {
        pthread_mutex_lock(&s->calls_lock);
        unlink_call(s, c);
        s->n_workers--;
        pthread_mutex_unlock(&s->calls_lock);
        rf_mcp_reply(s, batch, rf_mcp_error(id, RF_JSONRPC_INTERNAL_ERROR, "cannot start a worker: %s", strerror(e)));
        call_free(c);
        return -1;
    }
    return 0;
}

/* Locked: mark the call cancelled and end its sandbox at once. SIGKILL to
 * the sandbox's init takes its whole pid namespace with it; rf_proc_kill is
 * a pidfd signal, safe while the worker waits on the same proc. */
static void cancel_locked(rf_mcp_call *c)
{
    c->cancelled = true;
    if (c->proc)
        rf_proc_kill(c->proc, SIGKILL);
}

void rf_mcp_calls_cancel(rf_mcp_server *s, json_t *id, const char *reason)
{
    pthread_mutex_lock(&s->calls_lock);
    rf_mcp_call *c = find_locked(s, id);
    if (c) {
        rf_mcp_log(s, RF_MCP_LOG_DEBUG, "%s: cancelled by the client%s%.200s", c->tool->name, reason ? ": " : "",
                   reason ? reason : "");
        cancel_locked(c);
    }
    pthread_mutex_unlock(&s->calls_lock);
}

void rf_mcp_calls_finish(rf_mcp_server *s, unsigned grace_ms)
{
    struct timespec until = rf_clock_after_ms(CLOCK_REALTIME, grace_ms);
    pthread_mutex_lock(&s->calls_lock);
    while (s->n_calls > 0 && pthread_cond_timedwait(&s->calls_changed, &s->calls_lock, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&s->calls_lock);
}

void rf_mcp_calls_drain(rf_mcp_server *s)
{
    pthread_mutex_lock(&s->calls_lock);
    for (rf_mcp_call *c = s->calls; c; c = c->next)
        cancel_locked(c);
    s->draining = true; /* the idle workers end (a queued call is still run) */
    pthread_cond_broadcast(&s->work);
    while (s->n_workers > 0)
        pthread_cond_wait(&s->calls_changed, &s->calls_lock);
    s->draining = false; /* no worker is left: later calls start their own */
    pthread_mutex_unlock(&s->calls_lock);
}

void rf_mcp_call_attach(rf_mcp_call *c, rf_proc *proc)
{
    rf_mcp_server *s = c->server;
    pthread_mutex_lock(&s->calls_lock);
    c->proc = proc;
    if (c->cancelled) /* cancelled while it was being started */
        rf_proc_kill(proc, SIGKILL);
    pthread_mutex_unlock(&s->calls_lock);
}

void rf_mcp_call_detach(rf_mcp_call *c)
{
    pthread_mutex_lock(&c->server->calls_lock);
    c->proc = NULL;
    pthread_mutex_unlock(&c->server->calls_lock);
}
