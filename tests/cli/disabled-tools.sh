#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Disabled tools (issue 13, item 4): with a picoclaw config whose agent
# disables exec, write_file and edit_file, every entry point refuses those
# tools with the same message (policy/tools.c), and the agent without the
# list (the positive control) may use them: ringfence exec, ringfence fs,
# ringfence mcp.
. "$(dirname "$0")/../lib.sh"

CFG="$SCRATCH/picoclaw.json"
cat >"$CFG" <<'JSON'
{
  "agents": {
    "list": [
      { "id": "readonly", "tools": { "disabled": ["write_file", "exec", "edit_file"] } },
      { "id": "coder" }
    ]
  }
}
JSON
chmod 644 "$CFG"
MSG_EXEC='tool "exec" not found: it is disabled for this agent (tools.disabled)'

# ringfence exec
expect_exit 126 "exec: refused for the agent that disables it" \
    rf exec --config "$CFG" --agent readonly -- 'touch ran.txt'
contains "exec: the refusal names the tool and the setting" "$ERR" "$MSG_EXEC"
contains "exec: with a hint" "$ERR" 'hint: remove "exec" from tools.disabled'
check "exec: the command did not run" test ! -e "$WS/ran.txt"
expect_exit 126 "exec --check: refused too" rf exec --check --config "$CFG" --agent readonly -- 'ls'
contains "exec --check: the same message" "$ERR" "$MSG_EXEC"
expect_exit 0 "exec --check: the other agent may (control)" rf exec --check --config "$CFG" --agent coder -- 'ls'
RINGFENCE_TOOLS_DISABLED=exec expect_exit 126 "exec: RINGFENCE_TOOLS_DISABLED=exec refuses it" \
    rf exec --check -- 'ls'

# ringfence fs
echo hello >"$WS/a.txt"
for verb in "write b.txt --content x" "edit a.txt --old hello --new bye"; do
    set -- $verb
    tool=$1_file
    expect_exit 1 "fs $1: refused for the agent that disables $tool" \
        rf fs $verb --config "$CFG" --agent readonly
    contains "fs $1: the message names $tool" "$ERR" "tool \"$tool\" not found: it is disabled for this agent"
done
check "fs: nothing written" test ! -e "$WS/b.txt"
check "fs: nothing edited" test "$(cat "$WS/a.txt")" = hello
expect_exit 0 "fs read: still enabled for that agent" rf fs read a.txt --config "$CFG" --agent readonly
contains "fs read: the content" "$OUT" hello
expect_exit 0 "fs append: still enabled for that agent" rf fs append a.txt --content more --config "$CFG" --agent readonly
expect_exit 0 "fs list: still enabled for that agent" rf fs list --config "$CFG" --agent readonly
expect_exit 0 "fs write: the other agent may (control)" rf fs write c.txt --content x --config "$CFG" --agent coder
check "fs write: the control wrote" test "$(cat "$WS/c.txt")" = x
expect_exit 125 "fs: an unknown agent is a configuration error" rf fs list --config "$CFG" --agent nosuch
contains "fs: names the agent" "$ERR" "nosuch"
cat >"$WS/.ringfence.json" <<'JSON'
{ "tools": { "disabled": ["list_dir"] } }
JSON
expect_exit 1 "fs: the workspace file's tools.disabled is read (standard stack)" rf fs list
contains "fs: list_dir refused" "$ERR" 'tool "list_dir" not found'
expect_exit 0 "fs: --no-config ignores it" rf fs list --no-config
rm -f "$WS/.ringfence.json"

# ringfence mcp
# The server stops running calls when its input ends: keep it open until
# the last answer (id 4) is out, then close it.
mcp_session() {
    local fifo="$SCRATCH/mcp.in" out="$SCRATCH/mcp.out" i
    rm -f "$fifo" "$out"
    mkfifo "$fifo"
    rf mcp --config "$CFG" --agent "$1" <"$fifo" >"$out" 2>"$SCRATCH/err" &
    local pid=$!
    exec 7>"$fifo"
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"command":"touch mcp.txt"}}}' \
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"m.txt","content":"x"}}}' >&7
    for i in $(seq 600); do
        grep -q '"id":4' "$out" 2>/dev/null && grep -q '"id":3' "$out" && break
        sleep 0.1
    done
    exec 7>&-
    wait "$pid"
    cat "$out"
}
OUT=$(mcp_session readonly 2>"$SCRATCH/err")
list=$(printf '%s\n' "$OUT" | grep '"id":2' || true)
contains "mcp: read_file is listed" "$list" '"read_file"'
lacks "mcp: exec is not listed" "$list" '"name":"exec"'
lacks "mcp: write_file is not listed" "$list" '"name":"write_file"'
contains "mcp: calling exec gets the same refusal" "$(printf '%s\n' "$OUT" | grep '"id":3' || true)" \
    'tool \"exec\" not found: it is disabled for this agent (tools.disabled)'
contains "mcp: calling write_file too" "$(printf '%s\n' "$OUT" | grep '"id":4' || true)" \
    'tool \"write_file\" not found'
check "mcp: nothing ran, nothing written" test ! -e "$WS/mcp.txt" -a ! -e "$WS/m.txt"
OUT=$(mcp_session coder 2>"$SCRATCH/err")
contains "mcp: the other agent lists exec (control)" "$(printf '%s\n' "$OUT" | grep '"id":2' || true)" '"name":"exec"'
contains "mcp: and may write (control)" "$(printf '%s\n' "$OUT" | grep '"id":4' || true)" 'wrote'
