#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up cost of a sandbox, side by side in one run: bare /bin/true, the
# floor probe (bench/floor.c: only clone + tmpfs root + /usr + pivot_root +
# proc + exec), ringfence, the closest bubblewrap line (all namespaces, the
# same kind of mounts) and firejail. Prints mean times and ratios.
#
#   bench/startup.sh [BUILD_DIR] [RUNS]     (default: build, 300)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-300}
. "$(dirname "$0")/lib.sh"

links=""
for l in bin sbin lib lib64; do
    [ -L "/$l" ] && links="$links --symlink $(readlink /$l) /$l"
done
etc=""
for f in passwd group hosts resolv.conf nsswitch.conf ld.so.cache; do
    [ -e "/etc/$f" ] && etc="$etc --ro-bind /etc/$f /etc/$f"
done
bwrap_cmd="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr$links$etc \
--proc /proc --dev /dev --tmpfs /tmp --bind $ws $ws --chdir $ws --clearenv \
--setenv PATH /usr/bin:/bin --setenv HOME $ws --cap-drop ALL /bin/true"

cmds=(-n bare /bin/true -n floor "$build/bench/floor /bin/true" -n ringfence "$rf run -- /bin/true")
command -v bwrap >/dev/null && cmds+=(-n bwrap "$bwrap_cmd")
command -v firejail >/dev/null && cmds+=(-n firejail "firejail --noprofile --quiet --net=none --private /bin/true")
[ -n "${RF_BENCH_EXTRA:-}" ] && cmds+=(-n ringfence-extra "$rf run $RF_BENCH_EXTRA -- /bin/true")

echo "bench: $runs runs each, as uid $(id -u), kernel $(uname -r)"
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out" "${cmds[@]}" >/dev/null
python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r.get("bwrap")
print("%-16s %10s %10s %12s" % ("command", "mean ms", "stddev", "vs bwrap"))
for name, x in r.items():
    ratio = "%.2fx" % (x["mean"] / base["mean"]) if base else "-"
    print("%-16s %10.3f %10.3f %12s" % (name, x["mean"] * 1e3, x["stddev"] * 1e3, ratio))
if "bare" in r and "ringfence" in r:
    print("ringfence overhead over bare exec: %.3f ms" % ((r["ringfence"]["mean"] - r["bare"]["mean"]) * 1e3))
if "floor" in r and "ringfence" in r:
    print("ringfence vs the floor probe: %.2fx" % (r["ringfence"]["mean"] / r["floor"]["mean"]))
PY
