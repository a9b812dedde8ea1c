#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# N commands in flight through one `ringfence serve` (docs/pool.md): N
# `ringfence run --via S -- sleep` clients at once, as the user who runs
# this. Two rounds: SIGTERM to every client (the server stays, as it
# should), then N again and SIGTERM to the server. Each reports how long
# until every process was gone (the sleeps, their sandboxes' inits, the
# clients; the server too in the second round) and what was left
# (bench/leftovers.py: the very namespaces and unix sockets they had, their
# processes, mounts, ringfence-* cgroups, new entries in /tmp, /dev/shm,
# $XDG_RUNTIME_DIR and the instance root; the server's socket file). With
# K > 0, also K `ringfence run --via S -- /bin/true` in a row, timed
# (bench/starts.py): with the server idle, and with N in flight, and the
# CPU time per start of the server and its reaped sandboxes (/proc/PID/stat:
# a count the machine's load moves less than wall time).
#
#   bench/serve-inflight.sh [RINGFENCE] [N] [K] [POOL]  (default: build/ringfence, 200, 0, 4)
#   as rftest: runuser -u rftest -- bash bench/serve-inflight.sh STAGE/ringfence N K
#
# Never a pass/fail test.
set -eu
rf=$(readlink -f "${1:-$(dirname "$0")/../build/ringfence}")
n=${2:-200}
k=${3:-0}
pool=${4:-4}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/rf-inflight.XXXXXX)
chmod 755 "$tmp"
serve=
trap '[ -n "$serve" ] && kill -KILL "$serve" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/ws"
export RINGFENCE_HOME="$tmp/home"
sock="$tmp/rf.sock"
cd "$tmp/ws"
mark=$((86400 + RANDOM % 400)) # a sleep length no one else uses (see thousand.sh)

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
cpu_ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$serve/stat"; } # the server's and its reaped sandboxes' user + system
starts() { # LABEL: K starts in a row, timed, and the CPU per start
    [ "$k" -gt 0 ] || return 0
    local c0
    c0=$(cpu_ticks)
    python3 "$here/starts.py" "$1" "$k" "$rf" run --via "$sock" -- /bin/true
    echo "  CPU per start in the server and its sandboxes (each one rebuilt too): $(( ($(cpu_ticks) - c0) * 1000000 \
         / $(getconf CLK_TCK) / k )) us; the server has $(find "/proc/$serve/task" -mindepth 1 -maxdepth 1 | wc -l) threads," \
         "$(wc -l <"/proc/$serve/maps") mappings"
}
dead() { local p d=0; for p in "$@"; do kill -0 "$p" 2>/dev/null || d=$((d + 1)); done; echo "$d"; }
# N clients, until N sleeps of ours run (or a minute); sets clients=(pids).
launch() {
    local t0 up
    t0=$(date +%s%N)
    clients=()
    for _ in $(seq "$n"); do
        "$rf" run --via "$sock" -- sleep "$mark" </dev/null >/dev/null 2>>"$tmp/err" &
        clients+=($!)
    done
    for _ in $(seq 600); do
        up=$(pgrep -xf "sleep $mark" | wc -l)
        [ "$up" -ge "$n" ] && break
        [ $((up + $(dead "${clients[@]}"))) -ge "$n" ] && break # the rest failed
        sleep 0.1
    done
    echo "started: $up of $n sleeps running through serve after $(ms_since "$t0") ms (uid $(id -u)," \
         "pool $pool, load $(cut -d' ' -f1 /proc/loadavg))"
    [ -s "$tmp/err" ] && { echo "errors (first 3):"; sort "$tmp/err" | uniq -c | sort -rn | head -3; }
    : >"$tmp/err"
}
# Until none of PIDS is alive (10 s at most); prints the ms since T0.
gone_after() { # T0 PID...
    local t0=$1 p
    shift
    for _ in $(seq 200); do
        for p in "$@"; do kill -0 "$p" 2>/dev/null && break; done
        kill -0 "$p" 2>/dev/null || break
        sleep 0.05
    done
    echo "$(ms_since "$t0") ms, $(pgrep -xf "sleep $mark" | wc -l) sleeps left"
}
sandboxes() { # the inits of our sleeps (each sleep's parent)
    local s
    for s in $(pgrep -xf "sleep $mark"); do awk '{print $4}' "/proc/$s/stat" 2>/dev/null; done
}

"$rf" run -- /bin/true </dev/null >/dev/null 2>&1 || true # the instance root's caches
dirs=(/tmp /dev/shm "$RINGFENCE_HOME/")
[ -n "${XDG_RUNTIME_DIR:-}" ] && dirs+=("$XDG_RUNTIME_DIR")
python3 "$here/leftovers.py" before "$tmp/state-serve" "${dirs[@]}"
"$rf" serve --socket "$sock" --pool-size "$pool" </dev/null >/dev/null 2>"$tmp/serve.err" &
serve=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
sleep 1 # the pool filled
starts "through serve, idle"

# Round 1: SIGTERM to every client.
cp "$tmp/state-serve" "$tmp/state-clients"
launch
starts "through serve, $n in flight"
inits=$(sandboxes)
# shellcheck disable=SC2086 # the pids, one word each
python3 "$here/leftovers.py" during "$tmp/state-clients" "${clients[@]}" $inits
t=$(date +%s%N)
kill -TERM "${clients[@]}" 2>/dev/null || true
# shellcheck disable=SC2086 # the pids, one word each
echo "SIGTERM to the $n clients: clients, sandboxes and sleeps gone after $(gone_after "$t" "${clients[@]}" $inits)"
wait "${clients[@]}" 2>/dev/null || true
sleep 0.5
python3 "$here/leftovers.py" check "$tmp/state-clients"

# Round 2: SIGTERM to the server with N in flight.
launch
python3 "$here/leftovers.py" during "$tmp/state-serve" "$serve" "${clients[@]}"
t=$(date +%s%N)
kill -TERM "$serve"
echo "SIGTERM to serve: server, clients, sandboxes and sleeps gone after $(gone_after "$t" "$serve" "${clients[@]}")"
statuses=()
for c in "${clients[@]}"; do wait "$c" && statuses+=(0) || statuses+=($?); done
codes=$(printf '%s\n' "${statuses[@]}" | sort | uniq -c | tr -s ' \n' ' ')
wait "$serve" && rc=0 || rc=$?
serve=
echo "  server's exit status $rc; clients' exit statuses (count status): $codes; first messages:"
sort "$tmp/err" | uniq -c | sort -rn | head -2
sleep 0.5
python3 "$here/leftovers.py" check "$tmp/state-serve"
[ -e "$sock" ] && echo "  the socket file is still there: $sock"
exit 0
