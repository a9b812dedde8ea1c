#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# network: allowlist, measured against --network host in the same run:
#  1. throughput: a SIZE download (default 1 GiB) from a loopback HTTP
#     server with curl, through a CONNECT tunnel and directly (interleaved
#     rounds, bench/interleave.py; curl's --proxytunnel, as for https);
#  2. added latency per new connection: one connection after the other,
#     each for one request (direct; plain HTTP through the proxy; a
#     CONNECT tunnel), R rounds of 1 s each, interleaved;
#  3. short connections a second: P client processes, each opening a
#     connection (a CONNECT tunnel), one request, the answer, close, for
#     S seconds.
#  (2) and (3) talk to a one-thread server that answers and closes.
#  4. 1000 concurrent tunnels held through the proxy, opened all at once,
#     and the supervisor's peak RSS (against one tunnel).
#
#   bench/net-proxy.sh [BUILD_DIR] [SIZE_MB] [R] [P] [S]
#                      (default: build, 1024, 5, 4, 3)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
size_mb=${2:-1024}
rounds=${3:-5}
procs=${4:-4}
secs=${5:-3}
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

www="$top_tmp/www"
mkdir -p "$www"
truncate -s "${size_mb}M" "$www/big.bin"
echo tiny >"$www/tiny.txt"
cat >"$top_tmp/server.py" <<'PY'
import http.server, os, resource, socket, socketserver, sys, threading
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
# Short connections: one thread, no parsing (a thread per connection would
# make the server, not the proxy, the limit).
quick = socket.socket()
quick.bind(("127.0.0.1", 0))
quick.listen(4096)
def answer():
    while True:
        c, _ = quick.accept()
        c.recv(4096)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\ntiny\n")
        c.close()
threading.Thread(target=answer, daemon=True).start()
print(srv.server_address[1], quick.getsockname()[1], flush=True)
srv.serve_forever()
PY
$PY "$top_tmp/server.py" "$www" >"$top_tmp/port" &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$top_tmp"' EXIT
for _ in $(seq 100); do [ -s "$top_tmp/port" ] && break; sleep 0.05; done
read -r port qport <"$top_tmp/port"
allow=(--allow-domain bench.test --add-host bench.test:127.0.0.1 --allow-port "$port" --allow-port "$qport")

echo "bench: as uid $(id -u), kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "1. throughput: ${size_mb} MiB with curl, through a CONNECT tunnel"
transfer "$out" \
    "host=$rf run --network host -- curl -sS -o /dev/null http://127.0.0.1:$port/big.bin" \
    "proxy=$rf run ${allow[*]} -- curl -sS -p -o /dev/null http://bench.test:$port/big.bin"
rates "$out" "$size_mb" host proxy

echo
# The client of (2) and (3): P processes, each opening connections one
# after the other for S seconds (after 20 unmeasured), one request each.
# MODE: direct; http (an absolute-URI GET to the proxy); connect (a
# CONNECT tunnel, then the GET, as for https). Prints connections a second.
conns="import os, socket, sys, time
host, port, procs, secs, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
def one():
    s = socket.create_connection((host, port) if mode == 'direct' else ('127.0.0.1', 3128))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if mode == 'connect':
        s.sendall(b'CONNECT %s:%d HTTP/1.1\\r\\n\\r\\n' % (host.encode(), port))
        if not s.recv(100).startswith(b'HTTP/1.1 200'): sys.exit('refused')
    url = b'http://%s:%d/tiny' % (host.encode(), port) if mode == 'http' else b'/tiny'
    s.sendall(b'GET %s HTTP/1.0\\r\\n\\r\\n' % url)
    while s.recv(4096): pass
    s.close()
r, w = os.pipe()
for _ in range(procs):
    if os.fork() == 0:
        for _ in range(20): one()
        done, end = 0, time.perf_counter() + secs
        while time.perf_counter() < end:
            one(); done += 1
        os.write(w, b'%d\\n' % done)
        os._exit(0)
for _ in range(procs): os.wait()
os.close(w)
print('%.1f' % (sum(map(int, os.read(r, 4096).split())) / secs))"
# rate MODE P S: connections a second, from the sandbox.
rate() {
    if [ "$1" = direct ]; then
        "$rf" run --network host -- $PY -c "$conns" 127.0.0.1 "$qport" "$2" "$3" direct
    else
        "$rf" run "${allow[@]}" -- $PY -c "$conns" bench.test "$qport" "$2" "$3" "$1"
    fi
}

echo "2. added latency per new connection: one connection after the other, ${rounds}x 1 s each way, interleaved"
for _ in $(seq "$rounds"); do
    for m in direct http connect; do echo "$m $(rate $m 1 1)"; done
done >"$top_tmp/lat"
$PY - "$top_tmp/lat" <<'PY'
import statistics, sys
ms = {}
for line in open(sys.argv[1]):
    m, r = line.split()
    ms.setdefault(m, []).append(1e3 / float(r))
d = statistics.median(ms["direct"])
print("   direct %.3f ms a connection (median of rounds)" % d)
for m, what in (("http", "plain HTTP through the proxy"), ("connect", "a CONNECT tunnel")):
    p = statistics.median(ms[m])
    print("   %-29s %.3f ms: +%.3f ms a connection" % (what, p, p - d))
PY

echo
echo "3. short connections a second: $procs processes for $secs s each way, CONNECT tunnels"
for round in 1 2; do
    d=$(rate direct "$procs" "$secs")
    p=$(rate connect "$procs" "$secs")
    echo "   round $round: direct $d/s, through the proxy $p/s ($($PY -c "print('%.2f' % ($p / $d))")x)"
done

echo
echo "4. concurrent tunnels, supervisor RSS"
hold="import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
# All requests first, then the answers: many handshakes at once, as when
# a client opens connections in parallel.
socks = [socket.create_connection(('127.0.0.1', 3128)) for _ in range(int(sys.argv[1]))]
for s in socks: s.sendall(b'CONNECT bench.test:$port HTTP/1.1\r\n\r\n')
held = [s for s in socks if s.recv(100).startswith(b'HTTP/1.1 200')]
print('held', len(held), flush=True)
time.sleep(3)"
one=$(peak_rss "$top_tmp/hold.out" "$rf" run "${allow[@]}" -- $PY -c "$hold" 1)
many=$(peak_rss "$top_tmp/hold.out" "$rf" run "${allow[@]}" -- $PY -c "$hold" 1000)
echo "   1 tunnel: supervisor peak RSS $one KiB; 1000 ($(cat "$top_tmp/hold.out")): $many KiB;" \
    "$(( (many - one) * 1024 / 999 )) bytes per tunnel"
echo "   load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
