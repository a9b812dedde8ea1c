#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the supervisor costs while a command runs, for docs/performance.md:
#  1. its resident memory (VmRSS of the `ringfence run` process, and of the
#     sandbox's init) while the command sleeps;
#  2. stdio throughput: SIZE bytes (default 1 GiB) piped through
#     `ringfence run -- cat` against the same pipe through cat alone, rounds
#     interleaved (bench/interleave.py), medians. ringfence hands the
#     command the caller's descriptors, so no byte passes through it.
#
#   bench/supervisor.sh [BUILD_DIR] [RUNS] [SIZE_MIB]   (default: build, 10, 1024)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-10}
size=${3:-1024}
. "$(dirname "$0")/lib.sh"

echo "1. memory while a command runs (uid $(id -u))"
"$rf" run -- /bin/sleep 3 &
sup=$!
init=""
for _ in $(seq 100); do
    init=$(pgrep -P "$sup" | head -n 1)
    [ -n "$init" ] && [ -n "$(pgrep -P "$init")" ] && break
    sleep 0.02
done
sleep 0.3
# RssAnon is what the process costs the machine alone; RssFile is mostly
# pages of libc and the binary that every process mapping them shares.
mem() { awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %s KiB  ", $1, $2}' "/proc/$1/status" 2>/dev/null; }
echo "   supervisor (ringfence run): $(mem "$sup")"
echo "   sandbox init:               $(mem "${init:-0}")"
wait "$sup"

echo
echo "2. stdio throughput: $size MiB through a pipe ($runs interleaved rounds)"
# setsid and bwrap --new-session put cat in a new session, as ringfence does:
# where the scheduler groups tasks by session (autogroup, for tasks in the
# root cpu cgroup), that alone changes how the two ends of the pipe share
# the CPUs, so those lines tell it apart from any cost of ringfence's own.
links=""
for l in bin sbin lib lib64; do [ -L "/$l" ] && links="$links --symlink $(readlink /$l) /$l"; done
bw="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr$links --proc /proc --dev /dev --cap-drop ALL"
python3 "$top/bench/interleave.py" --runs "$runs" --warmup 1 --base pipe \
    "pipe=sh:head -c ${size}M /dev/zero | cat > /dev/null" \
    "setsid=sh:head -c ${size}M /dev/zero | setsid -w cat > /dev/null" \
    "run=sh:head -c ${size}M /dev/zero | $rf run -- cat > /dev/null" \
    "bwrap=sh:head -c ${size}M /dev/zero | $bw cat > /dev/null" | sed 's/^/   /'
echo "   (throughput = 1 / the 'vs pipe' ratio; autogroup here: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo absent), cpu cgroup: $(awk -F: '$2 ~ /(^|,)cpu(,|$)/ || $2 == "" {print $2 ":" $3; exit}' /proc/self/cgroup))"
