#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up cost of ringfence's backends (native, and bwrap and firejail
# where they can run here) next to the bare runners they wrap, in one
# hyperfine run: the floor each runner imposes before ringfence adds
# anything, and what ringfence adds on top of it. The runner commands approximate the native isolation (new
# user, mount, pid, net, ipc, uts namespaces, read-only root, fresh /proc,
# private /tmp); they are not the same policy, so read the ratios as the
# runner's own cost. A runner missing from PATH is left out, with the reason.
#
#   [RF_BENCH_IMAGE=IMAGE] bench/runners.sh [BUILD_DIR] [RUNS]   (default: build, 50)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-50}
. "$(dirname "$0")/lib.sh"

cmds=(-n bare /bin/true
      -n "native (default)" "$rf run -- /bin/true")
for b in bwrap firejail; do
    if why=$($rf plan --backend $b -- /bin/true 2>&1 >/dev/null); then
        cmds+=(-n "ringfence $b" "$rf run --backend $b -- /bin/true")
    else
        echo "bench: ringfence --backend $b left out: ${why%%$'\n'*}" >&2
    fi
done
if command -v bwrap >/dev/null; then
    cmds+=(-n "bwrap" "bwrap --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev --tmpfs /tmp /bin/true")
else
    echo "bench: bwrap left out: not on PATH" >&2
fi
if command -v firejail >/dev/null; then
    cmds+=(-n "firejail" "firejail --quiet --noprofile --private-tmp --net=none /bin/true")
else
    echo "bench: firejail left out: not on PATH" >&2
fi

# podman needs a local image with /bin/true or busybox: RF_BENCH_IMAGE=NAME
# (e.g. one made by `podman import`), run with runc (see docs/backends.md).
if [ -n "${RF_BENCH_IMAGE:-}" ] && command -v podman >/dev/null; then
    # nproc at the caller's hard limit was refused here (rlimit type 6); 1024 is accepted.
    n=$(ulimit -Hn); p=1024
    cmds+=(-n "podman (runc)" "podman --runtime runc run --rm --network none --ulimit nofile=$n:$n --ulimit nproc=$p:$p $RF_BENCH_IMAGE /bin/busybox true")
else
    echo "bench: podman left out: set RF_BENCH_IMAGE to a local image with busybox" >&2
fi

echo "bench: $runs runs each, as uid $(id -u), kernel $(uname -r)"
hyperfine -N --warmup 5 --runs "$runs" --export-json "$out" --output=null "${cmds[@]}" >/dev/null 2>&1
python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["native (default)"]
print("%-18s %10s %10s %10s %11s" % ("command", "mean ms", "median ms", "stddev", "vs native"))
for name, x in r.items():
    print("%-18s %10.3f %10.3f %10.3f %10.2fx" % (name, x["mean"] * 1e3, x["median"] * 1e3,
                                                x["stddev"] * 1e3, x["mean"] / base["mean"]))
PY
