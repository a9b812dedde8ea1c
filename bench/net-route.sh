#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Credential routes (issue 28), measured against the same client talking
# straight to the upstream from the host, in the same run:
#  1. throughput: SIZE down and up (curl), through a route and directly
#     (interleaved rounds, bench/interleave.py);
#  2. added latency per request over keep-alive: N sequential POSTs on one
#     connection (Python http.client), through a route and directly;
#  3. supervisor memory per idle keep-alive route connection (C open, each
#     having made one request, then idle).
# The upstream is tests/security/route-upstream.py (Python, TLS, a CA made
# here): it is the bottleneck of both sides of (1), as a remote API is.
#
#   bench/net-route.sh [BUILD_DIR] [SIZE_MB] [N] [C]   (default: build, 1024, 1000, 200)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
size_mb=${2:-1024}
n=${3:-1000}
conns=${4:-200}
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

cd "$top_tmp"
{
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
        -days 2 -subj /CN=bench-ca
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key -out srv.csr \
        -subj /CN=upstream.test
    printf 'subjectAltName=DNS:upstream.test\n' >san.ext
    openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile san.ext
} >openssl.log 2>&1
$PY "$top/tests/security/route-upstream.py" /dev/null up srv.pem srv.key >ports &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$top_tmp"' EXIT
for _ in $(seq 100); do [ -s ports ] && break; sleep 0.05; done
port=$(awk '{print $2}' ports)
cd "$ws"
truncate -s "${size_mb}M" "$top_tmp/up.bin"
export BENCH_KEY=bench-key
route=(--route "b=https://upstream.test:$port" --add-host upstream.test:127.0.0.1 --route-ca "b:$top_tmp/ca.pem"
    --route-header "b:x-api-key=env:BENCH_KEY" --expose "$top_tmp/up.bin")
direct="https://upstream.test:$port"
dcurl="curl -sS --cacert $top_tmp/ca.pem --resolve upstream.test:$port:127.0.0.1"
bytes=$((size_mb * 1024 * 1024))

echo "bench: as uid $(id -u), kernel $(uname -r), $(nproc) CPUs, $(openssl version)"
echo
echo "1. throughput: ${size_mb} MiB down and up with curl"
TRANSFER_RUNS=3 transfer "$out" \
    "down-direct=$dcurl -o /dev/null $direct/v1/big?n=$bytes" \
    "down-route=$rf run ${route[*]} -- curl -sS -o /dev/null http://127.0.0.1:3128/route/b/v1/big?n=$bytes" \
    "up-direct=$dcurl -o /dev/null -X POST -H Expect: -T $top_tmp/up.bin $direct/v1/upload" \
    "up-route=$rf run ${route[*]} -- curl -sS -o /dev/null -X POST -T $top_tmp/up.bin http://127.0.0.1:3128/route/b/v1/upload"
rates "$out" "$size_mb" down-direct down-route
rates "$out" "$size_mb" up-direct up-route

echo
echo "2. added latency per request over keep-alive: $n POSTs on one connection"
client="import http.client, socket, ssl, sys, time
host, port, path, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
# TCP_NODELAY both ways, as SDKs do: else Nagle and delayed ACKs (40 ms) measure the kernel.
raw = socket.create_connection(('127.0.0.1', port))
raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
c = http.client.HTTPConnection(host, port)
c.sock = raw
if len(sys.argv) > 5:  # direct: TLS to loopback, verified for the upstream's name
    ctx = ssl.create_default_context(cafile=sys.argv[5])
    c = http.client.HTTPSConnection(host, port, context=ctx)
    c.sock = ctx.wrap_socket(raw, server_hostname=host)
def one():
    c.request('POST', path, body=b'{}', headers={'Content-Type': 'application/json'})
    c.getresponse().read()
for i in range(50): one()
t = time.perf_counter()
for i in range(n): one()
print('%.4f' % ((time.perf_counter() - t) / n * 1e3))"
d=$($PY -c "$client" upstream.test "$port" /v1/messages "$n" "$top_tmp/ca.pem")
p=$("$rf" run "${route[@]}" -- $PY -c "$client" 127.0.0.1 3128 /route/b/v1/messages "$n")
$PY -c "import sys; d, p = map(float, sys.argv[1:]); print('   direct %.3f ms, through the route %.3f ms: +%.3f ms per request' % (d, p, p - d))" "$d" "$p"

echo
echo "3. supervisor memory per idle keep-alive route connection ($conns)"
hold="import http.client, resource, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
cs = []
for _ in range(int(sys.argv[1])):
    c = http.client.HTTPConnection('127.0.0.1', 3128)
    c.request('POST', '/route/b/v1/messages', body=b'{}')
    c.getresponse().read()
    cs.append(c)
print('held', len(cs), flush=True)
time.sleep(4)"
one=$(peak_rss "$top_tmp/hold.out" "$rf" run "${route[@]}" -- $PY -c "$hold" 1)
many=$(peak_rss "$top_tmp/hold.out" "$rf" run "${route[@]}" -- $PY -c "$hold" "$conns")
echo "   1 connection: supervisor peak RSS $one KiB; $conns: $many KiB; $(( (many - one) / (conns - 1) )) KiB per idle connection"
