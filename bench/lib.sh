# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared set-up of the bench/*.sh scripts: a scratch workspace, the instance
# root outside it (as by default: inside, the sandbox could write the filter
# cache, so ringfence would rightly not use it), hyperfine present.
#   . bench/lib.sh   (with $build set); then $rf, $ws, $out are ready.
rf="$build/ringfence"
command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
top_tmp=$(mktemp -d "${TMPDIR:-/tmp}/rf-bench.XXXXXX") # TMPDIR: another disk
ws="$top_tmp/ws"
mkdir "$ws"
chmod 755 "$top_tmp" "$ws"
export RINGFENCE_HOME="$top_tmp/rfhome"
out="$top_tmp/result.json"
trap 'rm -rf "$top_tmp"' EXIT
cd "$ws" || exit 1

# The network benches' shared helpers.
# transfer JSON NAME=COMMAND...: the commands interleaved round by round
# (bench/interleave.py; TRANSFER_RUNS rounds, default 5), samples in JSON.
transfer() {
    local json=$1
    shift
    "$top/bench/interleave.py" --runs "${TRANSFER_RUNS:-5}" --warmup 1 --json "$json" "$@" >/dev/null
}
# rates JSON SIZE_MB BASE NAME: both medians as seconds and MiB/s, and
# NAME's throughput as a ratio of BASE's (from the same rounds).
rates() {
    /usr/bin/python3 - "$@" <<'PY'
import json, statistics, sys
wall = json.load(open(sys.argv[1]))["wall"]
mb, base, name = float(sys.argv[2]), sys.argv[3], sys.argv[4]
cpu = json.load(open(sys.argv[1]))["cpu"]
m = {n: statistics.median(wall[n]) for n in (base, name)}
for n in (base, name):
    print("   %-12s median %7.3f s  %8.0f MiB/s  (CPU of the run %.3f s)" % (n, m[n], mb / m[n], statistics.median(cpu[n])))
print("   %s = %.2fx the throughput of %s" % (name, m[base] / m[name], base))
PY
}
# peak_rss OUT COMMAND...: run COMMAND (stdout to OUT), sampling its VmRSS
# every 0.1 s; prints the peak in KiB.
peak_rss() {
    local o=$1 pid peak=0 r
    shift
    "$@" >"$o" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        r=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        [ "${r:-0}" -gt "$peak" ] && peak=$r
        sleep 0.1
    done
    wait "$pid" || true
    echo "$peak"
}
