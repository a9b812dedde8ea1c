#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up cost of a sandbox, side by side in one run: bare /bin/true, the
# floor probe (bench/floor.c: only clone + tmpfs root + /usr + pivot_root +
# proc + exec), ringfence, the closest bubblewrap line (all namespaces, the
# same kind of mounts) and firejail, rounds interleaved. Prints medians and
# ratios. CPU is the user and system time of each whole process tree
# (interleave.py reaps what a tool leaves behind: bubblewrap's pid 1).
#
#   bench/startup.sh [BUILD_DIR] [RUNS]     (default: build, 200)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-200}
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

cmds=("bare=/bin/true" "floor=$build/bench/floor /bin/true" "ringfence=$rf run -- /bin/true"
      "rf-net-host=$rf run --network host -- /bin/true")
command -v bwrap >/dev/null && cmds+=("bwrap=$bwrap_cmd")
command -v firejail >/dev/null && cmds+=("firejail=firejail --noprofile --quiet --net=none --private /bin/true")
[ -n "${RF_BENCH_EXTRA:-}" ] && cmds+=("ringfence-extra=$rf run $RF_BENCH_EXTRA -- /bin/true")

# Rounds interleaved, medians (bench/interleave.py): on a busy machine a
# burst of load then lands on every command alike, so the ratios hold.
echo "bench: $runs rounds, as uid $(id -u), kernel $(uname -r), $(nproc) CPUs"
base=floor; command -v bwrap >/dev/null && base=bwrap
python3 "$top/bench/interleave.py" --runs "$runs" --warmup 10 --base "$base" --json "$out" "${cmds[@]}"
python3 - "$out" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
w = {k: statistics.median(v) for k, v in r["wall"].items()}
c = {k: statistics.median(v) for k, v in r["cpu"].items()}
print("ringfence overhead over bare exec: %.3f ms" % ((w["ringfence"] - w["bare"]) * 1e3))
print("ringfence vs the floor probe: %.2fx (target <= 1.25x)" % (w["ringfence"] / w["floor"]))
if "bwrap" in w:
    print("ringfence vs bubblewrap: %.2fx (target <= 0.75x)" % (w["ringfence"] / w["bwrap"]))
    print("ringfence CPU vs bubblewrap's, whole trees: %.2fx (target <= 1.5x)" % (c["ringfence"] / c["bwrap"]))
PY
