# SPDX-License-Identifier: LGPL-2.1-or-later
# Credential routes: keys stay outside (issue 28). A local HTTPS upstream
# (tests/security/route-upstream.py, a CA made here and trusted with
# --route-ca) records every request. The real key must arrive there and
# only there; inside, the environment, every /proc/*/environ and cmdline
# and the sandbox's files hold no copy of it; the route refuses other
# methods and paths, smuggling attempts and bad certificates; bodies
# stream both ways.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
PY=/usr/bin/python3

for tool in openssl curl; do
    if ! command -v "$tool" >/dev/null; then
        skip "credential route tests" "$tool is not installed"
        exit 0
    fi
done

# ── Certificates: a test CA; good, expired, self-signed, other-name ──
(
    cd "$SCRATCH" || exit 1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=rf-route-ca
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key -out srv.csr -subj /CN=upstream.test
    printf 'subjectAltName=DNS:upstream.test,DNS:other.test\n' >san.ext
    openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile san.ext
    mkdir db && : >db/index && echo 01 >db/serial
    printf '[ca]\ndefault_ca=d\n[d]\ndir=.\ndatabase=db/index\nserial=db/serial\nnew_certs_dir=db\n'\
'default_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n' >ca.cnf
    openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in srv.csr -out expired.pem \
        -startdate 20200101000000Z -enddate 20200102000000Z -extfile san.ext
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout self.key -out self.pem -days 2 -subj /CN=upstream.test \
        -addext subjectAltName=DNS:upstream.test
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout wrong.key -out wrong.csr -subj /CN=wrong.test
    printf 'subjectAltName=DNS:wrong.test\n' >wrong.ext
    openssl x509 -req -in wrong.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out wrong.pem -days 2 \
        -extfile wrong.ext
) >"$SCRATCH/openssl.log" 2>&1 || { fail "make a test CA"; diag "$(tail -5 "$SCRATCH/openssl.log")"; exit 0; }
chmod 644 "$SCRATCH/ca.pem"
cp "$SCRATCH/ca.pem" "$WS/ca.pem" # for clients inside: $SCRATCH is not in the sandbox

LOG="$SCRATCH/requests.jsonl"
: >"$LOG"
chmod 666 "$LOG"
S=$SCRATCH
$PY "$HERE/route-upstream.py" "$LOG" good "$S/srv.pem" "$S/srv.key" other "$S/srv.pem" "$S/srv.key" \
    expired "$S/expired.pem" "$S/srv.key" self "$S/self.pem" "$S/self.key" wrong "$S/wrong.pem" "$S/wrong.key" \
    >"$SCRATCH/ports" 2>&1 &
srv_pid=$!
at_exit "kill $srv_pid 2>/dev/null"
wait_until 10 grep -qs '^wrong ' "$SCRATCH/ports" || { fail "upstream starts"; diag "$(cat "$SCRATCH/ports")"; exit 0; }
port() { awk -v n="$1" '$1 == n {print $2}' "$SCRATCH/ports"; }
GOOD=$(port good)

# The key: random, made here, never written to a file the sandbox sees.
KEY="sk-rf-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export RF_TEST_ROUTE_KEY="$KEY"
ROUTE=(--route "api=https://upstream.test:$GOOD" --add-host upstream.test:127.0.0.1
    --route-ca "api:$SCRATCH/ca.pem" --route-header "api:x-api-key=env:RF_TEST_ROUTE_KEY"
    --route-allow "api:POST /v1/messages*" --route-allow "api:GET /v1/sse" --route-allow "api:POST /v1/upload"
    --status-json "$SCRATCH/status.json")
route_run() { rf run "${ROUTE[@]}" "$@"; }
status() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["network"]; print(eval(sys.argv[2]))' \
    "$SCRATCH/status.json" "$1"; }
# How many recorded requests (of server $1, optionally at path $2) carry header x-api-key = $3.
arrived() {
    $PY - "$LOG" "$@" <<'EOF'
import json, sys
log, server, path, want = sys.argv[1:5]
n = 0
for line in open(log):
    e = json.loads(line)
    if e.get("server") != server or "headers" not in e or (path and e["path"] != path):
        continue
    h = {k.lower(): v for k, v in e["headers"].items()}
    n += h.get("x-api-key") == want
print(n)
EOF
}
URL='http://127.0.0.1:3128/route/api'

# ── The key arrives at the route's upstream, and only there ──
expect_exit 0 "a POST through the route reaches the upstream" \
    route_run -- curl -fsS -X POST -H "x-api-key: sent-from-inside" -d '{"hi":1}' "$URL/v1/messages"
contains "the upstream answered" "$OUT" '"ok": true'
check "the real key arrived at the upstream, replacing what the client sent" \
    test "$(arrived good /v1/messages "$KEY")" = 1
check "the client's own x-api-key did not reach the upstream" test "$(arrived good /v1/messages sent-from-inside)" = 0
check "status: one request on route api" test "$(status 'd["routes"][0]["requests"]')" = 1
expect_exit 0 "RINGFENCE_ROUTE_API_URL points at the route" route_run -- sh -c 'echo "$RINGFENCE_ROUTE_API_URL"'
contains "its value" "$OUT" "$URL"

# Inside, nothing holds the key: not the environment (even with
# --keep-env of its variable, or a copy under another name), not any
# process's environ or cmdline, not a file of the sandbox's tree (the
# host's read-only system directories are skipped: the key, made now, is
# in no file there). The needle is passed in two halves so that no
# process's own arguments hold it.
SCAN='import os, sys
needle = (os.environ["H1"] + os.environ["H2"]).encode()
hits = []
for pid in os.listdir("/proc"):
    for what in ("environ", "cmdline"):
        try:
            if needle in open(f"/proc/{pid}/{what}", "rb").read(): hits.append(f"/proc/{pid}/{what}")
        except OSError: pass
skip = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin"}
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
    for f in files:
        p = os.path.join(root, f)
        try:
            if os.path.isfile(p) and not os.path.islink(p) and needle in open(p, "rb").read(): hits.append(p)
        except OSError: pass
print("hits:", hits)'
H1=${KEY:0:12} H2=${KEY:12}
# (COPY through the environment: ringfence's own argv is pid 1's cmdline.)
export RF_TEST_COPY="x$KEY"
expect_exit 0 "scan inside for the key" route_run --keep-env RF_TEST_ROUTE_KEY --keep-env RF_TEST_COPY \
    --env "H1=$H1" --env "H2=$H2" -- $PY -c "$SCAN"
contains "no process environment, cmdline or file inside holds the key" "$OUT" "hits: []"
expect_exit 0 "env inside" route_run --keep-env RF_TEST_ROUTE_KEY -- env
lacks "env inside has no copy of the key (--keep-env of its variable is dropped)" "$OUT" "$KEY"
lacks "nor its variable" "$OUT" "RF_TEST_ROUTE_KEY="

# The preset's placeholder is worthless elsewhere: sent to another allowed
# host, it is only the placeholder.
OTHER=$(port other)
expect_exit 0 "preset: the placeholder sent to another allowed host" \
    rf run --route anthropic --route-header "anthropic:x-api-key=env:RF_TEST_ROUTE_KEY" \
    --allow-domain other.test --add-host other.test:127.0.0.1 --allow-port "$OTHER" \
    -- sh -c "curl -fsS --cacert '$WS/ca.pem' -H \"x-api-key: \$ANTHROPIC_API_KEY\" https://other.test:$OTHER/x; \
echo; echo \"\$ANTHROPIC_BASE_URL\""
contains "ANTHROPIC_BASE_URL points at the route" "$OUT" "http://127.0.0.1:3128/route/anthropic"
check "the other host got the placeholder, never the key" \
    test "$(arrived other /x ringfence-route-placeholder)" = 1 -a "$(arrived other /x "$KEY")" = 0

# The github preset, its URL pointed at the test upstream (a layer may
# override a preset's URL): git inside rewrites https://github.com/ to the
# route (GIT_CONFIG_* url.insteadOf) and the token arrives as Basic auth.
if command -v git >/dev/null; then
    printf '{"network": {"routes": {"github": {"preset": "github", "url": "https://upstream.test:%s", "ca": "%s"}}}}\n' \
        "$GOOD" "$SCRATCH/ca.pem" >"$SCRATCH/github.json"
    export GITHUB_TOKEN="$KEY"
    # (The test upstream speaks no git: git falls back to dumb HTTP, whose
    # GET /o/r/HEAD the preset's rules refuse.)
    rf run --config "$SCRATCH/github.json" --add-host upstream.test:127.0.0.1 \
        -- git ls-remote https://github.com/o/r >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null
    contains "github preset: git's dumb-HTTP fallback is outside the rules" "$(cat "$SCRATCH/err")" \
        "route github: refused GET /o/r/HEAD"
    basic="Basic $(printf 'x-access-token:%s' "$KEY" | base64 -w0)"
    check "git's request reached the upstream with the token as Basic auth" $PY -c '
import json, sys
hits = [e for e in map(json.loads, open(sys.argv[1])) if e.get("path", "").startswith("/o/r/info/refs")]
assert hits and hits[-1]["headers"].get("Authorization") == sys.argv[2], hits' "$LOG" "$basic"
    unset GITHUB_TOKEN
else
    skip "github preset through git" "git is not installed"
fi

# ── Rules: other methods and paths are refused, and say why ──
expect_exit 0 "a DELETE on the route" route_run -- curl -sS -w '\n%{http_code}' -X DELETE "$URL/v1/messages"
contains "answers 403" "$OUT" "403"
contains "its body says why" "$OUT" "not in the route's allow rules"
contains "a line on stderr" "$ERR" "route api: refused DELETE /v1/messages"
check "status: the refusal is counted" test "$(status 'd["routes"][0]["refusals"]')" = 1
expect_exit 0 "a GET of another path" route_run -- curl -sS -w '\n%{http_code}' "$URL/v1/files"
contains "answers 403" "$OUT" "403"
for p in '/v1/messages/../files' '/v1/messages/%2e%2e/files' '/v1/messages%2f..%2ffiles' '/v1//messages'; do
    expect_exit 0 "path trick $p" route_run -- curl -sS --path-as-is -o /dev/null -w '%{http_code}' -X POST "$URL$p"
    contains "path trick $p is refused" "$OUT" "400"
done
check "no refused request reached the upstream" test "$(grep -c '"/v1/files"\|%2e\|//messages' "$LOG")" = 0
expect_exit 0 "an unknown route" route_run -- curl -sS -w '\n%{http_code}' "http://127.0.0.1:3128/route/nope/v1/x"
contains "answers 404 naming it" "$OUT" "route nope: no such route"

# ── Streaming: server-sent events arrive as they are sent ──
SSE='import time, urllib.request as u, os
r = u.urlopen(os.environ["RINGFENCE_ROUTE_API_URL"] + "/v1/sse")
for line in r:
    if line.startswith(b"data:"): print("got", line.decode().strip(), time.time(), flush=True)'
expect_exit 0 "an event stream through the route" route_run -- $PY -c "$SSE"
got_one=$(awk '/event one/ {print $5}' <<<"$OUT")
sent_one=$($PY -c 'import json,sys; print([json.loads(l)["t"] for l in open(sys.argv[1]) if "sse_sent" in l and "one" in l][-1])' "$LOG")
sent_two=$($PY -c 'import json,sys; print([json.loads(l)["t"] for l in open(sys.argv[1]) if "sse_sent" in l and "two" in l][-1])' "$LOG")
if [ -n "$got_one" ] && $PY -c "import sys; sys.exit(not $got_one < $sent_two)"; then
    pass "the first event arrived before the second was sent (not buffered)"
else
    fail "the first event arrived before the second was sent (not buffered)"; diag "$OUT"
fi
diag "first event: $($PY -c "print(round(($got_one - $sent_one) * 1000, 2))" 2>/dev/null) ms from upstream send to arrival inside"

STREAMS='import os, threading, urllib.request as u
got = []
def one():
    r = u.urlopen(os.environ["RINGFENCE_ROUTE_API_URL"] + "/v1/sse")
    got.append(sum(1 for line in r if line.startswith(b"data:")))
ts = [threading.Thread(target=one) for _ in range(50)]
[t.start() for t in ts]; [t.join() for t in ts]
print("streams", len(got), "events", sum(got))'
expect_exit 0 "50 event streams at once" route_run -- $PY -c "$STREAMS"
contains "every stream got both events" "$OUT" "streams 50 events 100"

# An HTTP/1.0 client (a raw socket: curl and urllib would read a chunked
# body whatever they asked for). The route forwards it as 1.0, so the
# upstream answers it as one: no chunked body, the end is the connection's.
HTTP10='import os, socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"GET /route/api/v1/sse HTTP/1.0\r\nHost: x\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
head, _, body = got.partition(b"\r\n\r\n")
print("chunked" if b"chunked" in head.lower() else "not-chunked", body.decode().replace("\n", "|"))'
expect_exit 0 "an HTTP/1.0 client through the route" route_run -- $PY -c "$HTTP10"
contains "it gets a body it can read: not chunked" "$OUT" "not-chunked data: event one||data: event two||"
check "the upstream was asked in HTTP/1.0" $PY -c 'import json, sys
v = [json.loads(l).get("version") for l in open(sys.argv[1]) if "/v1/sse" in l and "headers" in l]
sys.exit(v[-1] != "HTTP/1.0")' "$LOG"
HTTP10_TE='import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"POST /route/api/v1/messages HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
print(s.recv(65536).split(b"\r\n")[0].decode())'
expect_exit 0 "an HTTP/1.0 request with Transfer-Encoding" route_run -- $PY -c "$HTTP10_TE"
contains "is refused: 400 (1.0 has no chunked coding: framing an upstream may read otherwise)" "$OUT" " 400 "

# ── Bodies: large, chunked, and many requests at once ──
head -c 2000000 /dev/urandom >"$WS/big.bin"
expect_exit 0 "a 2 MB upload (Content-Length)" \
    route_run -- curl -fsS -X POST --data-binary @big.bin -H 'Content-Type: application/octet-stream' "$URL/v1/upload"
contains "all of it arrived" "$OUT" '"bytes": 2000000'
expect_exit 0 "a chunked upload" \
    route_run -- curl -fsS -X POST -H 'Transfer-Encoding: chunked' --data-binary @big.bin "$URL/v1/upload"
contains "all of it arrived, chunked" "$OUT" '"bytes": 2000000'
expect_exit 0 "two requests on one kept-alive connection" \
    route_run -- curl -fsS -X POST -d a "$URL/v1/messages" -X POST -d b "$URL/v1/messages"
contains "both answered" "$(grep -o '"ok": true' <<<"$OUT" | wc -l)" 2
expect_exit 0 "50 requests at once" route_run -- sh -c \
    "seq 50 | xargs -P 50 -I{} curl -fsS -o /dev/null -w '%{http_code}\n' -X POST -d {} $URL/v1/messages | sort | uniq -c"
contains "all 50 answered 200" "$OUT" "50 200"
check "status: 50 requests counted" test "$(status 'd["routes"][0]["requests"]')" = 50

# Every backend with the allowlist has routes: the proxy is the same.
if command -v bwrap >/dev/null && ! is_root; then
    before=$(arrived good /v1/messages "$KEY")
    expect_exit 0 "bwrap backend: a POST through the route" route_run --backend bwrap -- curl -fsS -X POST -d x "$URL/v1/messages"
    check "bwrap backend: the key arrived" test "$(arrived good /v1/messages "$KEY")" = $((before + 1))
else
    skip "bwrap backend through a route" "needs bwrap and an unprivileged caller (root's bwrap runs need the workspace handed over: tests/security/backend-bwrap.sh)"
fi

# ── Request smuggling from inside is refused ──
SMUGGLE='import socket, sys
heads = {
 "cl+te": b"POST /route/api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /route/api/v1/smuggled HTTP/1.1\r\n\r\n",
 "two cl": b"POST /route/api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\nPOST /route/api/v1/smuggled HTTP/1.1\r\n\r\n",
 "obs-fold": b"POST /route/api/v1/messages HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc",
 "te list": b"POST /route/api/v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
 "space colon": b"POST /route/api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello",
 "bare lf": b"POST /route/api/v1/messages HTTP/1.1\nHost: x\n\n",
 "huge": b"POST /route/api/v1/messages HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n",
}
for name, data in heads.items():
    s = socket.create_connection(("127.0.0.1", 3128))
    try: s.sendall(data)
    except OSError: pass
    r = s.recv(200).split(b"\r\n")[0].decode()
    print(name, "->", r)'
expect_exit 0 "smuggling attempts" route_run -- $PY -c "$SMUGGLE"
for name in "cl+te" "two cl" "obs-fold" "te list" "space colon" "bare lf"; do
    contains "refused: $name" "$OUT" "$name -> HTTP/1.1 400"
done
contains "refused: a head over 16 KiB" "$OUT" "huge -> HTTP/1.1 431"
check "no smuggled request reached the upstream" test "$(grep -c smuggled "$LOG")" = 0

# ── Bad upstream certificates: refused, and the key never sent ──
for kind in expired:"certificate has expired" self:"self-signed certificate" wrong:"hostname mismatch"; do
    name=${kind%%:*} why=${kind#*:}
    expect_exit 0 "upstream certificate: $name" rf run --route "api=https://upstream.test:$(port "$name")" \
        --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
        --route-header "api:x-api-key=env:RF_TEST_ROUTE_KEY" -- curl -sS -w '\n%{http_code}' "$URL/v1/messages"
    contains "$name: 502" "$OUT" "502"
    contains "$name: the reason, clearly" "$OUT" "$why"
    check "$name: no request reached that upstream" test "$(grep -c "\"server\": \"$name\"" "$LOG")" = 0
done
expect_exit 0 "without --route-ca, the test CA is not trusted" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-header "api:x-api-key=env:RF_TEST_ROUTE_KEY" \
    -- curl -sS "$URL/v1/messages"
contains "refused: unable to get the issuer" "$OUT" "the certificate of upstream.test is refused"

# ── Sources that fail: a 502 naming the route and what is missing ──
expect_exit 0 "a variable that is not set" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=env:RF_TEST_NOT_SET" -- curl -sS -w '\n%{http_code}' "$URL/v1/messages"
contains "502 naming the route and the variable" "$OUT" "route api: header x-api-key: environment variable RF_TEST_NOT_SET is not set"
contains "the same on stderr" "$ERR" "RF_TEST_NOT_SET is not set"
printf '%s\n' "$KEY" >"$SCRATCH/key"
chmod 644 "$SCRATCH/key"
expect_exit 0 "a key file others can read" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=file:$SCRATCH/key" -- curl -sS -w '\n%{http_code}' "$URL/v1/messages"
contains "is refused (502, says why)" "$OUT" "readable or writable by others"
lacks "the value is never printed" "$OUT$ERR" "$KEY"
chmod 600 "$SCRATCH/key"
before=$(arrived good /v1/messages "$KEY")
expect_exit 0 "a key file of mode 0600" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=file:$SCRATCH/key" -- curl -fsS "$URL/v1/messages"
check "its key arrived (newline trimmed)" test "$(arrived good /v1/messages "$KEY")" = $((before + 1))
expect_exit 0 "a command's output as the key" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=cmd:cat $SCRATCH/key" -- curl -fsS "$URL/v1/messages"
check "its key arrived" test "$(arrived good /v1/messages "$KEY")" = $((before + 2))
expect_exit 0 "a failing command" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=cmd:exit 3" -- curl -sS -w '\n%{http_code}' "$URL/v1/messages"
contains "502: the command failed" "$OUT" "failed (exit status 3)"
# A failing helper is not run again for each request queued behind it (a
# slow one would hold them all up to its deadline each): its error stands
# for a few seconds. Four requests, one after the other, in one run.
: >"$SCRATCH/helper-runs"
t0=$SECONDS
expect_exit 0 "a failing command, four requests" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=cmd:echo run >>$SCRATCH/helper-runs; exit 3" -- \
    sh -c "for i in 1 2 3 4; do curl -sS -o /dev/null -w '%{http_code} ' $URL/v1/messages; done"
check "each got the 502 ($OUT)" test "$OUT" = "502 502 502 502 "
# Once per 5 s at most: once, unless the machine took that long for them.
runs=$(wc -l <"$SCRATCH/helper-runs") most=$((1 + (SECONDS - t0 + 1) / 5))
check "the helper ran once for them ($runs runs, at most $most in $((SECONDS - t0)) s)" test "$runs" -le "$most"
export RF_TEST_CRLF=$'abc\r\nX-Injected: 1'
expect_exit 0 "a value with CR LF" rf run --route "api=https://upstream.test:$GOOD" \
    --add-host upstream.test:127.0.0.1 --route-ca "api:$SCRATCH/ca.pem" \
    --route-header "api:x-api-key=env:RF_TEST_CRLF" -- curl -sS -w '\n%{http_code}' "$URL/v1/messages"
contains "is refused: it cannot be a header value" "$OUT" "control character"
check "no injected header reached the upstream" test "$(grep -ci x-injected "$LOG")" = 0
lacks "status record: no key" "$(cat "$SCRATCH/status.json")" "$KEY"
