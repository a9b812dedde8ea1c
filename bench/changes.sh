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
#
#   bench/changes.sh [BUILD_DIR] [RUNS]     (default: build, 200)
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

echo "bench: as uid $(id -u), kernel $(uname -r)"
"$rf" run --changes overlay --status-json "$top_tmp/st" -- /bin/true
sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$top_tmp/st")
python3 "$top/bench/interleave.py" --runs "$runs" --warmup 10 --base direct \
    direct="$rf run -- /bin/true" \
    overlay-new="$rf run --changes overlay -- /bin/true" \
    overlay-continue="$rf run --session $sid -- /bin/true"
rm -rf "$RINGFENCE_HOME/sessions"

# 2. diff: 10,000 files, 100 changed.
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

# 3. apply: 1,000 changed files (10 directories' 100 each), against the
# floor on this host, in the same run and interleaved round by round (the
# load of the shared machine moves from minute to minute): the same 1,000
# files replaced by a plain loop (write, rename) without any fsync, and
# 1,000 bare renames of files written and synced before the clock.
floor() { # DIR MODE: one floor round, prints its ms
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
t = time.time()
for i in range(1000):
    if mode == "write":
        fd = os.open(f"{d}/.t{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"y\n")
        os.close(fd)
    os.rename(f"{d}/.t{i}", f"{d}/f{i}")
print("%.1f" % ((time.time() - t) * 1e3))
PY
}
rounds=${APPLY_ROUNDS:-3}
for r in $(seq "$rounds"); do
    "$rf" run --changes overlay --status-json "$top_tmp/st" -- sh -c \
        "for d in \$(seq -f %02g 0 9); do for f in \$(seq -w 0 99); do echo changed$r > d\$d/f\$f; done; done"
    sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session"])' "$top_tmp/st")
    sync
    t=$(now); "$rf" changes apply "$sid" >/dev/null; a=$(ms "$t")
    w=$(floor "$top_tmp/floor-w$r" write)
    n=$(floor "$top_tmp/floor-n$r" rename)
    echo "round $r: changes apply, 1,000 changed files: $a ms; floor: 1,000 written + renamed $w ms, 1,000 bare renames $n ms"
    rm -rf "$top_tmp/floor-w$r" "$top_tmp/floor-n$r"
done
