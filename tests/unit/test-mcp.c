/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The MCP layer without a client: message classification, line splitting,
 * UTF-8 repair, and the server's answers to the protocol methods, captured
 * through its output hook. No tool runs a sandbox here (tests/mcp does). */
#include "mcp/mcp.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ── Messages ─────────────────────────────────────────────────────────── */

static int kind_of(const char *text, int *code)
{
    rf_mcp_msg m;
    rf_mcp_msg_parse(text, strlen(text), &m);
    int k = m.kind;
    if (code)
        *code = m.error_code;
    rf_mcp_msg_clear(&m);
    return k;
}

static void test_classify(void)
{
    int code;
    is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL), RF_MCP_MSG_REQUEST, "request");
    is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"x\",\"params\":{}}", NULL), RF_MCP_MSG_REQUEST,
           "request with a string id");
    is_int(kind_of("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", NULL),
           RF_MCP_MSG_NOTIFICATION, "notification");
    is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", NULL), RF_MCP_MSG_RESPONSE, "response");
    is_int(kind_of("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", NULL), RF_MCP_MSG_BATCH, "batch");
    is_int(kind_of("{not json", &code), RF_MCP_MSG_INVALID, "garbage is invalid");
    is_int(code, RF_JSONRPC_PARSE_ERROR, "... with a parse error");
    is_int(kind_of("42", &code), RF_MCP_MSG_INVALID, "a bare number is invalid");
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "... as a request, not a parse error");
    kind_of("{\"id\":1,\"method\":\"ping\"}", &code);
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "missing jsonrpc");
    kind_of("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", &code);
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "wrong jsonrpc version");
    kind_of("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", &code);
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "a fractional id");
    kind_of("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", &code);
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "a null id (MCP forbids it)");
    kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", &code);
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "an empty method");
    kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":3}", &code);
    is_int(code, RF_JSONRPC_INVALID_REQUEST, "scalar params");
    is_int(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", &code), RF_MCP_MSG_INVALID,
           "duplicate keys are refused");

    rf_mcp_msg m;
    const char *bad = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":5}";
    rf_mcp_msg_parse(bad, strlen(bad), &m);
    ok(m.id && json_integer_value(m.id) == 7, "an invalid request keeps its usable id");
    rf_mcp_msg_clear(&m);

    char longid[RF_MCP_MAX_ID_LEN + 64];
    int n = snprintf(longid, sizeof longid, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"");
    memset(longid + n, 'x', RF_MCP_MAX_ID_LEN + 1);
    strcpy(longid + n + RF_MCP_MAX_ID_LEN + 1, "\"}");
    rf_mcp_msg_parse(longid, strlen(longid), &m);
    ok(m.kind == RF_MCP_MSG_INVALID && !m.id, "an over-long id is refused and not echoed");
    rf_mcp_msg_clear(&m);
}

/* ── Lines ────────────────────────────────────────────────────────────── */

static void test_lines(void)
{
    rf_mcp_lines l;
    rf_mcp_lines_init(&l, 16);
    const char *line;
    size_t len, used;
    const char *in = "abc\r\ndef";
    rf_mcp_line_result r = rf_mcp_lines_feed(&l, in, strlen(in), &used, &line, &len);
    ok(r == RF_MCP_LINE_OK && len == 3 && !memcmp(line, "abc", 3), "a CRLF line comes out without its CR");
    is_int(used, 5, "... and consumes up to its newline");
    r = rf_mcp_lines_feed(&l, in + used, strlen(in) - used, &used, &line, &len);
    is_int(r, RF_MCP_LINE_NONE, "a partial line waits");
    r = rf_mcp_lines_feed(&l, "gh\n", 3, &used, &line, &len);
    ok(r == RF_MCP_LINE_OK && len == 5 && !memcmp(line, "defgh", 5), "... and is joined with the next chunk");

    const char *big = "0123456789abcdefXYZ";
    r = rf_mcp_lines_feed(&l, big, strlen(big), &used, &line, &len);
    is_int(r, RF_MCP_LINE_NONE, "an over-long line is dropped while it lasts");
    r = rf_mcp_lines_feed(&l, "more\nok\n", 8, &used, &line, &len);
    is_int(r, RF_MCP_LINE_TOO_LONG, "... and reported once at its newline");
    r = rf_mcp_lines_feed(&l, "ok\n", 3, &used, &line, &len);
    ok(r == RF_MCP_LINE_OK && len == 2, "the next line is fine again");
    r = rf_mcp_lines_feed(&l, "0123456789abcdefg\n", 18, &used, &line, &len);
    is_int(r, RF_MCP_LINE_TOO_LONG, "a line one byte over the limit in one chunk");
    r = rf_mcp_lines_feed(&l, "0123456789abcdef\n", 17, &used, &line, &len);
    ok(r == RF_MCP_LINE_OK && len == 16, "a line exactly at the limit passes");
    rf_mcp_lines_free(&l);
}

/* ── UTF-8 ────────────────────────────────────────────────────────────── */

static void utf8_case(const char *in, size_t n, const char *want, const char *desc)
{
    size_t len;
    char *out = rf_mcp_utf8_sanitize(in, n, &len);
    is_str(out, want, desc);
    free(out);
}

static void test_utf8(void)
{
    utf8_case("plain", 5, "plain", "ASCII passes");
    utf8_case("h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 12, "h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80",
              "2, 3 and 4 byte sequences pass");
    utf8_case("a\xFF" "b", 3, "a\xEF\xBF\xBD" "b", "a stray byte becomes U+FFFD");
    utf8_case("\xC0\x80", 2, "\xEF\xBF\xBD\xEF\xBF\xBD", "an overlong NUL is refused");
    utf8_case("\xED\xA0\x80", 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "a surrogate is refused");
    utf8_case("x\xE2\x82", 3, "x\xEF\xBF\xBD\xEF\xBF\xBD", "a sequence cut at the end");
    utf8_case("\xF4\x90\x80\x80", 4, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", "above U+10FFFF");
}

/* ── The server's answers ─────────────────────────────────────────────── */

static json_t *out_msgs;

static int capture(void *ud, const char *text, size_t len)
{
    (void)ud;
    ok(memchr(text, '\n', len) == NULL, "an answer is a single line");
    json_array_append_new(out_msgs, json_loadb(text, len, 0, NULL));
    return 0;
}

/* Feed one line, return the one answer (or NULL when none came). */
static json_t *ask(rf_mcp_server *s, const char *line)
{
    json_array_clear(out_msgs);
    rf_mcp_server_handle_line(s, line, strlen(line));
    return json_array_size(out_msgs) == 1 ? json_array_get(out_msgs, 0) : NULL;
}

static int err_code(json_t *msg)
{
    return (int)json_integer_value(json_object_get(json_object_get(msg, "error"), "code"));
}

static void test_bare_server(void)
{
    rf_mcp_server *s = rf_mcp_server_new_bare(capture, NULL);
    json_t *r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
    is_int(err_code(r), RF_JSONRPC_INVALID_REQUEST, "tools/list before initialize is refused");
    r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    ok(r && json_is_object(json_object_get(r, "result")), "ping works before initialize");
    r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\"}}");
    is_str(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")), "2024-11-05",
           "an old supported version is kept");
    r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
    is_int(json_array_size(json_object_get(json_object_get(r, "result"), "tools")), 0,
           "a server without a policy offers no tool");
    r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"exec\"}}");
    is_int(err_code(r), RF_JSONRPC_INVALID_PARAMS, "an unknown tool is invalid params");
    r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/list\"}");
    is_int(err_code(r), RF_JSONRPC_METHOD_NOT_FOUND, "an unknown method");
    ok(ask(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":99}}") == NULL,
       "cancelling an unknown request is silently ignored");
    ok(ask(s, "   ") == NULL, "blank lines get no answer");
    r = ask(s, "[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]");
    is_int(err_code(r), RF_JSONRPC_INVALID_REQUEST, "no batches under 2024-11-05");
    rf_mcp_server_free(s);
}

/* ── Progress: how captured output becomes notifications/progress ──── */

static void feed(rf_mcp_exec_io *io, rf_mcp_capture *c, const char *data, bool final)
{
    size_t n = strlen(data), room = c->cap - c->len, keep = n < room ? n : room;
    memcpy(c->buf + c->len, data, keep);
    c->len += keep;
    c->dropped += n - keep;
    rf_mcp_progress_flush(io, c, final);
}

/* The messages sent since the last clear, joined with '|'. */
static char *sent_messages(void)
{
    static char joined[16384];
    joined[0] = 0;
    size_t i;
    json_t *m;
    json_array_foreach(out_msgs, i, m) {
        const char *text = json_string_value(json_object_get(json_object_get(m, "params"), "message"));
        if (i)
            strncat(joined, "|", sizeof joined - strlen(joined) - 1);
        strncat(joined, text ? text : "(none)", sizeof joined - strlen(joined) - 1);
    }
    json_array_clear(out_msgs);
    return joined;
}

static void test_progress(void)
{
    rf_mcp_server *s = rf_mcp_server_new_bare(capture, NULL);
    rf_mcp_call call = { .server = s, .progress_token = json_string("tok") };
    rf_mcp_exec_io io = { .server = s, .call = &call };
    char out_buf[10000], err_buf[100];
    rf_mcp_capture *out = &io.caps[0], *err = &io.caps[1];
    *out = (rf_mcp_capture){ .fd = -1, .buf = out_buf, .cap = sizeof out_buf };
    *err = (rf_mcp_capture){ .fd = -1, .buf = err_buf, .cap = sizeof err_buf, .is_stderr = true };
    json_array_clear(out_msgs);

    feed(&io, out, "one\ntw", false);
    is_str(sent_messages(), "one", "a complete line goes out, a partial one waits");
    json_t *first = NULL;
    feed(&io, out, "o\nthree\nfour\n", false);
    first = json_array_size(out_msgs) ? json_incref(json_array_get(out_msgs, 0)) : NULL;
    is_str(sent_messages(), "two\nthree\nfour", "lines read together are one notification");
    json_t *params = json_object_get(first, "params");
    is_str(json_string_value(json_object_get(first, "method")), "notifications/progress", "the method");
    is_str(json_string_value(json_object_get(params, "progressToken")), "tok", "the token as sent");
    is_int((int)json_integer_value(json_object_get(params, "progress")), 2, "the counter rises");
    json_decref(first);

    feed(&io, err, "oops\n", false);
    is_str(sent_messages(), "[stderr] oops", "stderr lines are marked");
    feed(&io, out, "no newline", false);
    is_str(sent_messages(), "", "nothing for a partial line...");
    rf_mcp_progress_flush(&io, out, true);
    is_str(sent_messages(), "no newline", "... until the stream ends");

    char big[RF_MCP_PROGRESS_MAX_LINE + 11];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    feed(&io, out, big, false);
    json_t *m0 = json_array_get(out_msgs, 0);
    ok(json_array_size(out_msgs) == 1 &&
           strlen(json_string_value(json_object_get(json_object_get(m0, "params"), "message"))) ==
               RF_MCP_PROGRESS_MAX_LINE,
       "a line longer than the limit is split at the limit");
    json_array_clear(out_msgs);
    rf_mcp_progress_flush(&io, out, true);
    is_str(sent_messages(), "xxxxxxxxxx", "and its rest follows");

    feed(&io, err, "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890"
                   "123456789\n", false);
    char *cut = sent_messages();
    ok(strstr(cut, "[stderr past 100 bytes is not streamed") != NULL, "past the cap: one notice");
    feed(&io, err, "more\n", true);
    is_str(sent_messages(), "", "then nothing more");

    call.cancelled = true;
    feed(&io, out, "after\n", true);
    is_str(sent_messages(), "", "nothing once the call is cancelled");
    call.cancelled = false;
    json_decref(call.progress_token);
    call.progress_token = NULL;
    feed(&io, out, "untokened\n", true);
    is_str(sent_messages(), "", "nothing without a progressToken");
    rf_mcp_server_free(s);
}

static void test_disabled_tools(const char *ws)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"workspace\":\"%s\",\"tools\":{\"disabled\":[\"exec\",\"write_file\"]}}", ws);
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    rf_context ctx = { .cwd = ws, .home = "/home/tester", .user = "tester", .rf_home = ws, .tmpdir = "/tmp" };
    rf_policy *p = NULL;
    if (rf_config_add_json(cfg, "test", json, &err) == 0)
        p = rf_policy_resolve(cfg, &ctx, &err);
    ok(p != NULL, "a policy with tools.disabled resolves");
    if (err)
        printf("# %s\n", rf_error_message(err));
    rf_mcp_server *s = p ? rf_mcp_server_new(p, NULL, &err) : NULL;
    ok(s != NULL, "a server for it starts");
    if (s) {
        s->write = capture;
        ask(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
        json_t *r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
        size_t i;
        json_t *t;
        bool has_exec = false, has_write = false, has_read = false;
        json_array_foreach(tools, i, t) {
            const char *name = json_string_value(json_object_get(t, "name"));
            has_exec |= !strcmp(name, "exec");
            has_write |= !strcmp(name, "write_file");
            has_read |= !strcmp(name, "read_file");
        }
        ok(!has_exec && !has_write && has_read, "disabled tools are not listed, the others are");
        r = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"exec\","
                   "\"arguments\":{\"command\":\"true\"}}}");
        is_int(err_code(r), RF_JSONRPC_INVALID_PARAMS, "calling a disabled tool is an unknown tool");
        rf_mcp_server_free(s);
    }
    rf_error_free(err);
    rf_policy_free(p);
    rf_config_free(cfg);
}

int main(void)
{
    out_msgs = json_array();
    test_classify();
    test_lines();
    test_utf8();
    test_bare_server();
    test_progress();
    char ws[] = "/tmp/rf-test-mcp.XXXXXX";
    if (mkdtemp(ws)) {
        test_disabled_tools(ws);
        rmdir(ws);
    }
    json_decref(out_msgs);
    done_testing();
}
