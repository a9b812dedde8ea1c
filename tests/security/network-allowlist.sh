# SPDX-License-Identifier: LGPL-2.1-or-later
# network: allowlist. The sandbox's only way out is the proxy on its
# 127.0.0.1:3128, run by ringfence on the host: allowed names are reached
# (curl, python, git; HTTP, CONNECT, SOCKS5), everything else is refused
# and reported, a program that ignores the proxy reaches nothing, hostile
# clients leave the proxy serving. Servers: tests/security/net-servers.py
# on the host's loopback, with a CA made here.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
PY=/usr/bin/python3

for tool in openssl curl git; do
    if ! command -v "$tool" >/dev/null; then
        skip "network allowlist tests" "$tool is not installed"
        exit 0
    fi
done

# ── Servers: HTTP and HTTPS (test CA) on the host's loopback ──
www="$SCRATCH/www"
mkdir -p "$www"
echo "allowed-content-$TOKEN" >"$www/hello.txt"
head -c 3000000 /dev/urandom >"$www/big.bin"
(
    cd "$SCRATCH" || exit 1
    # Certificates a strict verifier takes (Python 3.13's default context sets
    # VERIFY_X509_STRICT: the CA needs keyUsage, the leaf an authority key
    # identifier; without them Debian 13's python refused the chain).
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out "$WS/ca.pem" -days 2 -subj /CN=rf-test-ca \
        -addext keyUsage=critical,keyCertSign,cRLSign
    openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=allowed.test
    printf 'subjectAltName=DNS:allowed.test,DNS:a.example.test,DNS:bad.allowed.test\nauthorityKeyIdentifier=keyid,issuer\n' >san.ext
    openssl x509 -req -in srv.csr -CA "$WS/ca.pem" -CAkey ca.key -CAcreateserial -out srv.pem -days 2 \
        -extfile san.ext
) >"$SCRATCH/openssl.log" 2>&1 || { fail "make a test CA"; diag "$(tail -5 "$SCRATCH/openssl.log")"; exit 0; }
(
    cd "$SCRATCH" && git init -q src && cd src && git config user.email t@t && git config user.name t &&
        echo "repo-$TOKEN" >README && git add README && git commit -qm one &&
        git clone -q --bare . "$www/repo.git" && git -C "$www/repo.git" update-server-info
) || fail "make a git repository to serve"
$PY "$HERE/net-servers.py" "$www" "$SCRATCH/srv.pem" "$SCRATCH/srv.key" >"$SCRATCH/ports" 2>&1 &
srv_pid=$!
at_exit "kill $srv_pid 2>/dev/null"
wait_until 10 grep -q '^https ' "$SCRATCH/ports" || { fail "test servers start"; diag "$(cat "$SCRATCH/ports")"; exit 0; }
HTTP=$(awk '$1 == "http" {print $2}' "$SCRATCH/ports")
HTTPS=$(awk '$1 == "https" {print $2}' "$SCRATCH/ports")
check "control: the HTTP server answers on the host" curl -fsS -o /dev/null "http://127.0.0.1:$HTTP/hello.txt"

NET=(--allow-domain allowed.test --add-host allowed.test:127.0.0.1 --allow-port "$HTTP" --allow-port "$HTTPS")
net_run() { rf run "${NET[@]}" --status-json "$SCRATCH/status.json" "$@"; }
status() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["network"]; print(eval(sys.argv[2]))' \
    "$SCRATCH/status.json" "$1"; }

# ── Allowed names are reached, by every common client ──
expect_exit 0 "curl: plain HTTP to an allowed name through the proxy" \
    net_run -- curl -fsS "http://allowed.test:$HTTP/hello.txt"
contains "curl: the content arrived" "$OUT" "allowed-content-$TOKEN"
expect_exit 0 "curl: HTTPS (CONNECT) to an allowed name, certificate checked" \
    net_run -- curl -fsS --cacert "$WS/ca.pem" "https://allowed.test:$HTTPS/hello.txt"
contains "curl: the content arrived over TLS" "$OUT" "allowed-content-$TOKEN"
expect_exit 0 "python urllib: HTTPS through the proxy from the environment" \
    net_run -- $PY -c "import ssl,urllib.request as u; c=ssl.create_default_context(cafile='$WS/ca.pem'); \
c.verify_flags |= ssl.VERIFY_X509_STRICT; print(u.urlopen('https://allowed.test:$HTTPS/hello.txt', context=c).read().decode())"
contains "python: the content arrived" "$OUT" "allowed-content-$TOKEN"
expect_exit 0 "git: clone over dumb HTTP through the proxy" \
    net_run -- git clone -q "http://allowed.test:$HTTP/repo.git" "$WS/clone"
check "git: the clone has the file" grep -q "repo-$TOKEN" "$WS/clone/README"
expect_exit 0 "curl: SOCKS5 with the name resolved by the proxy (socks5h)" \
    net_run -- curl -fsS --socks5-hostname 127.0.0.1:3128 "http://allowed.test:$HTTP/hello.txt"
contains "socks5h: the content arrived" "$OUT" "allowed-content-$TOKEN"
# Node.js: fetch honours the proxy variables from 24 on (NODE_USE_ENV_PROXY,
# set by ringfence); older versions ignore them and must fail closed.
if command -v node >/dev/null && [ "$(command -v node)" = /usr/bin/node ]; then
    node_major=$(node -p 'process.versions.node.split(".")[0]')
    fetch="fetch('http://allowed.test:$HTTP/hello.txt').then(r => r.text()).then(t => console.log(t), e => { console.log('fetch-failed', e.cause ? e.cause.code : e); })"
    expect_exit 0 "node $node_major: fetch runs inside" net_run -- node -e "$fetch"
    if [ "$node_major" -ge 24 ]; then
        contains "node fetch reaches the allowed name through the proxy" "$OUT" "allowed-content-$TOKEN"
    else
        contains "node $node_major ignores the proxy variables and reaches nothing (fail closed)" "$OUT" "fetch-failed"
        skip "node fetch through the proxy" "node $node_major has no NODE_USE_ENV_PROXY (needs 24+)"
    fi
else
    skip "node fetch" "no /usr/bin/node here"
fi
expect_exit 0 "a 3 MB download arrives intact" \
    net_run -- sh -c "curl -fsS http://allowed.test:$HTTP/big.bin | sha256sum"
contains "the download's checksum matches" "$OUT" "$(sha256sum <"$www/big.bin" | cut -d' ' -f1)"

# ── Everything else is refused, reported, and counted ──
expect_exit 0 "a name not in allow_domains gets 403 from the proxy" \
    net_run -- curl -sS -o /dev/null -w '%{http_code}' "http://evil.test:$HTTP/hello.txt"
contains "403 for evil.test" "$OUT" 403
contains "stderr names the blocked destination and the rule" "$ERR" \
    "ringfence: network: blocked connect to evil.test:$HTTP (not in allow_domains)"
check "status JSON: one blocked, none allowed" test "$(status '(d["blocked"], d["connections"])')" = "(1, 0)"
contains "status JSON names the blocked destination" "$(status 'd["blocked_destinations"]')" "evil.test"
# curl reuses its connection to the proxy for the next URL: the proxy must
# not send a second request, for another host, down the first upstream.
expect_exit 0 "two URLs, two hosts, one curl: the second host is checked on its own" \
    net_run -- curl -sS -w ' %{http_code}\n' "http://allowed.test:$HTTP/hello.txt" "http://evil.test:$HTTP/hello.txt"
contains "the first is served" "$OUT" "allowed-content-$TOKEN"
contains "the second is refused" "$OUT" " 403"
check "the refused one did not get the allowed server's content" test "$(grep -c "allowed-content" <<<"$OUT")" = 1
expect_exit 56 "CONNECT to a name not in allow_domains is refused" \
    net_run -- curl -sS -o /dev/null --cacert "$WS/ca.pem" "https://evil.test:$HTTPS/"
contains "CONNECT gets 403" "$ERR" "response 403"
expect_exit 0 "an IP literal is refused unless listed" \
    net_run -- curl -sS -o /dev/null -w '%{http_code}' --noproxy '' -x http://127.0.0.1:3128 "http://127.0.0.1:$HTTP/hello.txt"
contains "403 for 127.0.0.1" "$OUT" 403
contains "stderr: IP address rule" "$ERR" "IP address not in allow_domains"
expect_exit 0 "a port not in allow_ports is refused" \
    rf run --allow-domain allowed.test --add-host allowed.test:127.0.0.1 -- \
    curl -sS -o /dev/null -w '%{http_code}' "http://allowed.test:$HTTP/hello.txt"
contains "403 for a port outside 80/443" "$OUT" 403
contains "stderr: port rule" "$ERR" "port not in allow_ports"
expect_exit 0 "a name:port pattern allows that port only" \
    rf run --allow-domain "allowed.test:$HTTP" --add-host allowed.test:127.0.0.1 -- \
    sh -c "curl -fsS http://allowed.test:$HTTP/hello.txt; curl -sS -o /dev/null --cacert $WS/ca.pem https://allowed.test:$HTTPS/; true"
contains "the named port works" "$OUT" "allowed-content-$TOKEN"
contains "another port of the same name does not" "$ERR" "response 403"
expect_exit 0 "deny_domains wins over allow_domains" \
    rf run --allow-domain '*.allowed.test' --deny-domain bad.allowed.test --add-host bad.allowed.test:127.0.0.1 \
    --allow-port "$HTTP" -- curl -sS -o /dev/null -w '%{http_code}' "http://bad.allowed.test:$HTTP/hello.txt"
contains "403 for the denied subdomain" "$OUT" 403
contains "stderr: deny rule" "$ERR" "in deny_domains"
W=(--allow-domain '*.example.test' --allow-port "$HTTP" --add-host a.example.test:127.0.0.1
   --add-host evil-example.test:127.0.0.1 --add-host example.test:127.0.0.1)
for case in "a.example.test 200" "evil-example.test 403" "example.test 403" "a.example.test.evil.test 403"; do
    set -- $case
    expect_exit 0 "wildcard *.example.test and $1" \
        rf run "${W[@]}" -- curl -sS -o /dev/null -w '%{http_code}' "http://$1:$HTTP/hello.txt"
    contains "$1 gets $2" "$OUT" "$2"
done
expect_exit 0 "an allowed name resolving to loopback is refused (no --add-host)" \
    rf run --allow-domain localhost --allow-port "$HTTP" -- \
    curl --noproxy '' -sS -o /dev/null -w '%{http_code}' "http://localhost:$HTTP/hello.txt"
contains "403 for localhost" "$OUT" 403
contains "stderr: private address rule" "$ERR" "resolves to a private address"
expect_exit 0 "control: with --allow-private-addresses it is reached" \
    rf run --allow-domain localhost --allow-port "$HTTP" --allow-private-addresses -- \
    curl --noproxy '' -fsS "http://localhost:$HTTP/hello.txt"
contains "localhost reached when private addresses are allowed" "$OUT" "allowed-content-$TOKEN"
# DNS rebinding and cloud metadata: names that resolve to 169.254.169.254
# and 127.0.0.1 through the host's resolver (a hosts file of our own, in a
# private mount namespace: root only).
if is_root && command -v unshare >/dev/null; then
    { cat /etc/hosts; echo "169.254.169.254 metadata.test"; echo "127.0.0.1 rebind.test"; } >"$SCRATCH/hosts"
    for name in metadata.test rebind.test; do
        expect_exit 0 "$name (resolving to a private address on the host) is refused" \
            unshare -m sh -c "mount --bind '$SCRATCH/hosts' /etc/hosts && exec '$RINGFENCE' run \
            --allow-domain $name --allow-port $HTTP -- curl -sS -o /dev/null -w '%{http_code}' http://$name:$HTTP/"
        contains "$name: 403" "$OUT" 403
        contains "$name: the private address rule" "$ERR" "resolves to a private address"
    done
else
    skip "names resolving to 169.254.169.254 and 127.0.0.1 are refused" "needs root for a private /etc/hosts"
fi
expect_exit 0 "SOCKS5 with a locally resolved address (an IP literal) is refused" \
    net_run -- sh -c "curl -sS --noproxy '' --socks5 127.0.0.1:3128 http://127.0.0.1:$HTTP/hello.txt; echo rc=\$?"
contains "curl reports the refusal" "$OUT" "rc=97"
expect_exit 0 "SOCKS5 to a name not in allow_domains is refused" \
    net_run -- sh -c "curl -sS --socks5-hostname 127.0.0.1:3128 http://evil.test:$HTTP/; echo rc=\$?"
contains "socks5h refused" "$OUT" "rc=97"

# ── Fail closed: no way around the proxy ──
RF_OPTS=("${NET[@]}")
in_denied "a program that ignores the proxy cannot reach the host's loopback server" connect-tcp 127.0.0.1 "$HTTP"
host_ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')
if [ -n "$host_ip" ]; then
    in_denied "nor the host's own address $host_ip" connect-tcp "$host_ip" "$HTTP"
else
    skip "nor the host's own address" "no global IPv4 address here"
fi
in_denied "UDP (DNS) to the outside does not leave" udp-send 8.8.8.8 53
in_denied "the proxy's port cannot be taken over inside (bind 127.0.0.1:3128)" bind-tcp 127.0.0.1 3128
RF_OPTS=()
expect_exit 0 "the sandbox has no interface but lo" net_run -- cat /proc/net/dev
check "no interface but lo in /proc/net/dev" \
    test "$(tail -n +3 <<<"$OUT" | awk -F: '{gsub(/ /, "", $1); print $1}' | grep -cvx lo)" = 0
expect_exit 0 "no descriptor of the proxy leaks into the sandbox" \
    net_run -- sh -c 'ls -l /proc/self/fd | grep -c socket || true'
contains "no socket among the command's descriptors" "$OUT" 0

# ── The sandbox's init stays idle (it once spun on the closed socket channel) ──
# What init spends while the command sleeps 1 s: a spinning init takes ~100
# ticks, an idle one none. Counted from after the start, whose own work
# (setup, more under emulation: 11 ticks on a TCG guest) is not the point.
expect_exit 0 "init uses no CPU while the command sleeps" \
    net_run -- sh -c 'cat /proc/1/stat; sleep 1; cat /proc/1/stat'
ticks=$(awk '{ t[NR] = $14 + $15 } END { if (NR == 2) print t[2] - t[1] }' <<<"$OUT")
check "init's CPU time during 1 s of sleep is under 0.1 s ($ticks ticks)" test "${ticks:-999}" -lt 10

# ── Hostile clients ──
expect_exit 0 "garbage instead of a request gets 400 and the proxy keeps serving" \
    net_run -- sh -c "printf 'GARBAGE\r\n\r\n' | $PY -c 'import socket,sys; s=socket.create_connection((\"127.0.0.1\",3128)); s.sendall(sys.stdin.buffer.read()); print(s.recv(100))'; curl -fsS http://allowed.test:$HTTP/hello.txt"
contains "400 for garbage" "$OUT" "400"
contains "the next request is served" "$OUT" "allowed-content-$TOKEN"
expect_exit 0 "smuggling: a bare-LF request head is refused" \
    net_run -- $PY -c "import socket; s=socket.create_connection(('127.0.0.1',3128)); \
s.sendall(b'GET http://allowed.test:$HTTP/hello.txt HTTP/1.1\nHost: x\n\n'); s.settimeout(15); print(s.recv(100))"
contains "400 for bare LF" "$OUT" "400"
expect_exit 0 "slowloris: 200 silent connections, then a real request is served" \
    net_run --timeout 60 -- $PY -c "
import socket, subprocess
held = [socket.create_connection(('127.0.0.1', 3128)) for _ in range(200)]
print(subprocess.run(['curl', '-fsS', 'http://allowed.test:$HTTP/hello.txt'], capture_output=True, text=True).stdout)"
contains "served despite the silent connections" "$OUT" "allowed-content-$TOKEN"
expect_exit 0 "2000 connections opened and dropped at once leave the proxy serving" \
    net_run --timeout 120 -- $PY -c "
import socket, subprocess
for _ in range(2000):
    socket.create_connection(('127.0.0.1', 3128)).close()
print(subprocess.run(['curl', '-fsS', 'http://allowed.test:$HTTP/hello.txt'], capture_output=True, text=True).stdout)"
contains "served after the flood" "$OUT" "allowed-content-$TOKEN"
expect_exit 0 "1100 open tunnels: the cap (1024) holds and the sandbox ends normally" \
    net_run --timeout 120 -- $PY -c "
import resource, socket
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held, refused = [], 0
for _ in range(1100):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)
    s.sendall(b'CONNECT allowed.test:$HTTP HTTP/1.1\\r\\n\\r\\n')
    try: r = s.recv(100)
    except OSError: r = b''
    if r.startswith(b'HTTP/1.1 200'): held.append(s)
    else: refused += 1
print('held', len(held), 'refused', refused)"
contains "1024 tunnels held, the rest refused" "$OUT" "held 1024 refused 76"
check "status JSON: the connections beyond the cap were counted as blocked" test "$(status 'd["blocked"]')" = 76
expect_exit 0 "after all that, the host's proxy code leaves no thread or fd behind (a new run works)" \
    net_run -- curl -fsS "http://allowed.test:$HTTP/hello.txt"

# ── Published ports ──
listeners_on() {
    $PY - "$1" <<'PYEOF'
import socket, struct, sys
port = int(sys.argv[1])
out = []
for name, fam in (('/proc/net/tcp', socket.AF_INET), ('/proc/net/tcp6', socket.AF_INET6)):
    try:
        lines = open(name).read().splitlines()[1:]
    except OSError:
        continue
    for line in lines:
        f = line.split()
        addr, hexport = f[1].split(':')
        if f[3] != '0A' or int(hexport, 16) != port:
            continue
        raw = bytes.fromhex(addr)
        raw = b''.join(struct.pack('<I', w) for w in struct.unpack('>%dI' % (len(raw) // 4), raw))
        out.append('%s:%d' % (socket.inet_ntop(fam, raw), port))
print(' '.join(sorted(out)))
PYEOF
}
pub_port=$(free_port)
"$RINGFENCE" run --publish "$pub_port:8000" -- $PY -c "
import http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b'inside-$TOKEN')
    def log_message(self, *a): pass
socketserver.TCPServer(('127.0.0.1', 8000), H).serve_forever()" >"$SCRATCH/pub.log" 2>&1 &
pub_pid=$!
at_exit "kill $pub_pid 2>/dev/null"
if wait_until 15 curl -fsS -o /dev/null "http://127.0.0.1:$pub_port/" 2>/dev/null; then
    OUT=$(curl -fsS "http://127.0.0.1:$pub_port/")
    contains "--publish: the server inside is reachable from the host" "$OUT" "inside-$TOKEN"
    # Every listening socket on the port, from /proc/net/tcp{,6}. Twice in
    # CI (bwrap battery, loaded machine) ss and then this came back empty
    # right after curl had reached the port: tries for 10 s, and what is
    # there is shown if it stays empty.
    for _ in $(seq 20); do
        listen=$(listeners_on "$pub_port")
        [ -n "$listen" ] && break
        sleep 0.5
    done
    check "--publish: bound to 127.0.0.1 only ($listen)" test "$listen" = "127.0.0.1:$pub_port"
    if [ "$listen" != "127.0.0.1:$pub_port" ]; then
        # One line each (the battery keeps only the # lines after a failure).
        alive=no
        kill -0 "$pub_pid" 2>/dev/null && alive=yes
        diag "sandbox alive: $alive" \
            "curl now: $(curl -sS --max-time 3 "http://127.0.0.1:$pub_port/" 2>&1 | tr '\n' ' ')" \
            "ss: $(ss -tanpH "sport = :$pub_port" 2>&1 | head -5 | tr '\n' '|')" \
            "ringfence's sockets: $(ls -l /proc/"$pub_pid"/fd 2>&1 | grep -c socket)" \
            "its netns: $(readlink /proc/"$pub_pid"/ns/net) ours: $(readlink /proc/self/ns/net)"
        if [ $alive = no ]; then
            wait "$pub_pid"
            diag "its exit status: $? (128+N: signal N)" "log: $(tr '\n' '|' <"$SCRATCH/pub.log")" \
                "kernel: $(dmesg 2>/dev/null | tail -3 | tr '\n' '|')"
        fi
    fi
    if [ -n "$host_ip" ]; then
        check "--publish: not reachable on the host's other address" \
            sh -c "! curl -fsS --max-time 3 -o /dev/null http://$host_ip:$pub_port/ 2>/dev/null"
    fi
else
    fail "--publish: the server inside is reachable from the host"; diag "$(cat "$SCRATCH/pub.log")"
fi
kill "$pub_pid" 2>/dev/null
wait "$pub_pid" 2>/dev/null
check "--publish: the host port is closed once the sandbox ends" \
    sh -c "! curl -fsS --max-time 3 -o /dev/null http://127.0.0.1:$pub_port/ 2>/dev/null"

# ── The policy: tightening only, and bad rules are errors ──
echo '{"network": {"allow_domains": ["evil.test"]}}' >"$WS/.ringfence.json"
expect_exit 125 "a workspace config cannot add a domain" rf run "${NET[@]}" -- true
contains "it names the setting" "$ERR" "network.allow_domains"
echo '{"network": {"allow_domains": []}, "limits": {"timeout": 600}}' >"$WS/.ringfence.json"
expect_exit 0 "control: a workspace config that adds nothing is accepted" rf run "${NET[@]}" -- true
echo '{"network": "host"}' >"$WS/.ringfence.json"
expect_exit 125 "a workspace config cannot turn allowlist into host" rf run "${NET[@]}" -- true
rm -f "$WS/.ringfence.json"
expect_exit 125 "a malformed pattern is an error naming it" rf run --allow-domain 'exa mple.com' -- true
contains "the error names network.allow_domains" "$ERR" "network.allow_domains"
expect_exit 125 "the landlock backend refuses the allowlist (no network namespace)" \
    rf run --backend landlock --accept-weaker --allow-domain allowed.test -- true
contains "the refusal says why" "$ERR" "no network namespace"
