#!/usr/bin/env bash
# The audit trail (docs/audit.md) is outside every sandbox: the command it
# records cannot see, read, write or truncate it, even with a home
# directory (the instance root inside it) as its workspace. Tampering with
# it afterwards is found: an edited, removed, reordered or cut-off record
# is named by `ringfence audit verify`. What a command chose (its argv)
# reaches a terminal through `audit show` only with control bytes made
# visible. The running-sandbox registry (`ringfence ps`, `stop`) is
# checked at the end: a forged entry is not listed nor stopped, and an
# ordinary user cannot stop another's sandbox.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"

log() { rf audit path; }
status_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")' "$@"; }

# A run is recorded, start and end, under the id its status record names.
expect_exit 0 "a run with auditing on" rf run --status-json "$SCRATCH/st.json" -- true
id=$(status_field "$SCRATCH/st.json" sandbox)
head=$(status_field "$SCRATCH/st.json" audit_head)
check "the status record names the sandbox and the trail's head" test -n "$id" -a ${#head} = 64
expect_exit 0 "audit show --json" rf audit show --json --sandbox "$id"
contains "...its run.start" "$OUT" '"event":"run.start"'
contains "...its run.end" "$OUT" '"event":"run.end"'
check "the head file holds the status record's head" grep -q "$head" "$(dirname "$(log)")/head"
check "control: the log is a file on the host" test -s "$(log)"

# From inside: not even visible. The workspace holds the instance root
# (as a home directory would), the hardest case: the mask over it, plan.c.
RH=$RINGFENCE_HOME
cp "$(log)" "$SCRATCH/log-before"
expect_exit 0 "a command tries to list, read, append to, truncate the log, from a workspace that holds it" \
    rf run --workspace "$SCRATCH" -- sh -c '
        ls -A "$1"; ls -A "$1/audit" 2>/dev/null && echo LISTED
        (cat "$1/audit/audit.log") 2>/dev/null && echo READ
        (printf x >> "$1/audit/audit.log") 2>/dev/null && echo APPENDED
        (: > "$1/audit/audit.log") 2>/dev/null && echo TRUNCATED; true' sh "$RH"
lacks "...it does not see the audit directory" "$OUT" "audit"
lacks "...nor list it" "$OUT" LISTED
lacks "...nor read a record" "$OUT" READ
lacks "...nor append" "$OUT" APPENDED
lacks "...nor truncate" "$OUT" TRUNCATED
expect_exit 0 "the log still verifies after it" rf audit verify
check "...and begins with every record written before (it only grew)" \
    cmp -s -n "$(stat -c %s "$SCRATCH/log-before")" "$SCRATCH/log-before" "$(log)"
check "control: the host sees the audit directory" test -d "$RH/audit"

# Tampering afterwards, one kind at a time, each on a copy of a good log.
for i in 1 2 3; do rf run -- sh -c "exit $i" || true; done
cp -a "$(dirname "$(log)")" "$SCRATCH/good"
restore() { rm -rf "$(dirname "$(log)")"; cp -a "$SCRATCH/good" "$(dirname "$(log)")"; }
tamper() { # DESC SED-SCRIPT WANT
    restore
    sed -i "$2" "$(log)"
    expect_exit 1 "$1" rf audit verify
    contains "...named: $3" "$ERR" "$3"
}
n=$(wc -l <"$(log)")
edited=$(grep -n '"exit_code":[1-9]' "$(log)" | head -n 1 | cut -d: -f1)
tamper "an edited exit code is found" "${edited}s/\"exit_code\":[1-9]/\"exit_code\":0/" \
    "record $edited: its hash does not match"
tamper "a removed record is found" '3d' "record 3: is missing"
tamper "two swapped records are found" '2{h;d};3G' "record 2: is missing (removed, or moved: record 3 comes next)"
tamper "a cut-off tail is found (the head)" '$d' "record $n: is missing"
restore
# Rewriting the whole chain from a record on (hashes recomputed) and the
# head with it passes verify, by design: the owner of the log can. The
# status record's head, kept elsewhere, catches it.
python3 - "$(log)" "$(dirname "$(log)")/head" <<'PYEOF'
import hashlib, json, sys
lines = open(sys.argv[1]).read().splitlines()
out, prev = [], None
for l in lines:
    rec = json.loads(l)
    if prev is None and rec["seq"] == 1:
        rec["command"] = ["forged"] if rec["event"] == "run.start" else rec.get("command")
    if prev is not None:
        rec["prev"] = prev
    rec.pop("hash")
    body = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
    h = hashlib.sha256(body.encode()).hexdigest()
    out.append(body[:-1] + ',"hash":"%s"}' % h)
    prev = h
open(sys.argv[1], "w").write("\n".join(out) + "\n")
open(sys.argv[2], "w").write("%d %s\n" % (len(out), prev))
PYEOF
expect_exit 0 "a chain rewritten whole, head and all, verifies alone (the owner can)" rf audit verify
expect_exit 1 "...but not against the head a status record kept" rf audit verify --head "$head"
contains "...which names that hash" "$ERR" "$head"
restore
expect_exit 0 "control: the untouched log verifies against that head" rf audit verify --head "$head"

# What a command chose, on a terminal: no escape byte gets through.
esc=$'\e]0;pwned\a\e[2J'
expect_exit 0 "a command named with escape sequences" rf run -- sh -c 'true' "$esc"
expect_exit 0 "audit show prints its run" rf audit show --event run.start
lacks "...without an escape byte" "$OUT" $'\e'
lacks "...or a bell" "$OUT" $'\a'
contains "...shown as \\x1b" "$OUT" '\x1b]0;pwned\x07'
expect_exit 0 "audit export --format ocsf" rf audit export --format ocsf --event run.start
check "...one JSON object a line, each an OCSF process activity" \
    python3 -c 'import json,sys; r=[json.loads(l) for l in sys.stdin]; assert r and all(o["class_uid"]==1007 for o in r)' <<<"$OUT"

# A refused name is recorded with its host and port.
expect_exit 0 "a command asks the proxy for a name the allowlist lacks" \
    rf run --allow-domain allowed.example -- python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT blocked.example:443 HTTP/1.1\r\nHost: blocked.example:443\r\n\r\n")
s.recv(100)'
expect_exit 0 "audit show --event net.refused" rf audit show --json --event net.refused
contains "...names the refused host" "$OUT" '"host":"blocked.example","port":443'

# Each connection is recorded as it happens, between its sandbox's
# run.start and run.end: refused and allowed, with the process inside
# that made it. An upstream on the host's loopback (--add-host) stands in
# for the internet.
up_port=$(free_port)
python3 -m http.server "$up_port" --bind 127.0.0.1 >/dev/null 2>"$SCRATCH/upstream.log" &
up_pid=$!
at_exit "kill $up_pid 2>/dev/null"
wait_until 10 python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$up_port" ||
    fail "a local upstream listens"
echo "secret-$TOKEN" >"$WS/token-$TOKEN"
NET=(--allow-domain "up.$TOKEN.test" --add-host "up.$TOKEN.test:127.0.0.1" --allow-port "$up_port"
    --allow-private-addresses)
expect_exit 0 "a command is refused one name and reaches another" \
    rf run "${NET[@]}" --status-json "$SCRATCH/net.json" -- python3 -c '
import socket, sys, urllib.request
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT blocked.example:443 HTTP/1.1\r\n\r\n")
s.recv(100)
p = urllib.request.ProxyHandler({"http": "http://127.0.0.1:3128"})
token = open(sys.argv[3]).read().strip()  # not in argv: run.start records argv
urllib.request.build_opener(p).open("http://%s:%s/?access_token=%s" % (sys.argv[1], sys.argv[2], token)).read()
' "up.$TOKEN.test" "$up_port" "$WS/token-$TOKEN"
nid=$(status_field "$SCRATCH/net.json" sandbox)
expect_exit 0 "audit show --json of that sandbox" rf audit show --json --sandbox "$nid"
check "...net.refused and net.allowed, in order, between run.start and run.end, each naming python3" python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.argv[1].splitlines()]
ev = [r["event"] for r in recs]
assert ev[0] == "run.start" and ev[-1] == "run.end", ev
i, j = ev.index("net.refused"), ev.index("net.allowed")
assert 0 < i < j < ev.index("net.summary"), ev
r, a = recs[i], recs[j]
assert (r["host"], r["port"], r["reason"]) == ("blocked.example", 443, "not in allow_domains"), r
assert a["host"] == sys.argv[2] and a["port"] == int(sys.argv[3]) and a["protocol"] == "http", a
assert r["process"]["name"] == "python3" and a["process"]["name"] == "python3", (r, a)
' "$OUT" "up.$TOKEN.test" "$up_port"
lacks "...and no record carries the query string's token" "$(cat "$(log)")" "secret-$TOKEN"
expect_exit 0 "audit export --format ocsf of its net.refused" rf audit export --format ocsf --sandbox "$nid" --event net.refused
check "...Network Activity, refused, naming the process inside" python3 -c '
import json, sys
o = json.loads(sys.argv[1].splitlines()[0])
assert o["class_uid"] == 4001 and o["action"] == "Denied" and o["process"]["name"] == "python3", o' "$OUT"
check "control: the token did go out (the upstream logged it)" grep -q "secret-$TOKEN" "$SCRATCH/upstream.log"
expect_exit 0 "the chain verifies with the network's records" rf audit verify
net_line=$(grep -n "\"event\":\"net.allowed\",\"sandbox\":\"$nid\"" "$(log)" | cut -d: -f1)
cp -a "$(dirname "$(log)")" "$SCRATCH/good-net"
sed -i "${net_line}s/\"port\":$up_port/\"port\":443/" "$(log)"
expect_exit 1 "an edited net.allowed record (its port) is found" rf audit verify
contains "...named" "$ERR" "record $net_line: its hash does not match"
rm -rf "$(dirname "$(log)")"; cp -a "$SCRATCH/good-net" "$(dirname "$(log)")"

# The command cannot forge a record through what it sends: a host name
# that is JSON, or control bytes, is refused or stored escaped, and adds
# exactly one record.
before=$(wc -l <"$(log)")
expect_exit 0 "a command asks for a name made to look like a record" \
    rf run "${NET[@]}" -- python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT x\",\"event\":\"run.end\x1b]0;pwned\x07:443 HTTP/1.1\r\n\r\n")
s.recv(100)'
expect_exit 0 "...audit verify" rf audit verify
check "...it added run.start, at most one net record, net.summary at most, run.end" \
    test "$(($(wc -l <"$(log)") - before))" -le 4
check "...no record has a raw escape byte" sh -c '! grep -q "$(printf "\033")" "$1"' sh "$(log)"

# Each request through a credential route is recorded as it is served:
# route, method, path, status; never a header (the key), never the query
# (where tokens travel). A local HTTPS upstream (route-upstream.py) with a
# CA made here stands in for the API.
if ! command -v openssl >/dev/null || ! command -v curl >/dev/null; then
    skip "route.request records" "openssl or curl is not installed"
else
    (
        cd "$SCRATCH" || exit 1
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=rf-audit-ca
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key -out srv.csr -subj /CN=upstream.test
        printf 'subjectAltName=DNS:upstream.test\n' >san.ext
        openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile san.ext
    ) >"$SCRATCH/openssl.log" 2>&1 || fail "make a test CA"
    : >"$SCRATCH/requests.jsonl"
    /usr/bin/python3 "$HERE/route-upstream.py" "$SCRATCH/requests.jsonl" good "$SCRATCH/srv.pem" "$SCRATCH/srv.key" \
        >"$SCRATCH/ports" 2>&1 &
    rsrv=$!
    at_exit "kill $rsrv 2>/dev/null"
    wait_until 10 grep -qs "^good " "$SCRATCH/ports" || { fail "the route's upstream starts"; diag "$(cat "$SCRATCH/ports" "$SCRATCH/openssl.log")"; }
    good=$(awk '$1 == "good" {print $2}' "$SCRATCH/ports")
    export RF_TEST_ROUTE_KEY="sk-audit-$TOKEN"
    echo "qs-$TOKEN" >"$WS/query-value"
    expect_exit 0 "a command sends an allowed and a refused request through a route" \
        rf run --status-json "$SCRATCH/route.json" --route "api=https://upstream.test:$good" \
        --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
        --route-header "api:x-api-key=env:RF_TEST_ROUTE_KEY" --route-allow "api:POST /v1/messages*" -- sh -c '
        u=http://127.0.0.1:3128/route/api
        curl -sS -o /dev/null -X POST -d "{}" "$u/v1/messages?key=$(cat "$1")"
        curl -sS -o /dev/null "$u/v1/files"' sh "$WS/query-value"
    rid=$(status_field "$SCRATCH/route.json" sandbox)
    expect_exit 0 "audit show --event route.request" rf audit show --json --sandbox "$rid" --event route.request
    check "...the POST with its path (no query) and 200, the GET with 403" python3 -c '
import json, sys
r = [json.loads(l) for l in sys.argv[1].splitlines()]
got = [(x["route"], x["method"], x["path"], x["status"]) for x in r]
assert got == [("api", "POST", "/v1/messages", 200), ("api", "GET", "/v1/files", 403)], got
assert r[0]["bytes_sent"] > 0 and r[0]["bytes_received"] > 0, r[0]' "$OUT"
    expect_exit 0 "audit export --format ocsf of the route's requests" \
        rf audit export --format ocsf --sandbox "$rid" --event route.request
    check "...HTTP Activity with the method, the path and the answer's code" python3 -c '
import json, sys
r = [json.loads(l) for l in sys.argv[1].splitlines()]
assert [o["class_uid"] for o in r] == [4002, 4002], r
assert r[0]["http_request"] == {"http_method": "POST", "url": {"path": "/v1/messages"}}, r[0]
assert r[0]["http_response"] == {"code": 200} and r[1]["http_response"] == {"code": 403}, r' "$OUT"
    check "control: the upstream got the key and the query" sh -c \
        'grep -q "sk-audit-$1" "$2" && grep -q "qs-$1" "$2"' sh "$TOKEN" "$SCRATCH/requests.jsonl"
    lacks "...the trail has not the key" "$(cat "$(log)")" "sk-audit-$TOKEN"
    lacks "...nor the query's token" "$(cat "$(log)")" "qs-$TOKEN"
    expect_exit 0 "...and the chain verifies" rf audit verify
    unset RF_TEST_ROUTE_KEY
fi

# ps shows, while the sandbox runs, what its proxy sent out and refused.
psready="$WS/psready-$TOKEN"
rf run "${NET[@]}" -- python3 -c '
import socket, sys, time, urllib.request
for _ in range(3):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT refused.example:443 HTTP/1.1\r\n\r\n")
    s.recv(100)
p = urllib.request.ProxyHandler({"http": "http://127.0.0.1:3128"})
req = urllib.request.Request("http://%s:%s/" % (sys.argv[1], sys.argv[2]), data=b"x" * 50000, method="POST")
try:
    urllib.request.build_opener(p).open(req).read()
except Exception:
    pass  # http.server answers POST with 501: the bytes went out anyway
open(sys.argv[3], "w").write("ok")
time.sleep(60)' "up.$TOKEN.test" "$up_port" "$psready" >"$SCRATCH/ps-net.out" 2>&1 &
psrun=$!
at_exit "kill $psrun 2>/dev/null"
wait_until 30 test -s "$psready" && pass "a sandbox that sent and was refused runs" || fail "a sandbox that sent and was refused runs"
ps_net() { rf ps --json | python3 -c 'import json,sys
o = [o for o in json.load(sys.stdin) if sys.argv[1] in " ".join(o["command"])]
assert o and o[0]["refusals"] == 3 and o[0]["bytes_out"] >= 50000, o' "$psready"; }
check "ps --json: its refusals (3) and bytes_out (at least the 50000 it posted), within 15 s" wait_until 15 ps_net ||
    diag "$(cat "$SCRATCH/ps-net.out")" "$(ls -la "$RINGFENCE_HOME/run")"
expect_exit 0 "ps prints the columns" rf ps
contains "...OUT" "$OUT" "OUT"
contains "...REFUSED" "$OUT" "REFUSED"
psid=$(rf ps --json | python3 -c 'import json,sys
print([o["id"] for o in json.load(sys.stdin) if sys.argv[1] in " ".join(o["command"])][0])' "$psready")
expect_exit 0 "a sandbox tries to write its own figures file" \
    rf run --workspace "$SCRATCH" -- sh -c '(echo 0 0 > "$1/run/$2.net") 2>/dev/null && echo WROTE; true' sh "$RINGFENCE_HOME" "$psid"
lacks "...it cannot" "$OUT" WROTE
rf stop --grace 1 "$psid" >/dev/null 2>&1; wait "$psrun" 2>/dev/null
check "...its figures file goes with its entry" test ! -e "$RINGFENCE_HOME/run/$psid.net"

# Off: nothing recorded (and the status record has no head).
lines=$(wc -l <"$(log)")
expect_exit 0 "a run with audit: false" env RINGFENCE_AUDIT=false "$RINGFENCE" run --status-json "$SCRATCH/off.json" -- true
check "...adds no record" test "$(wc -l <"$(log)")" = "$lines"
check "...and its status record has no head" test -z "$(status_field "$SCRATCH/off.json" audit_head)"

# A warm pool's sandbox: its command is recorded when the pool hands it over.
sock="$SCRATCH/pool.sock"
"$RINGFENCE" serve --socket "$sock" --pool-size 1 >/dev/null 2>"$SCRATCH/serve.err" &
serve_pid=$!
at_exit "kill $serve_pid 2>/dev/null"
wait_until 30 test -S "$sock" && pass "a pool serves" || fail "a pool serves"
expect_exit 0 "run --via the pool" rf run --via "$sock" -- echo "pool-$TOKEN"
expect_exit 0 "audit show --event run.command" rf audit show --json --event run.command
contains "...names the command the pool ran" "$OUT" "pool-$TOKEN"
# ps shows a pool sandbox's real command once the pool hands it one.
pooldur="4.$$$RANDOM"
rf run --via "$sock" -- sleep "$pooldur" >/dev/null 2>&1 &
poolrun=$!
pool_listed() { rf ps --json | python3 -c 'import json,sys
assert any(o["command"] == ["sleep", sys.argv[1]] for o in json.load(sys.stdin))' "$pooldur" 2>/dev/null; }
check "ps lists the pool sandbox with the command it was handed (not the placeholder)" wait_until 10 pool_listed
wait "$poolrun" 2>/dev/null || true
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true
expect_exit 0 "the trail verifies after the pool stopped" rf audit verify
# On failure: every record of the sandboxes without an end, and serve's
# stderr, to tell a lost write from a server that exited before freeing
# its pool.
if python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
starts = {r["sandbox"] for r in recs if r["event"] == "run.start"}
ends = {r["sandbox"] for r in recs if r["event"] == "run.end"}
missing = starts - ends
if missing:
    print([(r["sandbox"], r["event"], r.get("time")) for r in recs if r["sandbox"] in missing])
    sys.exit(1)' "$(log)" >"$SCRATCH/ends.out" 2>&1; then
    pass "...and each run.start has its run.end (the idle sandbox's: waited false)"
else
    fail "...and each run.start has its run.end (the idle sandbox's: waited false)"
    diag "without an end: $(cat "$SCRATCH/ends.out"); serve's stderr: $(tail -5 "$SCRATCH/serve.err" 2>/dev/null)"
fi

# A stopping pool whose command in flight ignores SIGTERM ends past
# serve's 5 s wait for its connections (kill_grace 7 s here): serve still
# waits for it, then frees the pool, so the in-flight sandbox and the idle
# one both get their run.end (it used to exit at 5 s and lose both).
printf 'limits: { kill_grace: 7 }\n' >"$SCRATCH/grace.yaml"
sock2="$SCRATCH/pool2.sock"
"$RINGFENCE" serve --socket "$sock2" --pool-size 1 --config "$SCRATCH/grace.yaml" >/dev/null 2>"$SCRATCH/serve2.err" &
serve2=$!
at_exit "kill -9 $serve2 2>/dev/null"
wait_until 30 test -S "$sock2" || fail "a second pool serves"
stubborn="stubborn-$$-$RANDOM"
rf run --via "$sock2" --config "$SCRATCH/grace.yaml" -- \
    bash -c "trap '' TERM; echo up >'$WS/up2'; exec -a $stubborn sleep 60" >/dev/null 2>&1 &
stubborn_client=$!
wait_until 30 test -s "$WS/up2" && pass "control: the pool runs a command that ignores SIGTERM" ||
    fail "control: the pool runs a command that ignores SIGTERM"
t0=$(date +%s)
kill "$serve2"; wait "$serve2" 2>/dev/null
took=$(($(date +%s) - t0))
wait "$stubborn_client" 2>/dev/null
check "serve stops after the command's kill_grace, not at its 5 s wait for connections (took ${took} s)" test "$took" -ge 6
if python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
starts = {r["sandbox"] for r in recs if r["event"] == "run.start"}
ends = {r["sandbox"] for r in recs if r["event"] == "run.end"}
sys.exit(1 if starts - ends else 0)' "$(log)"; then
    pass "...and every run.start still has its run.end (the one in flight, the idle one)"
else
    fail "...and every run.start still has its run.end (the one in flight, the idle one)"
    diag "serve's stderr: $(tail -5 "$SCRATCH/serve2.err")"
fi
check "...and no process of it is left" sh -c "! pgrep -f '^$stubborn' >/dev/null"

# A command cannot switch the trail off for the next run: a workspace file
# it leaves may only tighten.
expect_exit 0 "a command leaves a workspace file that turns auditing off" \
    rf run -- sh -c 'printf "{\"audit\": false}\n" > .ringfence.json'
lines=$(wc -l <"$(log)")
expect_exit 125 "...the next run is refused" rf run -- true
contains "...naming the setting" "$ERR" "audit: a workspace configuration may only tighten"
check "...and nothing ran unrecorded" test "$(wc -l <"$(log)")" = "$lines"
rm -f "$WS/.ringfence.json"

# Runs at once append one at a time (the head's flock): the chain stays whole.
lines=$(wc -l <"$(log)")
pids=()
for i in $(seq 12); do rf run -- true & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
check "twelve runs at once added 24 records" test "$(wc -l <"$(log)")" = $((lines + 24))
expect_exit 0 "...and the chain verifies" rf audit verify

# A command the exec guard blocks ran nowhere: the trail has it anyway.
expect_exit 126 "exec of a command the guard blocks" rf exec -- "rm -rf / # $TOKEN$esc"
expect_exit 0 "audit show --event guard.refused" rf audit show --event guard.refused
contains "...names the command" "$OUT" "rm -rf / # $TOKEN"
lacks "...with no escape byte from it" "$OUT" $'\e'

# Each record also goes to the journal where there is one; a test-hook
# build sends it to RINGFENCE_TEST_JOURNAL_SOCKET instead (a fake journal).
if ! rf config >/dev/null 2>&1 || RINGFENCE_TEST_MANAGED="$SCRATCH/none" "$RINGFENCE" config >/dev/null 2>&1; then
    skip "records reach the journal" "not a test-hook build (RINGFENCE_TEST_JOURNAL_SOCKET is ignored)"
else
    jsock="$SCRATCH/journal.sock"
    python3 - "$jsock" "$SCRATCH/journal.ready" "$SCRATCH/journal.got" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2], "w").write("ready\n")
s.settimeout(60)
got = []
try:
    while len(got) < 2:
        got.append(s.recv(1 << 16).decode())
except socket.timeout:
    pass
open(sys.argv[3], "w").write("\n--\n".join(got))
PYEOF
    jpid=$!
    wait_until 30 test -s "$SCRATCH/journal.ready" || fail "the fake journal listens"
    expect_exit 0 "a run with a journal" env RINGFENCE_TEST_JOURNAL_SOCKET="$jsock" "$RINGFENCE" run -- true
    wait "$jpid"
    got=$(cat "$SCRATCH/journal.got" 2>/dev/null)
    contains "...sends its records to it, as ringfence's" "$got" "SYSLOG_IDENTIFIER=ringfence"
    contains "...run.start first" "$got" "RINGFENCE_EVENT=run.start"
    contains "...each with the record itself" "$got" 'MESSAGE={"seq":'
    contains "...and its hash" "$got" "RINGFENCE_AUDIT_HASH="
fi

# ── The running sandboxes: ps, stop ─────────────────────────────────────
reg="$RINGFENCE_HOME/run"
ready="$WS/ready-$TOKEN"
sandbox_id() { rf ps --json | python3 -c 'import json,sys
for o in json.load(sys.stdin):
    if sys.argv[1] in " ".join(o["command"]): print(o["id"])' "$1"; }
# A long command whose name carries escape sequences, and a grandchild that
# left its session (setsid): stop must end it too.
dur="3$((RANDOM % 1000)).$$"  # a sleep no other process on the host runs
rf run -- env "RF=$TOKEN$esc" sh -c 'setsid sleep "$1" & echo ok > "$2"; exec sleep "$1"' sh "$dur" "$ready" \
    >"$SCRATCH/long.out" 2>&1 &
long=$!
at_exit "kill $long 2>/dev/null"
wait_until 30 test -s "$ready" && pass "a long sandbox started" || fail "a long sandbox started"
id=$(sandbox_id "$TOKEN")
expect_exit 0 "ps --json lists it" rf ps --json
check "...with its id, pid and command" python3 -c 'import json,sys
o = [o for o in json.loads(sys.argv[1]) if o["id"] == sys.argv[2]][0]
assert o["pid"] > 1 and o["processes"] >= 3 and o["command"][0] == "env"' "$OUT" "$id"
expect_exit 0 "ps prints it for people" rf ps
contains "...with its id" "$OUT" "$id"
lacks "...with no escape byte from its command" "$OUT" $'\e'
contains "...which is shown as \\x1b" "$OUT" '\x1b]0;pwned'
expect_exit 0 "top --once prints it too" rf top --once
contains "...with its id" "$OUT" "$id"

# A sandbox cannot reach the registry to forge or remove an entry.
expect_exit 0 "a command tries to list, forge and remove registry entries" \
    rf run --workspace "$SCRATCH" -- sh -c '
        ls -A "$1/run" 2>/dev/null && echo LISTED
        (echo "{}" > "$1/run/forged.json") 2>/dev/null && echo FORGED
        (rm -f "$1/run/$2.json") 2>/dev/null; true' sh "$RINGFENCE_HOME" "$id"
lacks "...it cannot list it" "$OUT" LISTED
lacks "...nor write an entry" "$OUT" FORGED
check "...nor remove the long sandbox's" test -f "$reg/$id.json"

# Forged entries written on the host (by the user, or by a tool of theirs)
# are checked against the processes they name.
entry=$(cat "$reg/$id.json")
forge() { # NAME PYTHON-EDIT: a copy of the real entry, edited
    python3 -c 'import json,sys; o=json.loads(sys.argv[1]); o["id"]=sys.argv[2]; exec(sys.argv[3]); print(json.dumps(o))' \
        "$entry" "$1" "$2" >"$reg/$1.json"
}
forge aaaaaaaaaaa1 'o["pid"] = 1'                      # host init, not a child of the owner
forge aaaaaaaaaaa2 'o["start"] = o["start"] + 1'        # the pid, reused by another process
forge aaaaaaaaaaa3 'o["owner_pid"] = 1; o["owner_start"] = 0'
forge aaaaaaaaaaa4 'o["uid"] = o["uid"] + 1'
expect_exit 0 "ps with four forged entries beside the real one" rf ps --json
for n in 1 2 3 4; do lacks "...forged entry $n is not listed" "$OUT" "aaaaaaaaaaa$n"; done
contains "...the real one is" "$OUT" "$id"
expect_exit 125 "stop of a forged entry (host init) is refused" rf stop aaaaaaaaaaa1
check "...host init is still there (control: this machine's pid 1)" test -d /proc/1

# Another user's sandbox: an ordinary user cannot stop it, not even through
# an entry copied into their own registry.
if is_root && id rftest >/dev/null 2>&1; then
    other=$(runuser -u rftest -- mktemp -d /tmp/rf-audit-other.XXXXXX)
    at_exit "rm -rf '$other'"
    runuser -u rftest -- mkdir -p "$other/run"
    runuser -u rftest -- sh -c 'cat > "$1/run/$2.json"' sh "$other" "$id" <"$reg/$id.json"
    as_other() { runuser -u rftest -- env RINGFENCE_HOME="$other" "$RINGFENCE" "$@"; }
    OUT=$(cd /tmp && as_other ps --json 2>&1)
    lacks "another user: root's sandbox, copied into their registry, is not listed" "$OUT" "$id"
    rc=0; ERR=$(cd /tmp && as_other stop --grace 0 "$id" 2>&1) || rc=$?
    check "...and stop of it is refused" test "$rc" = 125
    check "...and it still runs" test -f "$reg/$id.json" -a -d "/proc/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$reg/$id.json")"
else
    skip "another user cannot stop this user's sandbox" "needs root and the user rftest (tests/run makes it)"
fi

# Root's ps and a user's own RINGFENCE_HOME: the user's run leaves a pointer
# in a root-owned sticky directory (the package makes /run/ringfence/homes;
# the test hook names another), and root's ps lists that registry too.
if is_root && id rftest >/dev/null 2>&1; then
    ptrs=$(mktemp -d /tmp/rf-ptrs.XXXXXX); chmod 1733 "$ptrs"
    noptrs=$(mktemp -d /tmp/rf-ptrs.XXXXXX); chmod 1733 "$noptrs"
    uhome=$(runuser -u rftest -- mktemp -d /tmp/rf-audit-home.XXXXXX)
    at_exit "rm -rf '$ptrs' '$noptrs' '$uhome'"
    udur="5$((RANDOM % 1000)).$$"
    (cd /tmp && runuser -u rftest -- env RINGFENCE_HOME="$uhome/rf" RINGFENCE_TEST_REGISTRY_POINTERS="$ptrs" \
        "$RINGFENCE" run --workspace "$uhome" -- sleep "$udur" >/dev/null 2>&1) &
    urun=$!
    at_exit "kill $urun 2>/dev/null; pkill -u rftest -f '^sleep $udur' 2>/dev/null"
    listed_with() { RINGFENCE_TEST_REGISTRY_POINTERS="$1" "$RINGFENCE" ps --json | python3 -c 'import json,sys
assert any(o["command"] == ["sleep", sys.argv[1]] for o in json.load(sys.stdin))' "$udur" 2>/dev/null; }
    check "root's ps lists a user's sandbox under their own RINGFENCE_HOME, through its pointer" \
        wait_until 20 listed_with "$ptrs"
    not_listed_with() { ! listed_with "$1"; }
    check "...control: not without the pointer" not_listed_with "$noptrs"
    check "...the pointer is the user's, named for their uid" \
        sh -c '[ "$(stat -c %U "$1"/"$(id -u rftest)".*)" = rftest ]' sh "$ptrs"
    # A pointer to a directory its owner does not own is not followed: here
    # a root-owned copy of root's long sandbox's entry, which would be
    # listed twice if it were.
    rootreg=$(mktemp -d /tmp/rf-rootreg.XXXXXX); chmod 755 "$rootreg"
    at_exit "rm -rf '$rootreg'"
    cp "$reg/$id.json" "$rootreg/"
    runuser -u rftest -- sh -c 'printf %s "$2" > "$1/$(id -u).forged"' sh "$ptrs" "$rootreg"
    check "...a user's pointer to a registry they do not own is not followed" python3 -c 'import json,sys
ids = [o["id"] for o in json.loads(sys.argv[1])]
assert ids.count(sys.argv[2]) == 1, ids' "$(RINGFENCE_TEST_REGISTRY_POINTERS="$ptrs" "$RINGFENCE" ps --json)" "$id"
    kill "$urun" 2>/dev/null; pkill -u rftest -f "^sleep $udur" 2>/dev/null; wait "$urun" 2>/dev/null || true
else
    skip "root's ps follows a user's pointer to their registry" "needs root and the user rftest (tests/run makes it)"
fi

# stop: the whole tree ends, the grandchild that left its session too.
check "control: the grandchild and the command run (two sleeps)" test "$(pgrep -fc "^sleep $dur")" = 2
expect_exit 0 "stop ID" rf stop --grace 5 "$id"
wait "$long"; rc=$?
check "...the run ended by SIGTERM (143)" test "$rc" = 143
none_left() { ! pgrep -f "^sleep $dur" >/dev/null; }
check "...no process of its tree is left (the setsid'd grandchild too)" none_left
expect_exit 0 "ps no longer lists it" rf ps --json
lacks "...its id is gone" "$OUT" "$id"
check "...nor its entry" test ! -e "$reg/$id.json"
expect_exit 0 "the trail has its end" rf audit show --json --sandbox "$id" --event run.end
contains "...with the signal" "$OUT" '"signal":15'

# changes: overlay: what a person applied or discarded of a session is on the
# trail, linked to its run by the session's id; a file name the command
# chose (an escape sequence in it) is stored as it is and shown visibly.
ovl_ws=$SCRATCH/ovl-ws
mkdir -p "$ovl_ws"
session_of() { status_field "$SCRATCH/ovl.json" session; }
expect_exit 0 "an overlay run writes a file with an escape sequence in its name" \
    rf run --workspace "$ovl_ws" --changes overlay --status-json "$SCRATCH/ovl.json" -- \
    sh -c 'echo x > "$(printf "evil\033[2Jname")"; echo y > plain'
sid=$(session_of)
expect_exit 0 "changes apply" rf changes apply "$sid"
expect_exit 0 "the trail has changes.applied" rf audit show --json --event changes.applied
contains "...naming the session" "$OUT" "\"session\":\"$sid\""
contains "...and what was applied" "$OUT" '"applied":2'
expect_exit 0 "audit show on a pipe" rf audit show --event changes.applied
lacks "...sends no escape byte of the file name" "$OUT" $'\033'
expect_exit 0 "another overlay run" rf run --workspace "$ovl_ws" --changes overlay --status-json "$SCRATCH/ovl.json" -- \
    sh -c 'echo z > other'
sid2=$(session_of)
expect_exit 0 "changes discard" rf changes discard "$sid2"
expect_exit 0 "the trail has changes.discarded" rf audit show --json --event changes.discarded
contains "...naming that session" "$OUT" "\"session\":\"$sid2\""
expect_exit 0 "the chain still verifies" rf audit verify
