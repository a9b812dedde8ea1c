#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --changes overlay (docs/changes.md):
#  1. start cost: `run -- /bin/true` direct, with a new overlay session each
#     time, and continuing one session (--session), interleaved;
#  2. the start again on a 10,000-file workspace (100 directories x 100
#     files), then `changes diff` (the full unified diff, and --stat) of it
#     after a command changed 100;
#  3. `changes apply` of 1,000 changed files (each: temp, rename; a syncfs
#     per batch), interleaved with the floor: the same written and renamed
#     by a plain loop, and 1,000 bare renames (APPLY_ROUNDS rounds, 3).
#  0. the floor of 1: the bare overlay mount and its teardown, the same
#     syscalls and options in a namespace made as ringfence makes one for
#     this caller (bench/overlay-floor.py), in the same run.
#
#   bench/changes.sh [BUILD_DIR] [RUNS]     (default: build, 200)
#   CHANGES_PARTS="start diff apply" picks the parts (default: all three;
#   the overlay floor goes with start).
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-200}
. "$(dirname "$0")/lib.sh"

# Bash's own clock: no process start inside the measured span.
now() { echo "${EPOCHREALTIME/./}"; }
ms() { local t; t=$(now); echo "$(((t - $1) / 1000)).$((((t - $1) % 1000) / 100))"; }

parts=" ${CHANGES_PARTS:-start diff apply} "
echo "bench: as uid $(id -u), kernel $(uname -r), $(uptime)"
if [[ $parts == *" start "* ]]; then
"$rf" run --changes overlay --status-json "$top_tmp/st" -- /bin/true
sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$top_tmp/st")
python3 "$top/bench/interleave.py" --runs "$runs" --warmup 10 --base direct \
    direct="$rf run -- /bin/true" \
    overlay-new="$rf run --changes overlay -- /bin/true" \
    overlay-continue="$rf run --session $sid -- /bin/true"
rm -rf "$RINGFENCE_HOME/sessions"
# The floor, on the disk the sessions are on, right after (same load).
python3 "$top/bench/overlay-floor.py" --runs "$runs" --dir "$top_tmp"
fi

# 2. diff: 10,000 files, 100 changed.
if [[ $parts == *" diff "* ]]; then
for d in $(seq -w 0 99); do
    mkdir "$ws/d$d"
    for f in $(seq -w 0 99); do printf 'line one\nline two %s\nline three\n' "$f" >"$ws/d$d/f$f"; done
done
# The start on this tree: an unprivileged caller's new session walks it
# once for files of another owner or group (src/lib/changes/ids.c).
python3 "$top/bench/interleave.py" --runs "$(((runs + 3) / 4))" --warmup 3 --base direct \
    direct="$rf run -- /bin/true" \
    overlay-new="$rf run --changes overlay -- /bin/true"
rm -rf "$RINGFENCE_HOME/sessions"
"$rf" run --changes overlay --status-json "$top_tmp/st" -- sh -c \
    'for d in $(seq -w 0 99); do printf "line one\nLINE TWO\nline three\n" > d$d/f00; done'
sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$top_tmp/st")
for what in "diff" "diff --stat" "diff --json"; do
    best=
    for _ in 1 2 3 4 5; do
        t=$(now); "$rf" changes $what "$sid" >/dev/null; m=$(ms "$t")
        best=$(python3 -c 'import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))' "$m" "${best:-}")
    done
    echo "changes $what, 10,000 files, 100 changed: best of 5 $best ms"
done
"$rf" changes discard "$sid" >/dev/null
fi

# 3. apply: 1,000 changed files (10 directories' 100 each), against the
# floor on this host, in the same run and interleaved round by round (the
# load of the shared machine moves from minute to minute): the same 1,000
# files replaced by a plain loop (write, rename) without any fsync, and
# 1,000 bare renames of files written and synced before the clock.
# timed COMMAND...: its wall and CPU (user + system) ms; stdout dropped.
timed() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
# Less what this interpreter's own start left in RUSAGE_CHILDREN (a python3
# that is a pyenv shim: its children count on after its exec, ~50 ms).
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t = time.time()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime - r0.ru_utime - r0.ru_stime
print("%.1f %.1f" % ((time.time() - t) * 1e3, cpu * 1e3))
PY
}
floor() { # DIR MODE: one floor round, prints its wall and CPU ms
    python3 - "$1" "$2" <<'PY'
import os, sys, time
d, mode = sys.argv[1], sys.argv[2]
os.makedirs(d, exist_ok=True)
for i in range(1000):
    with open(f"{d}/f{i}", "w") as f:
        f.write("x\n")
if mode == "rename":
    for i in range(1000):
        with open(f"{d}/.t{i}", "w") as f:
            f.write("y\n")
os.sync()
t, c = time.time(), time.process_time()
for i in range(1000):
    if mode == "write":
        fd = os.open(f"{d}/.t{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"y\n")
        os.close(fd)
    os.rename(f"{d}/.t{i}", f"{d}/f{i}")
print("%.1f %.1f" % ((time.time() - t) * 1e3, (time.process_time() - c) * 1e3))
PY
}
[[ $parts == *" apply "* ]] || exit 0
rounds=${APPLY_ROUNDS:-3}
ratios= cratios=
for d in $(seq -f %02g 0 9); do # the files it changes, when part 2 did not make them
    [ -d "$ws/d$d" ] && continue
    mkdir "$ws/d$d"
    for f in $(seq -w 0 99); do printf 'line one\n' >"$ws/d$d/f$f"; done
done
for r in $(seq "$rounds"); do
    "$rf" run --changes overlay --status-json "$top_tmp/st" -- sh -c \
        "for d in \$(seq -f %02g 0 9); do for f in \$(seq -w 0 99); do echo changed$r > d\$d/f\$f; done; done"
    sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$top_tmp/st")
    sync
    read -r a ac < <(timed "$rf" changes apply "$sid")
    read -r w wc < <(floor "$top_tmp/floor-w$r" write)
    read -r n nc < <(floor "$top_tmp/floor-n$r" rename)
    echo "round $r: changes apply, 1,000 changed files: $a ms (CPU $ac); floor: 1,000 written + renamed $w ms (CPU $wc)," \
        "1,000 bare renames $n ms (CPU $nc)"
    ratios="$ratios $(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$a" "$n")"
    cratios="$cratios $(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$ac" "$nc")"
    rm -rf "$top_tmp/floor-w$r" "$top_tmp/floor-n$r"
done
for what in "wall:$ratios" "CPU:$cratios"; do
    python3 - ${what#*:} <<PY
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print("apply / bare renames, ${what%%:*}, per round: median %.2fx, min %.2fx, max %.2fx (%d rounds)" % (
      statistics.median(r), r[0], r[-1], len(r)))
PY
done
echo "load: $(uptime)"
