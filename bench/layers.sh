#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up cost of each layer, side by side in one hyperfine run:
# `ringfence run -- /bin/true` with the native backend and neither Landlock
# nor seccomp, Landlock only, seccomp only, both (the default), then the
# landlock backend, the none backend and --backend auto (its probe), with
# bare /bin/true for reference. Prints mean times and ratios to the native
# backend without the two layers.
#
#   bench/layers.sh [BUILD_DIR] [RUNS]     (default: build, 200)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-200}
. "$(dirname "$0")/lib.sh"
# A root caller runs the landlock backend's command as uid 65534.
[ "$(id -u)" = 0 ] && chown 65534:65534 "$ws"

cmds=(-n bare /bin/true
      -n "native-no-layers" "$rf run --landlock off --seccomp off -- /bin/true"
      -n "native+landlock" "$rf run --seccomp off -- /bin/true"
      -n "native+seccomp" "$rf run --landlock off -- /bin/true"
      -n "native (both)" "$rf run -- /bin/true"
      -n "backend landlock" "$rf run --backend landlock --accept-weaker -- /bin/true"
      -n "backend none" "$rf run --backend none -- /bin/true"
      -n "backend auto" "$rf run --backend auto -- /bin/true")

echo "bench: $runs runs each, as uid $(id -u), kernel $(uname -r)"
# stderr carries the backends' warnings; hyperfine -N runs without a shell.
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out" --output=null "${cmds[@]}" >/dev/null 2>&1
python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["native-no-layers"]
print("%-18s %10s %10s %10s %14s" % ("command", "mean ms", "median ms", "stddev", "vs no-layers"))
for name, x in r.items():
    print("%-18s %10.3f %10.3f %10.3f %13.2fx" % (name, x["mean"] * 1e3, x["median"] * 1e3,
                                                 x["stddev"] * 1e3, x["mean"] / base["mean"]))
def cost(a, b):
    return (r[a]["median"] - r[b]["median"]) * 1e3
print("Landlock layer (median): %+.3f ms" % cost("native+landlock", "native-no-layers"))
print("seccomp layer (median):  %+.3f ms" % cost("native+seccomp", "native-no-layers"))
print("auto's probe (median):   %+.3f ms" % cost("backend auto", "native (both)"))
PY
