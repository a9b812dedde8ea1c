# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/leftovers, the check tests/run makes after every layer (issue 46):
# it finds a run's processes by identity, those whose binary, working
# directory or an argument lies in the run's directories, what descends
# from them and what lives in their pid namespaces, and fails with their
# command lines, control characters shown as '?'. It passes when none is
# left, and never counts another run's processes (another directory).
checker="$(cd "$(dirname "$0")/.." && pwd)/leftovers"
. "$(dirname "$0")/../lib.sh"
ours="$SCRATCH/ours" theirs="$SCRATCH/theirs" near="$SCRATCH/ours-not"
mkdir -p "$ours" "$theirs" "$near"
token="$$$RANDOM.25" # sleep's seconds, in no other command line
pids=()
# SIGKILL: unshare --fork ignores SIGTERM.
trap 'kill -KILL "${pids[@]}" 2>/dev/null; rm -rf "$SCRATCH" 2>/dev/null; echo "1..$T_N"' EXIT

leftovers() { RF_LEFTOVER_WAIT=${WAIT:-0} python3 "$checker" "$@" 2>&1; }

OUT=$(leftovers "$ours")
contains "nothing of the run's running: it passes" "$OUT" "ok 1 - no process of this run is left"
lacks "...with no failing line" "$OUT" "not ok"

# Each started with exec in a subshell: $! is the process itself.
(cd "$ours" && exec sleep "1$token") &
pids+=($!)
cp /bin/sleep "$ours/rf-sleep"
(cd / && exec "$ours/rf-sleep" "2$token") &
pids+=($!)
: >"$ours/log$token"
(cd / && exec tail -f "$ours/log$token") &
pids+=($!)
# A sandbox: a pid namespace whose init (cwd /) started one process of
# the run's (its binary in ours) and one that is not (/bin/sleep, cwd /).
if unshare -Urpf true 2>/dev/null; then
    (cd / && exec unshare -Urpf --kill-child sh -c '/bin/sleep "4$1" & "$0" "5$1" & wait' "$ours/rf-sleep" "$token") &
    pids+=($!)
    sandbox=yes
else
    sandbox=
fi
(cd "$ours" && exec -a "$(printf 'sleep-e\033]0;pwn\007')" sleep "6$token") &
pids+=($!)
# Not the run's: another run's directory, and one whose name only starts
# like ours.
(cd "$theirs" && exec sleep "7$token") &
pids+=($!)
(cd "$near" && exec sleep "8$token") &
pids+=($!)
# Rootless podman's pause process is podman's, kept by design: a stand-in
# (bash named catatonit, run as "catatonit -P") from the run's directory.
# It waits on a fifo nobody writes: no child to outlive it.
cp "$(command -v bash)" "$ours/catatonit"
mkfifo "$SCRATCH/fifo"
(cd / && exec "$ours/catatonit" -P -c 'exec 3<>"$1"; read -r -u 3 _' "$token" "$SCRATCH/fifo") &
pids+=($!)
started() { [ "$(pgrep -f "$token" | wc -l)" -ge "$1" ]; }
want=7
[ "$sandbox" ] && want=10
wait_for() { local _; for _ in $(seq 200); do started "$want" && return 0; sleep 0.05; done; return 1; }
check "control: the $want processes run" wait_for

rc=0
OUT=$(leftovers "$ours") || rc=$?
contains "leftovers: it fails" "$OUT" "not ok 1 - no process of this run is left"
check "...and exits 0, its verdict in the TAP line ($rc)" test "$rc" = 0
contains "a process whose working directory is the run's, with its command line" "$OUT" \
    "(working directory $ours): sleep 1$token"
contains "a process whose binary is the run's" "$OUT" "(binary $ours/rf-sleep): $ours/rf-sleep 2$token"
contains "a process with an argument in the run's directories" "$OUT" "(an argument in $ours): tail -f $ours/log$token"
if [ "$sandbox" ]; then
    contains "a sandbox's process of its own (cwd /, /bin/sleep): by its pid namespace" "$OUT" \
        "(in a pid namespace of the run's (pid:["
    contains "...named with its command line" "$OUT" "sleep 4$token"
    contains "the process that made that namespace too" "$OUT" "unshare -Urpf --kill-child"
else
    skip "a sandbox's process found by its pid namespace" "unshare -Urpf is refused here"
fi
contains "a command line with escape sequences is shown with '?'" "$OUT" "sleep-e?]0;pwn? 6$token"
check "...and no escape byte is printed" sh -c "! printf '%s' \"\$1\" | grep -q \"\$(printf '\\033')\"" _ "$OUT"
lacks "another run's process is not counted" "$OUT" "7$token"
lacks "nor one in a directory whose name only starts like the run's" "$OUT" "8$token"
lacks "rootless podman's pause process (catatonit -P) is not counted" "$OUT" "catatonit -P"
contains "control: ...though its binary is in the run's directory" "$(ls "$ours")" catatonit
OUT=$(leftovers --list <(echo "$theirs") "$SCRATCH/nothing-here")
contains "--list FILE: the directories in it are the run's too" "$OUT" "(working directory $theirs): sleep 7$token"

# Ended meanwhile: what ends within the wait is not counted.
{ kill -KILL "${pids[@]}"; wait "${pids[@]}"; } 2>/dev/null
OUT=$(WAIT=20 leftovers "$ours" "$theirs" "$near")
contains "once they ended: it passes again" "$OUT" "ok 1 - no process of this run is left"
lacks "...with no failing line" "$OUT" "not ok"
