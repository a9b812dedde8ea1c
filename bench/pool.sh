#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The warm pool against a one-shot start, rounds interleaved: bare
# /bin/true, `ringfence run --via` a pool of ready sandboxes (ringfence
# serve), `ringfence run` (a sandbox built for the command), bubblewrap's
# closest line. Ratios to bare exec; then the serving process's memory per
# idle sandbox (the PSS of the server and every process below it, divided
# by the pool size, and of the idle inits alone).
#
#   bench/pool.sh [BUILD_DIR] [RUNS] [POOL_SIZE]     (default: build, 300, 4)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-300}
size=${3:-4}
. "$(dirname "$0")/lib.sh"
sock="$top_tmp/pool.sock"
"$rf" serve --socket "$sock" --pool-size "$size" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$top_tmp"' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
sleep 1 # let it fill

bwrap_cmd="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --symlink usr/bin /bin \
--symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp --bind $ws $ws --chdir $ws \
--clearenv --setenv PATH /usr/bin:/bin --cap-drop ALL /bin/true"
cmds=("bare=/bin/true" "via=$rf run --via $sock -- /bin/true" "run=$rf run -- /bin/true")
command -v bwrap >/dev/null && cmds+=("bwrap=$bwrap_cmd")

echo "bench: $runs interleaved rounds, pool of $size, as uid $(id -u), kernel $(uname -r), $(nproc) CPUs"
python3 "$top/bench/interleave.py" --runs "$runs" --warmup 20 --base bare --json "$out" "${cmds[@]}"
python3 - "$out" <<'PY'
import json, statistics, sys
w = {k: statistics.median(v) for k, v in json.load(open(sys.argv[1]))["wall"].items()}
print("run --via vs bare exec: %.2fx (target <= 1.5x); vs run: %.2fx" % (w["via"] / w["bare"], w["via"] / w["run"]))
if "bwrap" in w:
    print("run --via vs bwrap: %.2fx" % (w["via"] / w["bwrap"]))
PY
# PSS, not RSS: shared pages (the binary, libraries) divided among the
# processes that map them.
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
tree_pss() { # the server and every process below it
    local sum; sum=$(pss "$1")
    for p in $(pgrep -P "$1"); do sum=$((sum + $(tree_pss "$p"))); done
    echo "$sum"
}
total=$(tree_pss "$server")
inits=$((total - $(pss "$server")))
echo "serve: $((total / 1024)) MiB PSS for $size idle sandboxes (the server and their inits): $((total / size)) KiB each;" \
     "the inits alone $((inits / size)) KiB each"
