# SPDX-License-Identifier: LGPL-2.1-or-later
# files.on_hidden: ask (issue 31): an open of a host file the sandbox hides
# is asked about on the --ask socket (tests/security/ask-listener.py); on
# allow ringfence opens it outside, read-only, and hands the command the
# descriptor. Never offered: ~/.ssh, ringfence's instance root, deny_paths; never
# followed: a symbolic link on the host; a path swapped while its question
# is up gets at most the file asked about.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
PY=/usr/bin/python3
if [ "${RF_TEST_BACKEND:-native}" != native ]; then
    skip "asking about hidden files" "the observer is the native backend's"
    exit 0
fi

OUT_DIR="$SCRATCH/outside"
mkdir -p "$OUT_DIR" "$SCRATCH/home/.ssh" "$RINGFENCE_HOME"
echo "hidden-a-$TOKEN" >"$OUT_DIR/a.txt"
echo "hidden-b-$TOKEN" >"$OUT_DIR/b.txt"
echo "ssh-key-$TOKEN" >"$SCRATCH/home/.ssh/id_test"
echo "state-$TOKEN" >"$RINGFENCE_HOME/state.txt"
ln -s a.txt "$OUT_DIR/link.txt"
chmod -R a+rX "$SCRATCH"
export HOME="$SCRATCH/home" XDG_CONFIG_HOME="$SCRATCH/xdg"
printf 'files:\n  on_hidden: ask\n' >"$SCRATCH/files.yaml"
SOCK="$SCRATCH/ask.sock"
LOG="$SCRATCH/questions.log"
LPID=""
listen() {
    [ -n "$LPID" ] && kill "$LPID" 2>/dev/null && wait "$LPID" 2>/dev/null
    # The last listener's "ready" must not pass for this one's: a background
    # job truncates its output file only once it runs.
    rm -f "$SOCK" "$SCRATCH/listener.out"; : >"$LOG"
    $PY "$HERE/ask-listener.py" "$SOCK" "$LOG" "$@" >"$SCRATCH/listener.out" 2>&1 &
    LPID=$!
    wait_until 30 grep -qs ready "$SCRATCH/listener.out" || { fail "the listener starts"; diag "$(cat "$SCRATCH/listener.out")"; }
}
at_exit '[ -n "$LPID" ] && kill $LPID 2>/dev/null'
ASK=(--ask "socket:$SOCK" --ask-timeout 30 --config "$SCRATCH/files.yaml" --status-json "$SCRATCH/status.json")
asked() { grep -c "\"path\": \"$1\"" "$LOG" || true; }

listen "$OUT_DIR/a.txt=allow/once,*=deny/once"
expect_exit 0 "allow: cat of a hidden host file succeeds" rf run "${ASK[@]}" -- cat "$OUT_DIR/a.txt"
contains "allow: its content arrived" "$OUT" "hidden-a-$TOKEN"
check "allow: the question named the file" test "$(asked "$OUT_DIR/a.txt")" = 1
contains "the question is a file question" "$(head -1 "$LOG")" '"type": "file"'
contains "the question names the process that opened it (cat)" "$(head -1 "$LOG")" '"name": "cat"'
check "status record: network.asked_files lists it" test "$($PY -c 'import json,sys
d = json.load(open(sys.argv[1]))["network"]["asked_files"]["list"][0]
print(d["host"] == sys.argv[2] and d["decision"] == "allow" and d["by"] == "socket")' "$SCRATCH/status.json" "$OUT_DIR/a.txt")" = True
expect_exit 1 "deny: cat of another hidden file fails" rf run "${ASK[@]}" -- cat "$OUT_DIR/b.txt"
lacks "deny: nothing of it arrived" "$OUT" "hidden-b-$TOKEN"
check "deny: it was asked" test "$(asked "$OUT_DIR/b.txt")" = 1
check "control: without asking it is hidden" sh -c "! '$RINGFENCE' run -- cat '$OUT_DIR/a.txt' 2>/dev/null"

listen "*=allow/run"
expect_exit 1 "~/.ssh is never offered" rf run "${ASK[@]}" -- cat "$HOME/.ssh/id_test"
expect_exit 1 "the instance root is never offered" rf run "${ASK[@]}" -- cat "$RINGFENCE_HOME/state.txt"
expect_exit 2 "a write is never offered" rf run "${ASK[@]}" -- sh -c "echo x >>'$OUT_DIR/a.txt'"
expect_exit 1 "a symbolic link on the host is not followed, even when allowed" \
    rf run "${ASK[@]}" -- cat "$OUT_DIR/link.txt"
check "none of those reached the listener but the link" test "$(grep -vc link.txt "$LOG")" = 0
# deny_paths is the user's own word: a denied file in the workspace (a
# mask over it inside) is never offered, however the listener answers.
echo "denied-$TOKEN" >"$WS/.env"
printf 'files:\n  on_hidden: ask\ndeny_paths: [%s]\n' "$WS/.env" >"$SCRATCH/files-deny.yaml"
: >"$LOG"
expect_exit 1 "a deny_paths file is never offered" rf run --ask "socket:$SOCK" --ask-timeout 30 \
    --config "$SCRATCH/files-deny.yaml" -- cat "$WS/.env"
lacks "nothing of it arrived" "$OUT" "denied-$TOKEN"
check "and it was not asked about" test "$(asked "$WS/.env")" = 0
rm -f "$WS/.env"
check "the file is unchanged" grep -qx "hidden-a-$TOKEN" "$OUT_DIR/a.txt"

# The command changes the path in its buffer to b.txt (refused) while the
# question about a.txt is up (answered after a second): it gets a.txt, the
# file asked about, never b.txt.
listen "$OUT_DIR/a.txt=allow/once/slow,*=deny/once"
expect_exit 0 "a path swapped during its question gets at most the file asked about" rf run "${ASK[@]}" -- $PY -c '
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
buf = ctypes.create_string_buffer(a, max(len(a), len(b)) + 1)
def swap():
    time.sleep(0.4)
    buf.value = b
t = threading.Thread(target=swap); t.start()
fd = libc.open(buf, os.O_RDONLY)
t.join()
print("buffer now", buf.value.decode(), "read", os.read(fd, 100).decode().strip() if fd >= 0 else "nothing")
sys.exit(0 if fd >= 0 else 1)' "$OUT_DIR/a.txt" "$OUT_DIR/b.txt"
contains "...the buffer said b.txt by then" "$OUT" "buffer now $OUT_DIR/b.txt"
contains "...and what it read is a.txt" "$OUT" "read hidden-a-$TOKEN"
check "...with one question, about a.txt" test "$(wc -l <"$LOG")" = 1 -a "$(asked "$OUT_DIR/a.txt")" = 1
