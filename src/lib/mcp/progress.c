/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Progress of a running exec: when tools/call carried
 * params._meta.progressToken, what the command writes goes to the client
 * as notifications/progress while it runs, one notification per batch of
 * complete lines (so a command that floods its output costs one message
 * per read, not one per line). Only what the answer will hold is streamed:
 * past the output cap one notice says so, and nothing more. All of it is
 * sent before the answer (the worker joins the reading thread first), so a
 * client never sees progress for a request it already has the answer of. */
#include "mcp/mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool call_cancelled(rf_mcp_call *call)
{
    rf_mcp_server *s = call->server;
    pthread_mutex_lock(&s->calls_lock);
    bool cancelled = call->cancelled;
    pthread_mutex_unlock(&s->calls_lock);
    return cancelled;
}

static void send_progress(rf_mcp_exec_io *io, const char *message)
{
    json_t *params = json_pack("{s:O, s:I, s:s}", "progressToken", io->call->progress_token, "progress",
                               (json_int_t)++io->progress, "message", message);
    if (params)
        rf_mcp_notify(io->server, "notifications/progress", params);
}

/* Send buf[from, to) as one notification, without its last newline. */
static void send_text(rf_mcp_exec_io *io, const rf_mcp_capture *c, size_t from, size_t to)
{
    size_t n = to - from;
    if (n > 0 && c->buf[to - 1] == '\n')
        n--;
    size_t len;
    char *text = rf_mcp_utf8_sanitize(c->buf + from, n, &len);
    if (!text)
        return;
    char *message = NULL;
    if (!c->is_stderr)
        send_progress(io, text);
    else if (asprintf(&message, "[stderr] %s", text) >= 0)
        send_progress(io, message);
    free(message);
    free(text);
}

/* Where the next notification ends: after the last newline within
 * RF_MCP_PROGRESS_MAX_LINE bytes, or at that many bytes when a line is
 * longer; 0 if only part of a line is waiting and more may come. */
static size_t next_end(const rf_mcp_capture *c, bool final)
{
    size_t pending = c->len - c->streamed;
    size_t window = pending < RF_MCP_PROGRESS_MAX_LINE ? pending : RF_MCP_PROGRESS_MAX_LINE;
    const char *nl = memrchr(c->buf + c->streamed, '\n', window);
    if (nl)
        return (size_t)(nl - c->buf) + 1;
    /* A full buffer takes no more bytes: what waits is all there will be. */
    if (final || pending >= RF_MCP_PROGRESS_MAX_LINE || c->len == c->cap)
        return c->streamed + window;
    return 0;
}

void rf_mcp_progress_flush(rf_mcp_exec_io *io, rf_mcp_capture *c, bool final)
{
    if (!io->call || !io->call->progress_token || call_cancelled(io->call))
        return;
    while (c->streamed < c->len) {
        size_t end = next_end(c, final);
        if (end == 0)
            break;
        send_text(io, c, c->streamed, end);
        c->streamed = end;
    }
    if (c->dropped && !c->told_cut && c->streamed == c->len) {
        char notice[160];
        snprintf(notice, sizeof notice, "[%s past %zu bytes is not streamed; the result says how much was cut]",
                 c->is_stderr ? "stderr" : "stdout", c->cap);
        send_progress(io, notice);
        c->told_cut = true;
    }
}
