#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# How start-up cost grows, for docs/performance.md:
#  1. with the number of mounts: `ringfence run` of /bin/true exposing 0, 10
#     and 100 host directories (--expose, read-only), beside bubblewrap doing
#     the same binds; rounds interleaved (bench/interleave.py), medians;
#  2. with concurrent starts: 1, 10 and 100 `ringfence run -- /bin/true`
#     started at once, and the same number of bubblewrap starts; wall time
#     until all have ended (every process each run started), per start.
#
#   bench/scaling.sh [BUILD_DIR] [RUNS]     (default: build, 60)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-60}
. "$(dirname "$0")/lib.sh"
command -v bwrap >/dev/null || { echo "bench: needs bubblewrap (apt-get install bubblewrap)" >&2; exit 1; }

mkdir "$top_tmp/exp"
for i in $(seq -w 1 100); do mkdir "$top_tmp/exp/d$i"; done
rf_expose() { local n=$1 a=""; for d in $(ls "$top_tmp/exp" | head -n "$n"); do a="$a --expose $top_tmp/exp/$d"; done; echo "$a"; }
bw_expose() { local n=$1 a=""; for d in $(ls "$top_tmp/exp" | head -n "$n"); do a="$a --ro-bind $top_tmp/exp/$d $top_tmp/exp/$d"; done; echo "$a"; }
links=""
for l in bin sbin lib lib64; do [ -L "/$l" ] && links="$links --symlink $(readlink /$l) /$l"; done
bwrap_base="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr$links --proc /proc --dev /dev \
--tmpfs /tmp --bind $ws $ws --chdir $ws --clearenv --setenv PATH /usr/bin:/bin --cap-drop ALL"

echo "1. mounts: /bin/true exposing N directories ($runs interleaved rounds, uid $(id -u), $(nproc) CPUs)"
args=()
for n in 0 10 100; do
    args+=("rf-$n=$rf run$(rf_expose "$n") -- /bin/true" "bwrap-$n=$bwrap_base$(bw_expose "$n") /bin/true")
done
python3 "$top/bench/interleave.py" --runs "$runs" --warmup 3 --base rf-0 "${args[@]}"

echo
echo "2. concurrent starts: N at once, wall time until the last has ended"
burst() { # burst N COMMAND...: microseconds until N concurrent runs and all they started have ended
    # A child subreaper starts them and reaps until nothing is left:
    # bubblewrap's parent exits before its pid 1 has (it never reaps it), and
    # a shell's `wait` would stop the clock while those still tear down.
    python3 - "$@" <<'PY'
import ctypes, os, sys, time
n, argv = int(sys.argv[1]), sys.argv[2:]
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("burst: prctl: %s" % os.strerror(ctypes.get_errno()))
null = os.open(os.devnull, os.O_RDWR)
fa = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
t0 = time.perf_counter()
pids = {os.posix_spawnp(argv[0], argv, os.environ, file_actions=fa) for _ in range(n)}
failed = 0
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        break
    failed += pid in pids and status != 0
t1 = time.perf_counter()
if failed:
    print("burst: %d of %d runs failed" % (failed, n), file=sys.stderr)
print(int((t1 - t0) * 1e6))
PY
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
bursts=${RF_BURSTS:-5} # rounds per N, ringfence and bubblewrap alternating; medians
echo "($bursts rounds per N, medians)"
printf "%-6s %16s %16s %12s\n" N "ringfence ms" "bwrap ms" "rf / bwrap"
for n in 1 10 100; do
    rs="" bs=""
    for _ in $(seq "$bursts"); do
        rs+="$(burst "$n" "$rf" run -- /bin/true)"$'\n'
        # shellcheck disable=SC2086
        bs+="$(burst "$n" $bwrap_base /bin/true)"$'\n'
    done
    r=$(printf %s "$rs" | median)
    b=$(printf %s "$bs" | median)
    awk -v n="$n" -v r="$r" -v b="$b" 'BEGIN { printf "%-6s %9.1f (%5.2f/start) %9.1f (%5.2f/start) %10.2fx\n", n, r / 1000, r / 1000 / n, b / 1000, b / 1000 / n, r / b }'
done
