# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence changes: list, show, diff (--stat, --name-only, --json, colours),
# apply, discard, and clear errors for what cannot be done.
. "$(dirname "$0")/../lib.sh"

if ! rf run --changes overlay -- true >/dev/null 2>"$SCRATCH/probe.err"; then
    skip "changes: overlay" "this kernel cannot mount the overlay here: $(head -c 200 "$SCRATCH/probe.err")"
    exit 0
fi
rm -rf "$RINGFENCE_HOME/sessions"

# ── no sessions ──
expect_exit 0 "list with no sessions" rf changes list
contains "says there are none, and how to make one" "$OUT" "no sessions"
expect_exit 0 "list --json with no sessions" rf changes list --json
check "an empty JSON array" test "$(echo "$OUT" | jq -c .)" = "[]"

# ── errors ──
expect_exit 125 "diff of an unknown session" rf changes diff 0123456789ab
contains "names the session" "$ERR" "no session 0123456789ab"
contains "hints at list" "$ERR" "hint: 'ringfence changes list'"
expect_exit 125 "a session id with a slash is refused" rf changes apply ../../etc
contains "says it is not an id" "$ERR" "is not a session id"
expect_exit 125 "an unknown action" rf changes frobnicate
contains "lists the actions" "$ERR" "expected list, show, diff, apply or discard"
expect_exit 125 "diff needs an id" rf changes diff
contains "says so" "$ERR" "needs one session ID"
expect_exit 125 "--force is for apply" rf changes diff --force abc
expect_exit 125 "--changes takes direct or overlay" rf run --changes sideways -- true
contains "says which" "$ERR" "expected direct or overlay"
expect_exit 125 "run --session of an unknown session" rf run --session feedfacecafe -- true
contains "names it" "$ERR" "no session feedfacecafe"
expect_exit 0 "changes --help" rf changes --help
contains "help shows apply" "$OUT" "ringfence changes apply ID"
expect_exit 125 "the landlock backend refuses overlay, naming the alternative" \
    rf run --backend landlock --accept-weaker --changes overlay -- true
contains "names the backend" "$ERR" "the landlock backend cannot mount the workspace as an overlay"
contains "hints at native or direct" "$ERR" "--backend native"

# ── a session ──
printf 'alpha\nbeta\ngamma\n' >"$WS/text.txt"
echo stays >"$WS/old-name.txt"
printf 'x\000y' >"$WS/data.bin"
echo bye >"$WS/gone.txt"
nl_name=$(printf 'new\nline.txt')
bad_name=$(printf 'bad\377.txt')
expect_exit 0 "plan shows the overlay" rf plan --changes overlay -- true
check "plan: changes.mode overlay" test "$(echo "$OUT" | jq -r .changes.mode)" = overlay
check "plan: the workspace mount has its overlay" \
    test "$(echo "$OUT" | jq -r '.mounts[] | select(.why=="workspace") | .overlay' | grep -c sessions/)" = 1
expect_exit 0 "plan without --changes has no changes key" rf plan -- true
check "direct plan unchanged" test "$(echo "$OUT" | jq -r .changes)" = null
expect_exit 0 "an overlay run" rf run --changes overlay --status-json "$SCRATCH/st" -- sh -c "
    printf 'alpha\nBETA\ngamma\ndelta\n' > text.txt
    mv old-name.txt new-name.txt
    printf 'x\001y' > data.bin
    rm gone.txt
    chmod 700 text.txt
    echo nl > '$nl_name'
    echo bad > '$bad_name'"
id=$(jq -r .session "$SCRATCH/st")
check "status record: session id" test -n "$id" -a "$id" != null

expect_exit 0 "list" rf changes list
contains "list shows the session" "$OUT" "$id"
contains "list shows the workspace" "$OUT" "$WS"
expect_exit 0 "list --json" rf changes list --json
check "list --json: id and file count" test "$(echo "$OUT" | jq -r '.[0].id, .[0].files' | tr '\n' ' ')" = "$id 6 "

expect_exit 0 "diff" rf changes diff "$id"
contains "unified diff of a text file" "$OUT" "@@ -1,3 +1,4 @@"
contains "removed line" "$OUT" "-beta"
contains "added line" "$OUT" "+BETA"
contains "mode change" "$OUT" "new mode 100700"
contains "rename shown" "$OUT" "rename from old-name.txt"
contains "binary: one line" "$OUT" "Binary files a/data.bin and b/data.bin differ"
contains "deletion" "$OUT" "deleted file mode 100644"
contains "a newline in a name is quoted" "$OUT" 'b/"new\nline.txt"'
contains "invalid UTF-8 is quoted" "$OUT" 'b/"bad\377.txt"'
lacks "no colours when not a terminal" "$OUT" $'\033['
expect_exit 0 "diff --color always" rf changes diff --color always "$id"
contains "colours on request" "$OUT" $'\033[32m+BETA'
expect_exit 0 "diff --stat" rf changes diff --stat "$id"
contains "stat: per file" "$OUT" "text.txt"
contains "stat: binary" "$OUT" "Bin"
contains "stat: summary" "$OUT" "6 files changed, 4 insertions(+), 2 deletions(-)"
expect_exit 0 "diff --name-only" rf changes diff --name-only "$id"
contains "name-only" "$OUT" "new-name.txt"
lacks "name-only has no diff" "$OUT" "@@"
expect_exit 0 "diff --json" rf changes diff --json "$id"
check "json: the rename" test "$(echo "$OUT" | jq -r '.changes[] | select(.kind=="renamed") | .old_path')" = old-name.txt
check "json: the modified file's counts" \
    test "$(echo "$OUT" | jq -r '.changes[] | select(.path=="text.txt") | "\(.insertions) \(.deletions)"')" = "2 1"
check "json: a newline in a name survives" test "$(echo "$OUT" | jq -r '.changes[] | select(.path|test("\n")) | .kind')" = added
expect_exit 0 "show" rf changes show "$id"
contains "show: R" "$OUT" "R old-name.txt -> new-name.txt"
contains "show: D" "$OUT" "D gone.txt"

expect_exit 0 "apply --json" rf changes apply --json "$id"
check "apply --json: nothing left out" test "$(echo "$OUT" | jq -c '[.conflicts, .refused, .failed]')" = "[[],[],[]]"
check "applied: the text" test "$(sed -n 2p "$WS/text.txt")" = BETA
check "applied: the mode" test "$(stat -c %a "$WS/text.txt")" = 700
check "applied: the rename" test -e "$WS/new-name.txt" -a ! -e "$WS/old-name.txt"
check "applied: the deletion" test ! -e "$WS/gone.txt"
check "applied: the odd names" test -e "$WS/$nl_name" -a -e "$WS/$bad_name"
expect_exit 125 "an applied session is gone" rf changes show "$id"

# ── MCP: every exec of a connection in one session, changes_diff offered ──
echo orig >"$WS/mcp.txt"
rm -rf "$RINGFENCE_HOME/sessions"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$@"; }
# A coprocess: each request is sent once the answer before it is in, so
# the calls run one after the other (they would run concurrently).
coproc MCP { rf mcp --changes overlay 2>"$SCRATCH/mcp.err"; }
# bash unsets MCP_PID and MCP once it reaps the coprocess, which may be
# before the `wait` below: keep copies.
mcp_pid=$MCP_PID mcp_in=${MCP[1]} mcp_out=${MCP[0]}
ask() { # ID REQUEST: send, then read lines until the answer to ID
    local line
    printf '%s\n' "$2" >&"$mcp_in"
    while IFS= read -r -t 60 line <&"$mcp_out"; do
        echo "$line" >>"$SCRATCH/mcp.out"
        case $line in *"\"id\":$1,"*) return 0 ;; esac
    done
    return 1
}
: >"$SCRATCH/mcp.out"
ask 1 "$init"
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"$mcp_in"
ask 2 '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
ask 3 "$(call 3 exec '{"command":"echo changed > mcp.txt"}')"
ask 4 "$(call 4 exec '{"command":"cat mcp.txt; echo two > mcp2.txt"}')"
ask 5 "$(call 5 changes_diff '{}')"
exec {mcp_in}>&-
wait "$mcp_pid" 2>/dev/null || true
tools=$(jq -r 'select(.id==2) | [.result.tools[].name] | join(" ")' "$SCRATCH/mcp.out")
check "mcp overlay: exec and changes_diff offered, no file tools" test "$tools" = "exec changes_diff"
contains "mcp: the second call sees the first's change" "$(jq -r 'select(.id==4) | .result.content[0].text' "$SCRATCH/mcp.out")" changed
contains "mcp: changes_diff shows both calls' changes" "$(jq -r 'select(.id==5) | .result.content[0].text' "$SCRATCH/mcp.out")" "+two"
check "mcp: one session for the connection" test "$(ls "$RINGFENCE_HOME/sessions" | wc -l)" = 1
check "mcp: the real workspace is untouched" test "$(cat "$WS/mcp.txt")" = orig
contains "mcp: the session is named on stderr" "$(cat "$SCRATCH/mcp.err")" "changes go to session"

# ── an instance's sessions live and die with it ──
rm -rf "$RINGFENCE_HOME/sessions"
expect_exit 0 "an overlay run in an instance" rf run --instance rf-ch --changes overlay -- sh -c 'echo i > inst.txt'
check "the session records its instance" test "$(rf changes list --json | jq -r '.[0].instance')" = rf-ch
expect_exit 0 "instance rm" rf instance rm rf-ch
check "instance rm removed its session" test "$(rf changes list --json | jq length)" = 0

# ── the container backend: podman's overlay volume ──
echo keep >"$WS/ct.txt"
if rf run --backend container --accept-weaker -- true >/dev/null 2>&1; then
    expect_exit 0 "container backend: an overlay run" rf run --backend container --accept-weaker --changes overlay \
        --status-json "$SCRATCH/ct" -- sh -c 'rm ct.txt && echo made > ct-new.txt'
    check "container: the workspace is untouched" test -e "$WS/ct.txt" -a ! -e "$WS/ct-new.txt"
    expect_exit 0 "container: changes show" rf changes show "$(jq -r .session "$SCRATCH/ct")"
    contains "container: the deletion" "$OUT" "D ct.txt"
    contains "container: the new file" "$OUT" "A ct-new.txt"
else
    skip "container backend: an overlay run" "the container backend does not run here"
fi

# ── the sessions cannot live inside the workspace they watch ──
expect_exit 125 "an instance root inside the workspace is refused for overlay" \
    env RINGFENCE_HOME="$WS/.rfhome" "$RINGFENCE" run --changes overlay -- true
contains "says where sessions live" "$ERR" "where sessions live, is inside the workspace"
check "nothing was made there" test ! -e "$WS/.rfhome/sessions"
