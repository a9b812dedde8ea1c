/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The MCP lifecycle and dispatch: initialize (version negotiation), ping,
 * tools/list, tools/call, the notifications, and JSON-RPC errors for
 * everything else. The reading thread never blocks on a tool: tools/call
 * goes to a worker (calls.c), so ping and cancellation stay responsive.
 * Every error is answered and the server keeps serving. */
#include "mcp/mcp.h"
#include "model/policy.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Newest first: what the official TypeScript SDK (1.32) negotiates. */
static const char *const protocol_versions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", NULL,
};

RF_EXPORT const char *const *rf_mcp_protocol_versions(void)
{
    return protocol_versions;
}

/* structuredContent, outputSchema and titles came with 2025-06-18; tool
 * annotations and batches with 2025-03-26 (batches went again in 2025-06-18).
 * The dates compare as strings. */
bool rf_mcp_has_structured_output(const rf_mcp_server *s)
{
    return s->version && strcmp(s->version, "2025-06-18") >= 0;
}

bool rf_mcp_has_tool_annotations(const rf_mcp_server *s)
{
    return s->version && strcmp(s->version, "2025-03-26") >= 0;
}

static bool has_batches(const rf_mcp_server *s)
{
    return s->version && !strcmp(s->version, "2025-03-26");
}

/* MCP's levels are syslog's, most severe first; ours map onto four of them. */
static const char *const syslog_levels[] = { "emergency", "alert", "critical", "error", "warning",
                                             "notice",    "info",  "debug",    NULL };
static const int our_severity[] = { [RF_MCP_LOG_ERROR] = 3, [RF_MCP_LOG_WARNING] = 4, [RF_MCP_LOG_INFO] = 6,
                                    [RF_MCP_LOG_DEBUG] = 7 };

static void log_host(rf_mcp_server *s, int level, const char *line)
{
    if (s->opts.log && level <= s->opts.log_level)
        s->opts.log(s->opts.log_userdata, level, line);
}

void rf_mcp_log(rf_mcp_server *s, int level, const char *fmt, ...)
{
    int wanted = __atomic_load_n(&s->client_log_level, __ATOMIC_RELAXED);
    bool to_client = level >= RF_MCP_LOG_ERROR && level <= RF_MCP_LOG_DEBUG && our_severity[level] <= wanted;
    if (!to_client && (!s->opts.log || level > s->opts.log_level))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log_host(s, level, line);
    if (to_client)
        rf_mcp_notify(s, "notifications/message",
                      json_pack("{s:s, s:s, s:s}", "level", syslog_levels[our_severity[level]], "logger",
                                "ringfence", "data", line));
}

/* ── Output ──────────────────────────────────────────────────────────── */

struct rf_mcp_batch {
    unsigned pending; /* answers still due, +1 while the batch is dispatched */
    json_t *responses;
};

static int write_fd(void *userdata, const char *text, size_t len)
{
    rf_mcp_server *s = userdata;
    static char newline[] = "\n";
    struct iovec iov[2] = { { (void *)text, len }, { newline, 1 } };
    while (iov[1].iov_len > 0) {
        ssize_t n = writev(s->out_fd, iov[0].iov_len ? iov : iov + 1, iov[0].iov_len ? 2 : 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        for (int i = 0; i < 2 && n > 0; i++) {
            size_t k = (size_t)n < iov[i].iov_len ? (size_t)n : iov[i].iov_len;
            iov[i].iov_base = (char *)iov[i].iov_base + k;
            iov[i].iov_len -= k;
            n -= (ssize_t)k;
        }
    }
    return 0;
}

static void send_locked(rf_mcp_server *s, json_t *msg)
{
    /* JSON_COMPACT never emits a raw newline (strings escape it): one
     * message is one line. */
    char *text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text) {
        log_host(s, RF_MCP_LOG_ERROR, "cannot encode a response (out of memory)"); /* out_lock held */
        return;
    }
    if (!s->out_broken && s->write(s->write_ud, text, strlen(text)) < 0) {
        s->out_broken = true;
        char line[200];
        snprintf(line, sizeof line, "cannot write to the client: %s", strerror(errno));
        log_host(s, RF_MCP_LOG_ERROR, line); /* out_lock held: not to the client */
    }
    free(text);
}

void rf_mcp_reply(rf_mcp_server *s, rf_mcp_batch *batch, json_t *msg)
{
    pthread_mutex_lock(&s->out_lock);
    if (!batch) {
        if (msg)
            send_locked(s, msg);
    } else {
        if (msg)
            json_array_append(batch->responses, msg);
        if (--batch->pending == 0) {
            /* A batch of notifications only gets no answer at all. */
            if (json_array_size(batch->responses) > 0)
                send_locked(s, batch->responses);
            json_decref(batch->responses);
            free(batch);
        }
    }
    pthread_mutex_unlock(&s->out_lock);
    json_decref(msg);
}

void rf_mcp_send(rf_mcp_server *s, json_t *msg)
{
    if (!msg)
        return;
    pthread_mutex_lock(&s->out_lock);
    send_locked(s, msg);
    pthread_mutex_unlock(&s->out_lock);
    json_decref(msg);
}

void rf_mcp_notify(rf_mcp_server *s, const char *method, json_t *params)
{
    json_t *msg = params ? json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params) : NULL;
    if (!msg)
        return;
    pthread_mutex_lock(&s->out_lock);
    send_locked(s, msg);
    pthread_mutex_unlock(&s->out_lock);
    json_decref(msg);
}

static void reply_error(rf_mcp_server *s, rf_mcp_batch *batch, json_t *id, int code, const char *why)
{
    rf_mcp_reply(s, batch, rf_mcp_error(id, code, "%s", why));
}

/* ── Methods ─────────────────────────────────────────────────────────── */

static const char *pick_version(const char *asked)
{
    for (size_t i = 0; protocol_versions[i]; i++)
        if (!strcmp(asked, protocol_versions[i]))
            return protocol_versions[i];
    return protocol_versions[0]; /* the client decides whether it can talk to us */
}

/* What the model should know about where its commands run. */
static char *instructions(const rf_mcp_server *s)
{
    const rf_policy *p = s->policy;
    if (!p)
        return NULL;
    char *text = NULL;
    double t = p->limits.timeout_s > 0 ? p->limits.timeout_s : p->tools.exec.timeout_s;
    if (asprintf(&text,
                 "Tools of ringfence, a sandbox. Every exec runs `/bin/sh -c COMMAND` in a fresh sandbox: "
                 "the workspace %s is the working directory and is writable; system directories are "
                 "read-only; nothing else of the user is visible; network: %s; the whole process tree is "
                 "stopped after %g s by default. Commands with dangerous patterns or absolute paths outside "
                 "the workspace are refused. %s",
                 p->workspace,
                 p->network == RF_NET_HOST        ? "the host's"
                 : p->network == RF_NET_ALLOWLIST ? "only the allowed names, through the proxy in HTTP_PROXY"
                                                  : "none (loopback only)",
                 t,
                 /* changes: overlay: what is said must match what is offered (tools.c) */
                 p->changes == RF_CHANGES_OVERLAY && p->session
                     ? "Every command of this connection writes into one session: the next command sees what "
                       "the last one changed, the user's real workspace does not until the user applies it; "
                       "changes_diff shows the changes so far."
                     : "The file tools read and write only inside the workspace; relative paths start there.") < 0)
        return NULL;
    return text;
}

static void do_initialize(rf_mcp_server *s, rf_mcp_msg *m, rf_mcp_batch *batch)
{
    json_t *asked = json_object_get(m->params, "protocolVersion");
    json_t *caps = json_object_get(m->params, "capabilities");
    json_t *info = json_object_get(m->params, "clientInfo");
    if (!json_is_object(m->params) || !json_is_string(asked) || (caps && !json_is_object(caps)) ||
        (info && !json_is_object(info)))
        return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_PARAMS,
                           "initialize: params must be an object with a string \"protocolVersion\"");
    if (s->version)
        return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_REQUEST, "initialize: already initialized");
    s->version = pick_version(json_string_value(asked));
    /* elicitation/create came with 2025-06-18. */
    s->client_elicits = json_is_object(json_object_get(caps, "elicitation")) && rf_mcp_has_structured_output(s);
    const char *client = json_string_value(json_object_get(info, "name"));
    rf_mcp_log(s, RF_MCP_LOG_INFO, "client %s asked for protocol %s, serving %s", client ? client : "(unnamed)",
               json_string_value(asked), s->version);

    json_t *server_info = json_pack("{s:s, s:s}", "name", "ringfence", "version", rf_version());
    if (rf_mcp_has_structured_output(s))
        json_object_set_new(server_info, "title", json_string("ringfence sandbox"));
    json_t *result = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:o}", "protocolVersion", s->version, "capabilities",
                               "tools", "listChanged", 0, "logging", "serverInfo", server_info);
    char *text = instructions(s);
    if (text)
        json_object_set_new(result, "instructions", json_string(text));
    free(text);
    rf_mcp_reply(s, batch, rf_mcp_response(m->id, result));
}

/* params._meta.progressToken when it is one (a string or an integer);
 * anything else is ignored, as the client then expects no progress. */
static json_t *progress_token(json_t *params)
{
    json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
    if (json_is_string(token) && json_string_length(token) <= RF_MCP_MAX_ID_LEN)
        return token;
    return json_is_integer(token) ? token : NULL;
}

static void do_tools_call(rf_mcp_server *s, rf_mcp_msg *m, rf_mcp_batch *batch)
{
    json_t *name = json_object_get(m->params, "name");
    json_t *args = json_object_get(m->params, "arguments");
    if (!json_is_object(m->params) || !json_is_string(name) || (args && !json_is_object(args) && !json_is_null(args)))
        return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_PARAMS,
                           "tools/call: params must be an object with a string \"name\" and an object "
                           "\"arguments\"");
    const rf_mcp_tool *tool = rf_mcp_tool_find(s, json_string_value(name));
    if (!tool) {
        /* a disabled tool gets the same refusal as the CLI's (policy/tools.c) */
        rf_error *why = NULL;
        if (s->policy && rf_policy_check_tool(s->policy, json_string_value(name), &why) < 0)
            rf_mcp_reply(s, batch, rf_mcp_error(m->id, RF_JSONRPC_INVALID_PARAMS, "%s", rf_error_message(why)));
        else
            rf_mcp_reply(s, batch, rf_mcp_error(m->id, RF_JSONRPC_INVALID_PARAMS, "unknown tool: %.100s",
                                                json_string_value(name)));
        rf_error_free(why);
        return;
    }
    json_t *empty = json_is_object(args) ? NULL : json_object();
    json_t *use = empty ? empty : args;
    /* Wrong arguments are the model's mistake to fix: a tool error it can
     * read (MCP 2025-11-25), not a protocol error. */
    char *why = rf_mcp_tool_check_args(tool, use);
    if (why)
        rf_mcp_reply(s, batch, rf_mcp_response(m->id, rf_mcp_tool_textf(true, "%s: %s", tool->name, why)));
    else
        rf_mcp_calls_start(s, m->id, tool, use, progress_token(m->params), batch);
    free(why);
    json_decref(empty);
}

/* logging/setLevel: from now on, log lines at this severity or above also
 * go to the client as notifications/message. */
static void do_set_level(rf_mcp_server *s, rf_mcp_msg *m, rf_mcp_batch *batch)
{
    const char *level = json_string_value(json_object_get(m->params, "level"));
    for (int i = 0; level && syslog_levels[i]; i++) {
        if (!strcmp(level, syslog_levels[i])) {
            __atomic_store_n(&s->client_log_level, i, __ATOMIC_RELAXED);
            return rf_mcp_reply(s, batch, rf_mcp_response(m->id, json_object()));
        }
    }
    reply_error(s, batch, m->id, RF_JSONRPC_INVALID_PARAMS,
                "logging/setLevel: \"level\" must be one of debug, info, notice, warning, error, critical, "
                "alert, emergency");
}

static void do_request(rf_mcp_server *s, rf_mcp_msg *m, rf_mcp_batch *batch)
{
    const char *method = m->method;
    bool known = !strcmp(method, "initialize") || !strcmp(method, "ping") || !strcmp(method, "tools/list") ||
                 !strcmp(method, "tools/call") || !strcmp(method, "logging/setLevel");
    if (!known) {
        rf_mcp_reply(s, batch, rf_mcp_error(m->id, RF_JSONRPC_METHOD_NOT_FOUND, "method not found: %.100s", method));
        return;
    }
    if (!strcmp(method, "initialize"))
        return do_initialize(s, m, batch);
    if (m->params && !json_is_object(m->params))
        return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_PARAMS, "params must be an object");
    if (!strcmp(method, "ping"))
        return rf_mcp_reply(s, batch, rf_mcp_response(m->id, json_object()));
    if (!s->version)
        return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_REQUEST,
                           "not initialized: send initialize first");
    if (!strcmp(method, "tools/list")) {
        json_t *cursor = json_object_get(m->params, "cursor");
        if (cursor && !json_is_null(cursor)) /* we never hand one out */
            return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_PARAMS, "tools/list: invalid cursor");
        return rf_mcp_reply(s, batch, rf_mcp_response(m->id, rf_mcp_tools_list(s)));
    }
    if (!strcmp(method, "logging/setLevel"))
        return do_set_level(s, m, batch);
    do_tools_call(s, m, batch);
}

static void do_notification(rf_mcp_server *s, rf_mcp_msg *m)
{
    if (!strcmp(m->method, "notifications/initialized")) {
        s->initialized = true;
    } else if (!strcmp(m->method, "notifications/cancelled")) {
        json_t *id = json_object_get(m->params, "requestId");
        const char *reason = json_string_value(json_object_get(m->params, "reason"));
        if (id && (json_is_string(id) || json_is_integer(id)))
            rf_mcp_calls_cancel(s, id, reason);
    } else {
        rf_mcp_log(s, RF_MCP_LOG_DEBUG, "ignoring notification %.100s", m->method);
    }
}

/* Exactly one rf_mcp_reply per message when it is part of a batch. */
static void handle_msg(rf_mcp_server *s, rf_mcp_msg *m, rf_mcp_batch *batch)
{
    switch (m->kind) {
    case RF_MCP_MSG_INVALID:
        rf_mcp_log(s, RF_MCP_LOG_DEBUG, "invalid message: %s", m->error);
        return reply_error(s, batch, m->id, m->error_code, m->error);
    case RF_MCP_MSG_BATCH:
        return reply_error(s, batch, NULL, RF_JSONRPC_INVALID_REQUEST, "a batch cannot contain a batch");
    case RF_MCP_MSG_RESPONSE:
        if (!rf_mcp_elicit_response(s, m))
            rf_mcp_log(s, RF_MCP_LOG_DEBUG, "ignoring a response to no question of ours");
        break;
    case RF_MCP_MSG_NOTIFICATION:
        do_notification(s, m);
        break;
    case RF_MCP_MSG_REQUEST:
        if (batch && !strcmp(m->method, "initialize"))
            return reply_error(s, batch, m->id, RF_JSONRPC_INVALID_REQUEST, "initialize cannot be part of a batch");
        return do_request(s, m, batch);
    }
    if (batch)
        rf_mcp_reply(s, batch, NULL);
}

static void handle_batch(rf_mcp_server *s, rf_mcp_msg *m)
{
    size_t n = json_array_size(m->root);
    if (!has_batches(s))
        return reply_error(s, NULL, NULL, RF_JSONRPC_INVALID_REQUEST,
                           s->version ? "JSON-RPC batches are not part of the negotiated protocol version"
                                      : "JSON-RPC batches are not accepted before initialize");
    if (n == 0 || n > RF_MCP_MAX_BATCH) {
        rf_mcp_reply(s, NULL,
                     rf_mcp_error(NULL, RF_JSONRPC_INVALID_REQUEST, "a batch must hold 1 to %d messages",
                                  RF_MCP_MAX_BATCH));
        return;
    }
    rf_mcp_batch *batch = calloc(1, sizeof *batch);
    if (!batch || !(batch->responses = json_array())) {
        free(batch);
        return reply_error(s, NULL, NULL, RF_JSONRPC_INTERNAL_ERROR, "out of memory");
    }
    batch->pending = (unsigned)n + 1;
    for (size_t i = 0; i < n; i++) {
        rf_mcp_msg em;
        rf_mcp_msg_classify(json_array_get(m->root, i), &em);
        handle_msg(s, &em, batch);
        rf_mcp_msg_clear(&em);
    }
    rf_mcp_reply(s, batch, NULL); /* the dispatcher's own hold */
}

void rf_mcp_server_handle_line(rf_mcp_server *s, const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == len) /* blank lines between messages are harmless */
        return;
    rf_mcp_msg m;
    rf_mcp_msg_parse(line, len, &m);
    if (m.kind == RF_MCP_MSG_BATCH)
        handle_batch(s, &m);
    else
        handle_msg(s, &m, NULL);
    rf_mcp_msg_clear(&m);
}

/* ── Life of a server ────────────────────────────────────────────────── */

static rf_mcp_server *server_alloc(const rf_mcp_options *opts)
{
    rf_mcp_server *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (opts)
        s->opts = *opts;
    if (!s->opts.max_output_bytes)
        s->opts.max_output_bytes = RF_MCP_DEFAULT_MAX_OUTPUT;
    if (!s->opts.max_message_bytes)
        s->opts.max_message_bytes = RF_MCP_DEFAULT_MAX_MESSAGE;
    if (!s->opts.max_concurrent_calls)
        s->opts.max_concurrent_calls = RF_MCP_DEFAULT_MAX_CALLS;
    pthread_mutex_init(&s->fs_lock, NULL);
    pthread_mutex_init(&s->out_lock, NULL);
    pthread_mutex_init(&s->calls_lock, NULL);
    pthread_cond_init(&s->calls_changed, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_mutex_init(&s->ask_lock, NULL);
    pthread_cond_init(&s->ask_answered, NULL);
    s->out_fd = -1;
    s->devnull = -1;
    s->client_log_level = -1;
    s->write = write_fd;
    s->write_ud = s;
    return s;
}

rf_mcp_server *rf_mcp_server_new_bare(rf_mcp_write_fn fn, void *userdata)
{
    rf_mcp_server *s = server_alloc(NULL);
    if (s && fn) {
        s->write = fn;
        s->write_ud = userdata;
    }
    return s;
}

RF_EXPORT rf_mcp_server *rf_mcp_server_new(const rf_policy *policy, const rf_mcp_options *opts, rf_error **err)
{
    if (!policy) {
        rf_error_set(err, EINVAL, "mcp server: no policy");
        return NULL;
    }
    rf_mcp_server *s = server_alloc(opts);
    if (!s) {
        rf_error_set(err, ENOMEM, "mcp server");
        return NULL;
    }
    s->policy = policy;
    s->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (s->devnull < 0) {
        rf_error_set(err, errno, "mcp server: open /dev/null");
        rf_mcp_server_free(s);
        return NULL;
    }
    /* The guard judges paths from where exec's commands start. */
    s->guard = rf_guard_new_for_shell(policy, err);
    if (s->guard)
        s->fs = rf_fs_open_for_policy(policy, err);
    if (!s->guard || !s->fs) {
        rf_error_prefix(err, "mcp server");
        rf_mcp_server_free(s);
        return NULL;
    }
    /* exec's sandboxes built ahead: a call then only hands over its command.
     * Where the pool cannot be (another backend), exec builds on demand. */
    /* A warm pool's sandboxes are built ahead, each with a session of its
     * own: with changes: overlay every call runs in the connection's one. */
    if (s->opts.exec_pool_size && rf_policy_tool_enabled(policy, "exec") && policy->changes != RF_CHANGES_OVERLAY) {
        rf_error *perr = NULL;
        s->pool = rf_pool_new(policy, s->opts.exec_pool_size, &perr);
        if (!s->pool)
            rf_mcp_log(s, RF_MCP_LOG_INFO, "exec runs without a warm pool: %s", rf_error_message(perr));
        rf_error_free(perr);
    }
    return s;
}

static void serve_chunk(rf_mcp_server *s, rf_mcp_lines *lines, const char *data, size_t n)
{
    for (size_t off = 0; off < n;) {
        const char *line;
        size_t len, used;
        rf_mcp_line_result r = rf_mcp_lines_feed(lines, data + off, n - off, &used, &line, &len);
        off += used;
        if (r == RF_MCP_LINE_OK)
            rf_mcp_server_handle_line(s, line, len);
        else if (r == RF_MCP_LINE_TOO_LONG)
            rf_mcp_reply(s, NULL,
                         rf_mcp_error(NULL, RF_JSONRPC_INVALID_REQUEST, "message longer than %zu bytes",
                                      s->opts.max_message_bytes));
    }
}

RF_EXPORT int rf_mcp_server_serve(rf_mcp_server *s, int in_fd, int out_fd, rf_error **err)
{
    rf_mcp_lines lines;
    char *buf = malloc(65536);
    if (!buf || rf_mcp_lines_init(&lines, s->opts.max_message_bytes) < 0) {
        free(buf);
        return rf_error_set(err, ENOMEM, "mcp server");
    }
    s->out_fd = out_fd;
    int rc = 0;
    for (;;) {
        ssize_t n = read(in_fd, buf, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = rf_error_set(err, errno, "mcp server: read from the client");
            break;
        }
        if (n == 0) {
            if (lines.len > 0 && !lines.discarding) /* a last message without its newline */
                serve_chunk(s, &lines, "\n", 1);
            break;
        }
        serve_chunk(s, &lines, buf, (size_t)n);
    }
    /* The client is done: what it asked for is answered if it ends soon
     * (a scripted `printf ... | ringfence mcp` gets its results); a call
     * still running after the grace is stopped, unanswered. */
    rf_mcp_elicit_input_closed(s);
    rf_mcp_log(s, RF_MCP_LOG_DEBUG, "end of input; finishing running calls (at most %u ms)", RF_MCP_EOF_GRACE_MS);
    rf_mcp_calls_finish(s, RF_MCP_EOF_GRACE_MS);
    rf_mcp_calls_drain(s);
    rf_mcp_lines_free(&lines);
    free(buf);
    return rc;
}

RF_EXPORT void rf_mcp_server_free(rf_mcp_server *s)
{
    if (!s)
        return;
    rf_mcp_calls_drain(s);
    rf_pool_free(s->pool);
    if (s->devnull >= 0)
        close(s->devnull);
    rf_guard_free(s->guard);
    rf_fs_close(s->fs);
    pthread_mutex_destroy(&s->fs_lock);
    pthread_mutex_destroy(&s->out_lock);
    pthread_mutex_destroy(&s->calls_lock);
    pthread_cond_destroy(&s->calls_changed);
    pthread_cond_destroy(&s->work);
    pthread_mutex_destroy(&s->ask_lock);
    pthread_cond_destroy(&s->ask_answered);
    free(s);
}
