/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* network.ask: mcp (issue 31): the proxy's question becomes an
 * elicitation/create request to the client, which asks its user. The
 * proxy thread that asks waits here for the response, which the server's
 * reading loop hands over by id. Accept allows (the form's "scope", once
 * by default); decline, cancel, an error or no response in time refuse. */
#include "mcp/mcp.h"
#include "model/policy.h"
#include "util/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct rf_mcp_pending {
    char id[40];
    json_t *response; /* the whole message, once it came */
    struct rf_mcp_pending *next;
} rf_mcp_pending;

static json_t *request(const char *id, const rf_ask_request *q)
{
    char msg[800], who[64] = "";
    if (q->process)
        snprintf(who, sizeof who, " Process: %s (pid %ld in the sandbox).", q->process, q->pid);
    snprintf(msg, sizeof msg,
             "The sandboxed command wants to connect to %s:%u (%s), which its allowlist does not name. "
             "Command: %.300s.%s Allow it?",
             q->host, q->port, q->protocol, q->command, who);
    return json_pack("{s:s, s:s, s:s, s:{s:s, s:{s:s, s:{s:{s:s, s:s, s:[s,s,s], s:s}}}}}", "jsonrpc", "2.0", "id", id,
                     "method", "elicitation/create", "params", "message", msg, "requestedSchema", "type", "object",
                     "properties", "scope", "type", "string", "title", "For how long", "enum", "once", "run",
                     "always", "description",
                     "once: this connection; run: until the command ends; always: also saved in your "
                     "ringfence answers.yaml");
}

/* 1 allow, 0 deny, with *scope. */
static int decision(const json_t *response, int *scope)
{
    json_t *result = json_object_get(response, "result");
    const char *action = json_string_value(json_object_get(result, "action"));
    *scope = RF_ASK_SCOPE_ONCE;
    if (!action || strcmp(action, "accept"))
        return 0;
    const char *sc = json_string_value(json_object_get(json_object_get(result, "content"), "scope"));
    if (sc && !strcmp(sc, "run"))
        *scope = RF_ASK_SCOPE_RUN;
    else if (sc && !strcmp(sc, "always"))
        *scope = RF_ASK_SCOPE_ALWAYS;
    else if (sc && strcmp(sc, "once"))
        return 0; /* a scope we did not offer: not an answer we understood */
    return 1;
}

int rf_mcp_elicit_ask(void *data, const rf_ask_request *q, int *ret_scope)
{
    rf_mcp_server *s = data;
    rf_mcp_pending p = { .response = NULL };
    *ret_scope = RF_ASK_SCOPE_ONCE;
    pthread_mutex_lock(&s->ask_lock);
    if (s->input_closed) { /* nobody can answer any more */
        pthread_mutex_unlock(&s->ask_lock);
        rf_mcp_log(s, RF_MCP_LOG_INFO, "%s:%u: the client closed its input, refused", q->host, q->port);
        return 0;
    }
    snprintf(p.id, sizeof p.id, "ringfence-ask-%llu", ++s->ask_next);
    p.next = s->pending;
    s->pending = &p;
    pthread_mutex_unlock(&s->ask_lock);

    rf_mcp_send(s, request(p.id, q));
    unsigned ms = s->policy && s->policy->net.ask_timeout_ms ? s->policy->net.ask_timeout_ms : 30000;
    struct timespec until = rf_clock_after_ms(CLOCK_REALTIME, ms);
    pthread_mutex_lock(&s->ask_lock);
    while (!p.response && !s->input_closed &&
           pthread_cond_timedwait(&s->ask_answered, &s->ask_lock, &until) != ETIMEDOUT)
        ;
    for (rf_mcp_pending **pp = &s->pending; *pp; pp = &(*pp)->next)
        if (*pp == &p) {
            *pp = p.next;
            break;
        }
    pthread_mutex_unlock(&s->ask_lock);
    int allow = p.response ? decision(p.response, ret_scope) : 0;
    rf_mcp_log(s, RF_MCP_LOG_INFO, "asked the client about %s:%u: %s", q->host, q->port,
               !p.response ? "no response in time, refused" : allow ? "allowed" : "refused");
    json_decref(p.response);
    return allow;
}

bool rf_mcp_elicit_response(rf_mcp_server *s, const rf_mcp_msg *m)
{
    const char *id = json_string_value(m->id);
    bool found = false;
    pthread_mutex_lock(&s->ask_lock);
    for (rf_mcp_pending *p = s->pending; id && p && !found; p = p->next)
        if (!strcmp(p->id, id) && !p->response) {
            p->response = json_incref(m->root);
            found = true;
        }
    if (found)
        pthread_cond_broadcast(&s->ask_answered);
    pthread_mutex_unlock(&s->ask_lock);
    return found;
}

void rf_mcp_elicit_input_closed(rf_mcp_server *s)
{
    pthread_mutex_lock(&s->ask_lock);
    s->input_closed = true;
    pthread_cond_broadcast(&s->ask_answered);
    pthread_mutex_unlock(&s->ask_lock);
}
