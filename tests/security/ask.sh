# SPDX-License-Identifier: LGPL-2.1-or-later
# network.on_blocked: ask (issue 31). A name allow_domains does not match
# is held while ringfence asks the listener on --ask socket:PATH
# (tests/security/ask-listener.py, answering as scripted); deny_domains,
# the metadata address, IP literals and userinfo tricks are refused
# without a question; a flood of names is rate-limited; "always" lands in
# the user's own answers file; the command cannot reach the socket.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
PY=/usr/bin/python3

if ! command -v curl >/dev/null; then
    skip "asking about blocked names" "curl is not installed"
    exit 0
fi

# ── An HTTP server on the host's loopback, reached through mapped names ──
mkdir -p "$SCRATCH/www"
echo "asked-content-$TOKEN" >"$SCRATCH/www/hello.txt"
$PY -c 'import http.server, functools, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
h.log_message = lambda *a: None
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), h)
print(s.server_address[1], flush=True)
s.serve_forever()' "$SCRATCH/www" >"$SCRATCH/port" 2>/dev/null &
at_exit "kill $! 2>/dev/null"
wait_until 10 test -s "$SCRATCH/port" || { fail "test server starts"; exit 0; }
PORT=$(cat "$SCRATCH/port")

export XDG_CONFIG_HOME="$SCRATCH/xdg" # "always" is written here, never to the real home
SOCK="$SCRATCH/ask.sock"
LOG="$SCRATCH/questions.log"
LPID=""
listen() { # RULES [--close]: (re)start the listener
    [ -n "$LPID" ] && kill "$LPID" 2>/dev/null && wait "$LPID" 2>/dev/null
    # The last listener's "ready" must not pass for this one's: a background
    # job truncates its output file only once it runs.
    rm -f "$SOCK" "$LOG" "$SCRATCH/listener.out"; : >"$LOG"
    $PY "$HERE/ask-listener.py" "$SOCK" "$LOG" "$@" >"$SCRATCH/listener.out" 2>&1 &
    LPID=$!
    # A Python start on a loaded machine (ASan builds, a host matrix beside)
    # can take seconds: wait long, and say why when it does not come up.
    wait_until 30 grep -qs ready "$SCRATCH/listener.out" ||
        { fail "the listener starts"; diag "$(cat "$SCRATCH/listener.out")"; }
}
at_exit '[ -n "$LPID" ] && kill $LPID 2>/dev/null'
HOSTS=()
for n in a b c d e f g; do HOSTS+=(--add-host "$n.ask.test:127.0.0.1"); done
ASK=(--ask "socket:$SOCK" --ask-timeout 30 --allow-domain allowed.test "${HOSTS[@]}"
     --add-host allowed.test:127.0.0.1 --allow-port "$PORT" --deny-domain f.ask.test --status-json "$SCRATCH/status.json")
url() { echo "http://$1:$PORT/hello.txt"; }
asked() { grep -c "\"host\": \"$1\"" "$LOG" || true; }
# check_asked DESC HOST N: HOST was asked about N times; if not, how often,
# the listener's log and ringfence's stderr (after the failing line).
check_asked() {
    local got; got=$(asked "$2")
    if [ "$got" = "$3" ]; then pass "$1"; return; fi
    fail "$1"
    diag "$2 was asked about $got times, not $3; the listener's log:" "$(cat "$LOG")" "ringfence's stderr: $ERR"
}
status() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["network"]; print(eval(sys.argv[2]))' \
    "$SCRATCH/status.json" "$1"; }

# ── allow once: this connection only, the next one asks again ──
listen "a.ask.test=allow/once"
expect_exit 0 "allow once: curl reaches a name not in allow_domains after the answer" \
    rf run "${ASK[@]}" -- sh -c "curl -fsS $(url a.ask.test) && curl -fsS $(url a.ask.test)"
contains "allow once: the content arrived" "$OUT" "asked-content-$TOKEN"
check_asked "allow once: asked once per connection (2 questions)" a.ask.test 2
q=$(head -1 "$LOG")
contains "the question names the host" "$q" '"host": "a.ask.test"'
contains "the question names the port" "$q" "\"port\": $PORT"
contains "the question names the protocol" "$q" '"protocol": "http"'
contains "the question names the command" "$q" '"command": "sh -c curl'
contains "the question has a version" "$q" '"version": 1'
# Who asked: the process inside holding the connection, numbered as the
# sandbox numbers it (the shell's pid, which curl keeps across exec).
expect_exit 0 "who asked: a command that names its own pid" \
    rf run "${ASK[@]}" -- sh -c "echo \$\$ >asker.pid; exec curl -fsS -o /dev/null $(url a.ask.test)"
q=$(tail -1 "$LOG")
contains "the question names the process inside (curl)" "$q" '"name": "curl"'
contains "...and its pid as the sandbox numbers it" "$q" "\"pid\": $(cat asker.pid 2>/dev/null)"
rm -f asker.pid
# A process can name itself anything: its name reaches the listener as
# printable ASCII, never an escape sequence for the terminal of whoever reads.
expect_exit 0 "who asked: a process whose name holds escape sequences" rf run "${ASK[@]}" -- $PY -c "
import ctypes, urllib.request
ctypes.CDLL(None).prctl(15, b'\x1b[2J\x1b]0;pwn\x07', 0, 0, 0)
urllib.request.urlopen('$(url a.ask.test)').read()"
q=$(tail -1 "$LOG")
check "...its name is printable ASCII: no escape reaches the listener ($q)" $PY -c '
import json, sys
name = json.loads(sys.argv[1])["process"]["name"]
sys.exit(0 if name == "?[2J?]0;pwn?" else 1)' "$q"
check "status record: the question, answer, who and how long" \
    test "$(status '[(q["host"], q["decision"], q["scope"], q["by"], q["ms"] >= 0) for q in d["asked"]["list"]][0]')" \
    = "('a.ask.test', 'allow', 'once', 'socket', True)"

# ── allow for the run, concurrent connections: one question ──
listen "b.ask.test=allow/run" --close
expect_exit 0 "allow run: 4 concurrent then 2 more connections all get through" \
    rf run "${ASK[@]}" -- sh -c "for i in 1 2 3 4; do curl -fsS -o /dev/null $(url b.ask.test) & done; wait; \
curl -fsS $(url b.ask.test) && curl -fsS -x socks5h://127.0.0.1:3128 $(url b.ask.test)"
check_asked "allow run: one question for the name, however many connections" b.ask.test 1

# ── deny, and CONNECT / SOCKS are asked too ──
listen "c.ask.test=deny/once"
expect_exit 22 "deny: curl is refused (403)" rf run "${ASK[@]}" -- curl -fsS "$(url c.ask.test)"
check_asked "deny: it was asked" c.ask.test 1
expect_exit 0 "deny: the refusal says it was refused when asked" \
    rf run "${ASK[@]}" -- sh -c "curl -sS $(url c.ask.test) | grep -q 'refused when asked'"
expect_exit 97 "deny over SOCKS5: refused (curl exit 97)" \
    rf run "${ASK[@]}" -- curl -fsS -x socks5h://127.0.0.1:3128 "$(url c.ask.test)"
contains "SOCKS5 questions say so" "$(tail -1 "$LOG")" '"protocol": "socks5"'
expect_exit 0 "deny over CONNECT: refused (403 to the CONNECT)" rf run "${ASK[@]}" -- $PY -c "
import socket; s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT c.ask.test:$PORT HTTP/1.1\\r\\nHost: c.ask.test\\r\\n\\r\\n')
assert s.recv(100).startswith(b'HTTP/1.1 403')"
contains "CONNECT questions say so" "$(tail -1 "$LOG")" '"protocol": "connect"'

# ── no answer, a malformed answer, nobody listening: refused ──
listen "d.ask.test=silent,e.ask.test=garbage"
start=$(date +%s)
expect_exit 22 "timeout: no answer in --ask-timeout 3 is a refusal" \
    rf run "${ASK[@]}" --ask-timeout 3 -- curl -fsS "$(url d.ask.test)"
took=$(($(date +%s) - start))
# Not a timing test: only that it waited for the answer, and then gave up
# (the other questions here get --ask-timeout 30, so a loaded machine's slow
# listener is never mistaken for silence).
check "timeout: it waited the 3 s, and then gave up ($took s)" test "$took" -ge 3 -a "$took" -lt 30
check "timeout: the status record says who decided" test "$(status 'd["asked"]["list"][0]["by"]')" = timeout
expect_exit 22 "an answer not understood is a refusal" rf run "${ASK[@]}" -- curl -fsS "$(url e.ask.test)"
kill "$LPID"; wait "$LPID" 2>/dev/null; LPID=""
expect_exit 22 "nobody listening: refused" rf run "${ASK[@]}" -- curl -fsS "$(url a.ask.test)"

# ── never asked: deny_domains, metadata, IP literals, userinfo tricks ──
# (curl is told to use the proxy even for loopback, which NO_PROXY exempts)
listen "*=allow/run"
X=(--noproxy "" -x http://127.0.0.1:3128)
expect_exit 22 "deny_domains stays final" rf run "${ASK[@]}" -- curl -fsS "$(url f.ask.test)"
expect_exit 22 "169.254.169.254 is refused" rf run "${ASK[@]}" -- curl "${X[@]}" -fsS -m 5 "http://169.254.169.254/latest/meta-data/"
expect_exit 22 "an IP literal (127.0.0.1) is refused" rf run "${ASK[@]}" -- curl "${X[@]}" -fsS "http://127.0.0.1:$PORT/hello.txt"
expect_exit 22 "an IPv6 literal is refused" rf run "${ASK[@]}" -- curl "${X[@]}" -fsS "http://[::1]:$PORT/hello.txt"
expect_exit 22 "a decimal IP (2130706433) is refused" rf run "${ASK[@]}" -- curl "${X[@]}" -fsS "http://2130706433:$PORT/hello.txt"
expect_exit 22 "userinfo trick (allowed.test@127.0.0.1) is refused" \
    rf run "${ASK[@]}" -- curl "${X[@]}" -fsS "http://allowed.test@127.0.0.1:$PORT/hello.txt"
expect_exit 22 "a name resolving to a private address is refused even when allowed (no --add-host)" \
    rf run "${ASK[@]}" -- curl "${X[@]}" -fsS "http://localhost:$PORT/hello.txt"
check "none of them was asked, except the last (asked, then its address refused)" \
    test "$(grep -vc '"host": "localhost"' "$LOG")" = 0
check "control: allowed.test is reached without a question" \
    rf run "${ASK[@]}" -- curl -fsS -o /dev/null "$(url allowed.test)"
check_asked "control: and was not asked about" allowed.test 0

# ── a flood of names: rate-limited, nothing hangs ──
listen "*=deny/once"
start=$(date +%s)
expect_exit 0 "1,200 distinct names in a loop end" rf run "${ASK[@]}" -- $PY -c '
import socket
refused = limited = 0
for i in range(1200):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT n%d.flood.test:443 HTTP/1.1\r\nHost: n%d.flood.test:443\r\n\r\n" % (i, i))
    r = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        r += b
    refused += b" 403 " in r
    limited += b"30 questions a minute" in r
    s.close()
print("refused", refused, "limited", limited)'
took=$(($(date +%s) - start))
contains "flood: every one refused, the rate limit said so" "$OUT" "refused 1200 limited 1170"
check "flood: 30 questions reached the listener" test "$(wc -l <"$LOG")" = 30
check "flood: the status record counts the rate-limited" test "$(status 'd["asked"]["rate_limited"]')" = 1170
# Nothing waited: each of the 1,170 got the rate limit's answer (counted
# above), which never waits for a listener. ($took s: a note, not a check.)
diag "flood: 1,200 names took $took s"

# ── always: written to the user's answers file; the next run asks nothing ──
listen "g.ask.test=allow/always"
expect_exit 0 "always: allowed" rf run "${ASK[@]}" -- curl -fsS -o /dev/null "$(url g.ask.test)"
ans="$XDG_CONFIG_HOME/ringfence/answers.yaml"
check "always: the user's answers file names host:port" grep -q "\"g.ask.test:$PORT\"" "$ans"
check "always: with a comment saying when and for which command" grep -q "# allowed 20.*curl -fsS" "$ans"
check "always: the file is the user's alone (0600)" test "$(stat -c %a "$ans")" = 600
: >"$LOG"
expect_exit 0 "always: the next run connects" rf run "${ASK[@]}" -- curl -fsS -o /dev/null "$(url g.ask.test)"
check_asked "always: ...without a question" g.ask.test 0
expect_exit 0 "always: and even without --ask" rf run --network allowlist "${HOSTS[@]}" -- curl -fsS -o /dev/null "$(url g.ask.test)"
check "always: nothing was written to the workspace" test -z "$(ls -A "$WS")"

# ── the command cannot answer its own questions ──
listen "*=deny/once"
expect_exit 1 "the answer socket is not reachable from inside" \
    rf run "${ASK[@]}" --expose "$PROBE" -- "$PROBE" connect-unix "$SOCK"
check "control: the socket is reachable on the host" "$PROBE" connect-unix "$SOCK"
expect_exit 22 "a forged answer on the command's own stdout does nothing" rf run "${ASK[@]}" -- sh -c \
    "echo '{\"id\": 1, \"decision\": \"allow\", \"scope\": \"run\"}'; curl -fsS $(url c.ask.test)"
expect_exit 125 "--ask socket:PATH inside the workspace is refused" \
    rf run --ask "socket:$WS/ask.sock" -- true
contains "...saying why" "$ERR" "the command could answer its own questions"
expect_exit 125 "--ask socket:PATH inside an exposed path is refused" \
    rf run --expose "$SCRATCH" --ask "socket:$SOCK" -- true
printf 'network:\n  on_blocked: ask\n  ask: "socket:%s"\n' "$SOCK" >"$WS/.ringfence.yaml"
printf 'network:\n  mode: allowlist\n' >"$SCRATCH/allowlist.yaml"
expect_exit 125 "a workspace config may not turn asking on" rf run --config "$SCRATCH/allowlist.yaml" -- true
contains "...saying so" "$ERR" "network.on_blocked"
rm -f "$WS/.ringfence.yaml"

expect_exit 125 "serve pools refuse asking clearly" timeout 10 "$RINGFENCE" serve --socket "$SCRATCH/pool.sock" --ask "socket:$SOCK"
contains "...saying so" "$ERR" "not available for pooled sandboxes"
expect_exit 125 "--ask mcp is for ringfence mcp only" rf run --ask mcp -- true
printf 'files:\n  on_hidden: ask\n' >"$SCRATCH/files-ask.yaml"
expect_exit 125 "files.on_hidden: ask with no place to ask is refused" rf run --config "$SCRATCH/files-ask.yaml" -- true
contains "...saying so" "$ERR" "files.on_hidden"
contains "...and where to ask" "$ERR" "--ask socket:PATH"

# ── the listener must be the caller's own uid ──
if is_root && id rftest >/dev/null 2>&1; then
    [ -n "$LPID" ] && kill "$LPID" && wait "$LPID" 2>/dev/null
    rm -f "$SOCK" "$SCRATCH/listener.out"; : >"$LOG"; chmod 777 "$SCRATCH"; chmod 666 "$LOG"
    setpriv --reuid rftest --regid rftest --clear-groups $PY "$HERE/ask-listener.py" "$SOCK" "$LOG" "*=allow/run" \
        >"$SCRATCH/listener.out" 2>&1 &
    LPID=$!
    wait_until 30 grep -qs ready "$SCRATCH/listener.out" || { fail "the other uid's listener starts"; diag "$(cat "$SCRATCH/listener.out")"; }
    chmod 777 "$SOCK" 2>/dev/null
    expect_exit 22 "a listener of another uid is not asked (SO_PEERCRED)" \
        rf run "${ASK[@]}" -- curl -fsS "$(url a.ask.test)"
    check "...and got no question" test "$(wc -l <"$LOG")" = 0
    chmod 755 "$SCRATCH"
else
    skip "a listener of another uid is not asked" "needs root and the user rftest"
fi
