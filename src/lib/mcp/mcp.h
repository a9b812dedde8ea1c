/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The MCP server: JSON-RPC 2.0 over newline-delimited stdio (jsonrpc.c),
 * the lifecycle and dispatch (server.c), in-flight tool calls on worker
 * threads with cancellation (calls.c), the tool table and the file tools
 * (tools.c), and the exec tool (exec.c). */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC 2.0 error codes. */
enum {
    RF_JSONRPC_PARSE_ERROR = -32700,
    RF_JSONRPC_INVALID_REQUEST = -32600,
    RF_JSONRPC_METHOD_NOT_FOUND = -32601,
    RF_JSONRPC_INVALID_PARAMS = -32602,
    RF_JSONRPC_INTERNAL_ERROR = -32603,
};

#define RF_MCP_DEFAULT_MAX_MESSAGE (4u << 20)
#define RF_MCP_DEFAULT_MAX_OUTPUT (64u << 10)
#define RF_MCP_DEFAULT_MAX_CALLS 8u
/* Request ids are echoed back; a string id longer than this is refused. */
#define RF_MCP_MAX_ID_LEN 256
/* Longest batch accepted (protocol 2025-03-26 only). */
#define RF_MCP_MAX_BATCH 64

/* ── jsonrpc.c: one message ─────────────────────────────────────────── */
typedef enum {
    RF_MCP_MSG_REQUEST,      /* method + id: needs exactly one response */
    RF_MCP_MSG_NOTIFICATION, /* method, no id: never answered */
    RF_MCP_MSG_RESPONSE,     /* result or error + id: we send no requests */
    RF_MCP_MSG_BATCH,        /* a JSON array (JSON-RPC batch) */
    RF_MCP_MSG_INVALID,      /* answer with error_code / error */
} rf_mcp_msg_kind;

typedef struct rf_mcp_msg {
    rf_mcp_msg_kind kind;
    json_t *root;       /* owned reference to the whole message */
    json_t *id;         /* borrowed; NULL when absent or unusable */
    const char *method; /* borrowed */
    json_t *params;     /* borrowed; NULL when absent */
    int error_code;     /* INVALID: RF_JSONRPC_* */
    char error[200];    /* INVALID: why, for the error message */
} rf_mcp_msg;

/* Parse one line (without its newline). Never fails: out->kind says what
 * it was; INVALID carries the error to answer with. */
void rf_mcp_msg_parse(const char *buf, size_t len, rf_mcp_msg *out);
/* Classify an already parsed value (a batch element); takes a reference. */
void rf_mcp_msg_classify(json_t *value, rf_mcp_msg *out);
void rf_mcp_msg_clear(rf_mcp_msg *m);

/* {"jsonrpc":"2.0","id":id,"result":result}; steals result. id NULL → null. */
json_t *rf_mcp_response(json_t *id, json_t *result);
json_t *rf_mcp_error(json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Splits a byte stream into lines, each at most `max` bytes; a longer line
 * is dropped up to its newline and reported as too long. */
typedef struct rf_mcp_lines {
    char *buf;
    size_t len, cap, max;
    bool discarding; /* inside an over-long line */
} rf_mcp_lines;
typedef enum { RF_MCP_LINE_NONE, RF_MCP_LINE_OK, RF_MCP_LINE_TOO_LONG } rf_mcp_line_result;
int rf_mcp_lines_init(rf_mcp_lines *l, size_t max);
void rf_mcp_lines_free(rf_mcp_lines *l);
/* Feed bytes; consumed is set to how many were used. Returns OK with
 * *line and *len pointing at a complete line (valid until the next call),
 * TOO_LONG once per over-long line, or NONE when more input is needed. */
rf_mcp_line_result rf_mcp_lines_feed(rf_mcp_lines *l, const char *data, size_t n, size_t *consumed,
                                     const char **line, size_t *len);

/* Valid UTF-8 copy of arbitrary bytes: invalid sequences become U+FFFD. */
char *rf_mcp_utf8_sanitize(const char *buf, size_t len, size_t *out_len);

/* ── server.c ─────────────────────────────────────────────────────────── */
typedef struct rf_mcp_batch rf_mcp_batch;
typedef struct rf_mcp_call rf_mcp_call;
typedef struct rf_fs rf_fs;

/* Where finished messages go (one complete JSON text, no newline). */
typedef int (*rf_mcp_write_fn)(void *userdata, const char *text, size_t len);

struct rf_mcp_server {
    const rf_policy *policy; /* borrowed; NULL only in the fuzz target: no tools */
    rf_mcp_options opts;
    rf_guard *guard; /* safe to share between threads */
    rf_fs *fs;
    pthread_mutex_t fs_lock;

    pthread_mutex_t out_lock; /* one message, one line, never interleaved */
    rf_mcp_write_fn write;
    void *write_ud;
    int out_fd;
    bool out_broken;

    const char *version; /* negotiated protocol version, NULL before initialize */
    bool initialized;    /* notifications/initialized received */

    pthread_mutex_t calls_lock;
    pthread_cond_t calls_changed;
    rf_mcp_call *calls; /* in flight, cancellable */
    unsigned n_calls;   /* length of calls: what the cap counts */
    unsigned n_workers; /* threads still running (they may be answering) */
    /* Workers are kept for the next call (calls.c): a call is queued for
     * an idle one, which it claims by taking it off n_idle. */
    pthread_cond_t work;      /* a call queued, or draining */
    rf_mcp_call *queue, *queue_tail;
    unsigned n_idle;          /* waiting workers no queued call has claimed */
    bool draining;            /* rf_mcp_calls_drain: idle workers end */
    bool warned_plan;
    /* logging/setLevel: the most verbose syslog severity (0 emergency ..
     * 7 debug) the client asked for as notifications/message; -1 until it
     * asks. Read and written atomically (workers log). */
    int client_log_level;
    struct rf_pool *pool; /* exec's warm pool, or NULL (build each sandbox on demand) */
    int devnull;          /* /dev/null, read-only: the stdin of every exec without one */
    /* elicit.c: the client declared `elicitation`; questions in flight. */
    bool client_elicits;
    pthread_mutex_t ask_lock;
    pthread_cond_t ask_answered;
    struct rf_mcp_pending *pending;
    unsigned long long ask_next;
    bool input_closed; /* end of input: no answer can come, questions are refused */
};

/* elicit.c: network.ask: mcp. A proxy question becomes elicitation/create
 * to the client (rf_plan_set_ask's callback, data = the server); its
 * response, read by the server's loop, is handed to rf_mcp_elicit_response.
 * Without the client's elicitation capability nothing is asked: the call's
 * result names the refused hosts (exec.c). */
int rf_mcp_elicit_ask(void *data, const rf_ask_request *q, int *ret_scope);
/* A response from the client: true when it answered one of our questions. */
bool rf_mcp_elicit_response(rf_mcp_server *s, const rf_mcp_msg *m);
/* End of input: questions waiting and to come are refused at once. */
void rf_mcp_elicit_input_closed(rf_mcp_server *s);
/* Send a message of ours (a request) outside any batch; steals msg. */
void rf_mcp_send(rf_mcp_server *s, json_t *msg);

void rf_mcp_log(rf_mcp_server *s, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Send a notification (method + params, stolen) outside any batch. */
void rf_mcp_notify(rf_mcp_server *s, const char *method, json_t *params);
/* Send a response for a request (into its batch when it came in one);
 * steals msg. msg NULL: the request ends without an answer (cancelled). */
void rf_mcp_reply(rf_mcp_server *s, rf_mcp_batch *batch, json_t *msg);
/* Protocol version checks: does the negotiated version have this feature? */
bool rf_mcp_has_structured_output(const rf_mcp_server *s);
bool rf_mcp_has_tool_annotations(const rf_mcp_server *s);
/* Handle one line as it came from the client (used by serve and the fuzzer). */
void rf_mcp_server_handle_line(rf_mcp_server *s, const char *line, size_t len);
/* A server without policy or tools, writing through fn (fuzz target). */
rf_mcp_server *rf_mcp_server_new_bare(rf_mcp_write_fn fn, void *userdata);

/* ── calls.c: tools/call on worker threads ────────────────────────────── */
struct rf_mcp_call {
    rf_mcp_call *next;
    rf_mcp_call *queued_next; /* in server->queue, for an idle worker */
    rf_mcp_server *server;
    json_t *id;   /* owned */
    json_t *args; /* owned, an object */
    const struct rf_mcp_tool *tool;
    rf_mcp_batch *batch;
    bool cancelled; /* under server->calls_lock */
    rf_proc *proc;  /* the running sandbox, under server->calls_lock */
    json_t *progress_token; /* owned; params._meta.progressToken, or NULL */
    rf_proc *finished; /* its tree is gone; freed (init reaped, cgroup removed)
                          after the answer is sent, so the answer does not wait
                          for the kernel's namespace teardown */
};

/* Start a tools/call; the answer is sent by the worker. Returns < 0 (and
 * answers with an error itself) when it cannot start. */
int rf_mcp_calls_start(rf_mcp_server *s, json_t *id, const struct rf_mcp_tool *tool, json_t *args,
                       json_t *progress_token, rf_mcp_batch *batch);
/* notifications/cancelled: kill the call's sandbox, drop its answer. */
void rf_mcp_calls_cancel(rf_mcp_server *s, json_t *id, const char *reason);
/* At the end of input, how long the calls in flight have to finish and
 * be answered before they are stopped: a client that closes stdin and
 * waits (MCP's stdio shutdown) gets its answers; a command longer than
 * this is killed, as the client will SIGTERM us soon anyway. */
#define RF_MCP_EOF_GRACE_MS 5000
/* Wait up to grace_ms for the calls in flight to finish (and be answered). */
void rf_mcp_calls_finish(rf_mcp_server *s, unsigned grace_ms);
/* Cancel everything and wait for every worker (end of input). */
void rf_mcp_calls_drain(rf_mcp_server *s);
/* For the exec tool: publish the running sandbox so it can be cancelled
 * (it is killed at once if the call was cancelled already); detach it
 * before freeing it. */
void rf_mcp_call_attach(rf_mcp_call *c, rf_proc *proc);
void rf_mcp_call_detach(rf_mcp_call *c);

/* ── tools.c: the tool table ──────────────────────────────────────────── */
typedef enum { RF_MCP_ARG_STRING, RF_MCP_ARG_INTEGER, RF_MCP_ARG_NUMBER, RF_MCP_ARG_BOOLEAN } rf_mcp_arg_type;
typedef struct rf_mcp_arg {
    const char *name;
    rf_mcp_arg_type type;
    bool required;
    const char *description;
} rf_mcp_arg;
typedef json_t *(*rf_mcp_tool_fn)(rf_mcp_server *s, rf_mcp_call *call, json_t *args);
typedef struct rf_mcp_tool {
    const char *name, *title, *description;
    const rf_mcp_arg *args; /* terminated by a NULL name */
    bool read_only, destructive, idempotent;
    rf_mcp_tool_fn run;
    json_t *(*output_schema)(void);
} rf_mcp_tool;

/* The tool named so, if the policy offers it (not in tools.disabled). */
const rf_mcp_tool *rf_mcp_tool_find(const rf_mcp_server *s, const char *name);
/* The tools/list result. */
json_t *rf_mcp_tools_list(const rf_mcp_server *s);
/* Check args against the tool's table; NULL if fine, else why (malloc'd). */
char *rf_mcp_tool_check_args(const rf_mcp_tool *tool, json_t *args);
/* A CallToolResult with one text block. */
json_t *rf_mcp_tool_text(const char *text, bool is_error);
json_t *rf_mcp_tool_textf(bool is_error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
json_t *rf_mcp_tool_from_error(const rf_error *err);

/* ── exec.c and progress.c ───────────────────────────────────────────── */
/* One captured stream of an exec: kept up to cap, the rest counted. */
typedef struct rf_mcp_capture {
    int fd;
    bool is_stderr;
    char *buf;
    size_t len, cap;
    size_t dropped;  /* bytes read past the cap */
    size_t streamed; /* bytes of buf already sent as progress */
    bool told_cut;   /* the "no longer streamed" notice went out */
} rf_mcp_capture;

typedef struct rf_mcp_exec_io {
    rf_mcp_server *server;
    rf_mcp_call *call;
    rf_mcp_capture caps[2]; /* stdout, stderr */
    unsigned progress;      /* notifications/progress sent so far */
} rf_mcp_exec_io;

/* A notifications/progress is at most this long (a longer line is split). */
#define RF_MCP_PROGRESS_MAX_LINE 4096u

/* Send what c captured since the last call as notifications/progress,
 * complete lines only unless final (end of the stream). Nothing without a
 * progressToken, or once the call is cancelled. Called by the one thread
 * that reads the call's pipes, so the counter needs no lock. */
void rf_mcp_progress_flush(rf_mcp_exec_io *io, rf_mcp_capture *c, bool final);

json_t *rf_mcp_tool_exec(rf_mcp_server *s, rf_mcp_call *call, json_t *args);
/* A call's finished sandbox (NULL ignored), once its answer is out: to
 * the warm pool's thread, which frees it and then builds the next one;
 * freed here without a pool. */
void rf_mcp_exec_release(rf_mcp_server *s, rf_proc *proc);
json_t *rf_mcp_exec_output_schema(void);
