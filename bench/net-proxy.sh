#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# network: allowlist, measured against --network host in the same run:
#  1. throughput: a SIZE download (default 1 GiB) from a loopback HTTP
#     server with curl, through the proxy and directly (hyperfine, ratio);
#  2. added latency per new connection: N sequential GETs of a tiny file,
#     each on a fresh connection, through the proxy and directly;
#  3. 1000 concurrent tunnels held through the proxy, and the supervisor's
#     RSS while they are open (and while one command runs idle).
#
#   bench/net-proxy.sh [BUILD_DIR] [SIZE_MB] [N]     (default: build, 1024, 500)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
size_mb=${2:-1024}
n=${3:-500}
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

www="$top_tmp/www"
mkdir -p "$www"
truncate -s "${size_mb}M" "$www/big.bin"
echo tiny >"$www/tiny.txt"
cat >"$top_tmp/server.py" <<'PY'
import http.server, os, resource, socketserver, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def copyfile(self, src, dst):  # sendfile: the server must not be the bottleneck
        os.sendfile(dst.fileno(), src.fileno(), 0, os.fstat(src.fileno()).st_size)
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 4096
srv = S(("127.0.0.1", 0), lambda *a, **k: H(*a, directory=sys.argv[1], **k))
print(srv.server_address[1], flush=True)
srv.serve_forever()
PY
$PY "$top_tmp/server.py" "$www" >"$top_tmp/port" &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$top_tmp"' EXIT
for _ in $(seq 100); do [ -s "$top_tmp/port" ] && break; sleep 0.05; done
port=$(cat "$top_tmp/port")
allow=(--allow-domain bench.test --add-host bench.test:127.0.0.1 --allow-port "$port")

echo "bench: as uid $(id -u), kernel $(uname -r), $(nproc) CPUs"
echo
echo "1. throughput: ${size_mb} MiB with curl"
hyperfine -N --warmup 1 --runs 5 --export-json "$out" --output=null \
    -n host "$rf run --network host -- curl -sS -o /dev/null http://127.0.0.1:$port/big.bin" \
    -n proxy "$rf run ${allow[*]} -- curl -sS -o /dev/null http://bench.test:$port/big.bin" >/dev/null 2>&1
$PY - "$out" "$size_mb" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
mb = float(sys.argv[2])
for name in ("host", "proxy"):
    print("   %-6s median %7.3f s  %8.0f MiB/s" % (name, r[name]["median"], mb / r[name]["median"]))
print("   proxy throughput = %.2fx of --network host" % (r["host"]["median"] / r["proxy"]["median"]))
PY

echo
echo "2. added latency per new connection: $n sequential GETs, one connection each"
client="import sys, time, urllib.request as u
url, n = sys.argv[1], int(sys.argv[2])
o = u.build_opener(u.ProxyHandler() if len(sys.argv) > 3 else u.ProxyHandler({}))
for i in range(20): o.open(url).read()
t = time.perf_counter()
for i in range(n): o.open(url).read()
print('%.3f' % ((time.perf_counter() - t) / n * 1e3))"
direct=$("$rf" run --network host -- $PY -c "$client" "http://127.0.0.1:$port/tiny.txt" "$n")
proxied=$("$rf" run "${allow[@]}" -- $PY -c "$client" "http://bench.test:$port/tiny.txt" "$n" proxy)
$PY -c "import sys; d, p = map(float, sys.argv[1:]); print('   direct %.3f ms, through the proxy %.3f ms: +%.3f ms per connection' % (d, p, p - d))" "$direct" "$proxied"

echo
echo "3. 1000 concurrent tunnels, supervisor RSS"
hold="import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
for _ in range(int(sys.argv[1])):
    s = socket.create_connection(('127.0.0.1', 3128))
    s.sendall(b'CONNECT bench.test:$port HTTP/1.1\r\n\r\n')
    if s.recv(100).startswith(b'HTTP/1.1 200'): held.append(s)
print('held', len(held), flush=True)
time.sleep(3)"
rss_of() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
measure() {
    local count=$1 pid peak=0 r
    "$rf" run "${allow[@]}" --status-json "$top_tmp/st.json" -- $PY -c "$hold" "$count" >"$top_tmp/hold.out" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        r=$(rss_of "$pid")
        [ "${r:-0}" -gt "$peak" ] && peak=$r
        sleep 0.1
    done
    wait "$pid" || true
    echo "   $count tunnels: $(cat "$top_tmp/hold.out"); supervisor peak RSS $((peak / 1024)).$((peak % 1024 * 10 / 1024)) MiB"
}
measure 1
measure 1000
