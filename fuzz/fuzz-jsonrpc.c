/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the JSON-RPC layer of `ringfence mcp`: the input is a byte stream
 * as a client would send it. It is split into lines (with a small limit,
 * so over-long lines are exercised), and every line goes through the
 * message parser and the server's dispatch (lifecycle, batches, errors) on
 * a server without tools, so nothing is spawned. Every answer must be one
 * line of valid JSON; the UTF-8 repair must always yield valid UTF-8. */
#include "mcp/mcp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_answer(void *ud, const char *text, size_t len)
{
    (void)ud;
    if (memchr(text, '\n', len))
        abort(); /* one message must be one line */
    json_t *v = json_loadb(text, len, 0, NULL);
    if (!v)
        abort(); /* we only ever write valid JSON */
    json_decref(v);
    return 0;
}

static const char *const preludes[] = {
    "",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2024-11-05\"}}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20))
        return 0;
    /* The first byte picks the negotiated version (or none yet). */
    const char *prelude = preludes[data[0] % 4];
    data++;
    size--;

    rf_mcp_msg m;
    rf_mcp_msg_parse((const char *)data, size, &m);
    rf_mcp_msg_clear(&m);

    size_t n;
    char *clean = rf_mcp_utf8_sanitize((const char *)data, size, &n);
    if (clean) {
        json_t *s = json_stringn(clean, n); /* NULL if not valid UTF-8 */
        if (!s)
            abort();
        json_decref(s);
        free(clean);
    }

    rf_mcp_server *server = rf_mcp_server_new_bare(check_answer, NULL);
    rf_mcp_lines lines;
    if (!server || rf_mcp_lines_init(&lines, 4096) < 0) {
        rf_mcp_server_free(server);
        return 0;
    }
    rf_mcp_server_handle_line(server, prelude, strlen(prelude));
    for (size_t off = 0; off < size;) {
        const char *line;
        size_t len, used;
        if (rf_mcp_lines_feed(&lines, (const char *)data + off, size - off, &used, &line, &len) == RF_MCP_LINE_OK)
            rf_mcp_server_handle_line(server, line, len);
        off += used;
    }
    rf_mcp_lines_free(&lines);
    rf_mcp_server_free(server);
    return 0;
}
