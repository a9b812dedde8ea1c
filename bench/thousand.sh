#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A thousand at once: N `ringfence run -- sleep` (default policy) started
# together, as the user who runs this. Reports whether all started, the
# host memory each idle sandbox costs (the PSS of every process of each
# tree: the waiting `ringfence run`, the sandbox's init, the sleep; and the
# kernel's own, from /proc/meminfo deltas: slab, kernel stacks, page
# tables, per-CPU), then how long after SIGTERM to every `ringfence run`
# the last process was gone, and what was left (bench/leftovers.py: the
# very namespaces and unix sockets the sandboxes had, their processes,
# mounts, ringfence-* cgroups, new entries in /tmp, /dev/shm,
# $XDG_RUNTIME_DIR and the instance root). With K > 0, also K
# `ringfence run -- /bin/true` in a row, timed (bench/starts.py): on the
# idle machine before, while the N live, and idle again after.
#
#   bench/thousand.sh [RINGFENCE] [N] [K]  (default: build/ringfence, 1000, 0)
#   as rftest: runuser -u rftest -- bash bench/thousand.sh STAGE/ringfence N
#   (a world-readable copy of the binary, as tests/run makes)
#
# /proc/meminfo is the whole machine's: other work on it moves the deltas
# (say the load with the numbers). Never a pass/fail test.
set -eu
rf=$(readlink -f "${1:-$(dirname "$0")/../build/ringfence}")
n=${2:-1000}
k=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/rf-thousand.XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/ws"
export RINGFENCE_HOME="$tmp/home"
cd "$tmp/ws"
# A sleep length no one else uses: it names our sleeps among the host's
# (by command line: inside, they run under another uid).
mark=$((86000 + RANDOM % 400))

meminfo() { # the kernel's share and the anonymous pages, in KiB, one line
    awk '/^(Slab|KernelStack|PageTables|Percpu|AnonPages|Shmem):/ {v[$1]=$2}
         END {print v["Slab:"], v["KernelStack:"], v["PageTables:"], v["Percpu:"], v["AnonPages:"], v["Shmem:"]}' /proc/meminfo
}
pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }

starts() { # LABEL: K starts in a row, timed
    [ "$k" -gt 0 ] && python3 "$here/starts.py" "$1" "$k" "$rf" run -- /bin/true
    return 0
}

"$rf" run -- /bin/true </dev/null >/dev/null 2>&1 || true # the instance root's caches
starts "idle, before"
dirs=(/tmp /dev/shm "$RINGFENCE_HOME/")
[ -n "${XDG_RUNTIME_DIR:-}" ] && dirs+=("$XDG_RUNTIME_DIR")
mkdir -p "$RINGFENCE_HOME"
sync
python3 "$here/leftovers.py" before "$tmp/state" "${dirs[@]}"
before_mem=$(meminfo)
t0=$(date +%s%N)
pids=()
for _ in $(seq "$n"); do
    "$rf" run -- sleep "$mark" </dev/null >/dev/null 2>>"$tmp/err" &
    pids+=($!)
done
# All started: N sleeps of ours running (or a minute gone).
for _ in $(seq 600); do
    up=$(pgrep -xf "sleep $mark" | wc -l)
    [ "$up" -ge "$n" ] && break
    sleep 0.1
done
t1=$(date +%s%N)
sleep 2 # let the last ones settle into waiting
after_mem=$(meminfo)
echo "started: $up of $n sleeps running after $(( (t1 - t0) / 1000000 )) ms (uid $(id -u)," \
     "$(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
[ -s "$tmp/err" ] && { echo "errors (first 3):"; sort "$tmp/err" | uniq -c | sort -rn | head -3; }

# PSS of each tree, by role: the ringfence run parent, its init, the
# sleep (one pass over /proc: a pgrep per process takes minutes at 1,000).
read -r sum_parent sum_init sum_cmd < <(python3 - "${pids[@]}" <<'PY'
import os, sys
kids = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            stat = open(f"/proc/{d}/stat").read()
        except OSError:
            continue
        kids.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(d))
def pss(pid):
    try:
        return next(int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0
tot = [0, 0, 0]
for p in map(int, sys.argv[1:]):
    tot[0] += pss(p)
    for c in kids.get(p, []):
        tot[1] += pss(c)
        tot[2] += sum(pss(g) for g in kids.get(c, []))
print(*tot)
PY
)
python3 "$here/leftovers.py" during "$tmp/state" "${pids[@]}"
read -r s0 k0 p0 c0 a0 h0 <<<"$before_mem"
read -r s1 k1 p1 c1 a1 h1 <<<"$after_mem"
awk -v n="$n" -v sp="$sum_parent" -v si="$sum_init" -v sc="$sum_cmd" \
    -v ds=$((s1 - s0)) -v dk=$((k1 - k0)) -v dp=$((p1 - p0)) -v dc=$((c1 - c0)) -v da=$((a1 - a0)) -v dh=$((h1 - h0)) 'BEGIN {
    printf "PSS per sandbox: %.0f KiB (ringfence run %.0f, init %.0f, command %.0f)\n", (sp + si + sc) / n, sp / n, si / n, sc / n
    printf "kernel per sandbox (meminfo deltas): %.0f KiB (slab %.0f, kernel stacks %.0f, page tables %.0f, per-CPU %.0f); shmem %.0f\n",
           (ds + dk + dp + dc) / n, ds / n, dk / n, dp / n, dc / n, dh / n
    printf "host memory per idle sandbox: %.0f KiB = %.2f MiB (PSS + kernel; AnonPages delta %.0f KiB)\n",
           (sp + si + sc + ds + dk + dp + dc + dh) / n, (sp + si + sc + ds + dk + dp + dc + dh) / n / 1024, da / n
}'

starts "while $n live"
t2=$(date +%s%N)
kill -TERM "${pids[@]}" 2>/dev/null || true
for _ in $(seq 200); do
    pgrep -xf "sleep $mark" >/dev/null || break
    sleep 0.05
done
wait || true
t3=$(date +%s%N)
gone=$(pgrep -xf "sleep $mark" | wc -l)
echo "SIGTERM to all: every process gone after $(( (t3 - t2) / 1000000 )) ms ($gone sleeps left)"
sleep 0.5
python3 "$here/leftovers.py" check "$tmp/state"
starts "idle, after"
