# SPDX-License-Identifier: LGPL-2.1-or-later
# A `ringfence serve` whose socket's path no longer leads to it can never
# be reached again: it stops by itself as on SIGTERM (the commands in
# flight ended, its ready sandboxes freed, exit 0) and says why on stderr.
# One server per way the path is lost: the socket removed, its directory
# removed, another socket renamed onto it, a plain file put there, another
# server started on it. Controls: a chmod of the socket, and a symlink to
# it put in its place, keep the server serving. (Before, such servers ran
# on for hours with their sandboxes: issue 46.)
. "$(dirname "$0")/common.bash"

# serve NAME SOCKET: a server in the background (ringfence itself: $! is
# its pid, not a subshell's) logging to $SCRATCH/NAME.log; SRV is its pid,
# READY the pids of its ready sandboxes (built before it listens).
serve() {
    "$RINGFENCE" serve --socket "$2" --pool-size 2 >"$SCRATCH/$1.log" 2>&1 &
    SRV=$!
    at_exit "kill $SRV 2>/dev/null"
    wait_until 20 test -S "$2" || { fail "ringfence serve ($1) starts"; diag "$(cat "$SCRATCH/$1.log")"; exit 0; }
    wait_until 10 test "$(pgrep -P "$SRV" | wc -l)" -ge 2
    READY=$(pgrep -P "$SRV" | tr '\n' ' ')
}

# Exited (a zombie of ours until waited for counts: it runs nothing).
ended() { [ ! -e "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
running() { ! ended "$1"; }
all_ended() { local p; for p in "$@"; do ended "$p" || return 1; done; }

# stopped NAME WHY: server SRV stopped by itself, exit 0, WHY on its
# stderr, its ready sandboxes gone.
stopped() {
    local name=$1 why=$2 rc=0
    wait_until 20 ended "$SRV"
    check "$name: the server stops by itself" ended "$SRV"
    if ! ended "$SRV"; then # then what comes after is moot: stop it
        diag "$(cat "$SCRATCH/$name.log")"
        kill "$SRV"
    fi
    wait "$SRV" || rc=$?
    check "$name: it exits 0, as on SIGTERM ($rc)" test "$rc" = 0
    contains "$name: its stderr says why" "$(cat "$SCRATCH/$name.log")" "$why"
    # shellcheck disable=SC2086 # one pid a word
    wait_until 10 all_ended $READY
    # shellcheck disable=SC2086
    check "$name: its ready sandboxes are gone ($READY)" all_ended $READY
}

# ── Controls: a chmod, a symlink in its place, and time: it keeps serving.
serve control "$SCRATCH/control.sock"
chmod 644 "$SCRATCH/control.sock"
mv "$SCRATCH/control.sock" "$SCRATCH/control.real"
ln -s "$SCRATCH/control.real" "$SCRATCH/control.sock"
# Two edits of a watched file, each seen ("rebuilding"): the round of
# checks that saw the second began with a check of the socket made after
# the first was seen, so after the chmod and the symlink, and found it
# (a server that had not would have stopped there, before rebuilding).
rebuilds() { grep -c rebuilding "$SCRATCH/control.log"; }
echo '{"limits": {"timeout": 571}}' >"$WS/.ringfence.json"
wait_until 20 test "$(rebuilds)" = 1
echo '{"limits": {"timeout": 572}}' >"$WS/.ringfence.json"
wait_until 20 test "$(rebuilds)" = 2
check "control: the server checked its socket since (it rebuilt for two edits: $(rebuilds))" test "$(rebuilds)" = 2
check "control: a chmod of its socket, a symlink to it in its place: it still runs" running "$SRV"
expect_exit 0 "control: ...and serves a command through the symlink" rf run --via "$SCRATCH/control.sock" -- true
lacks "control: ...and says nothing of stopping" "$(cat "$SCRATCH/control.log")" stopping
rm -f "$WS/.ringfence.json"

# ── The socket removed (rm, a /tmp cleaner). Its stderr and hint.
rm "$SCRATCH/control.sock" "$SCRATCH/control.real"
stopped control "its socket $SCRATCH/control.sock was removed: no client can reach this server any more"
contains "control: a hint says where to start it again" "$(cat "$SCRATCH/control.log")" "hint: start it again"

# ── Its directory removed (a test's scratch directory, deleted).
mkdir "$SCRATCH/dir"
serve dir "$SCRATCH/dir/s.sock"
rm -rf "$SCRATCH/dir"
stopped dir "the directory of its socket, $SCRATCH/dir, was removed"

# ── Another socket renamed onto the path: nobody reaches this server.
serve renamed "$SCRATCH/renamed.sock"
python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1] + ".new")
os.rename(sys.argv[1] + ".new", sys.argv[1])' "$SCRATCH/renamed.sock"
replacement=$(stat -c %i "$SCRATCH/renamed.sock")
stopped renamed "its socket $SCRATCH/renamed.sock was replaced"
check "renamed: the socket now there is left in place (not removed on stop)" \
    test "$(stat -c %i "$SCRATCH/renamed.sock" 2>/dev/null)" = "$replacement"

# ── A plain file put there.
serve file "$SCRATCH/file.sock"
rm "$SCRATCH/file.sock" && echo mine >"$SCRATCH/file.sock"
stopped file "was replaced"
check "file: the file is left as it was" test "$(cat "$SCRATCH/file.sock" 2>/dev/null)" = mine

# ── Another ringfence serve on the same path: the first stops (its
# socket removed, or replaced: the check may fall between the rm and the
# second's bind), the second keeps its socket and serves.
serve first "$SCRATCH/same.sock"
first=$SRV first_ready=$READY
rm "$SCRATCH/same.sock"
serve second "$SCRATCH/same.sock"
second=$SRV
SRV=$first READY=$first_ready
stopped first "its socket $SCRATCH/same.sock was re"
check "second: the second server still runs" running "$second"
check "second: its socket is still there" test -S "$SCRATCH/same.sock"
expect_exit 0 "second: a command runs through it" rf run --via "$SCRATCH/same.sock" -- sh -c 'echo via-second'
contains "second: its output arrives" "$OUT" via-second
kill "$second"
wait "$second"

# ── A command in flight when the socket goes: ended as on SIGTERM (its
# client gets 143, as `ringfence run` gives), nothing of it left.
serve inflight "$SCRATCH/inflight.sock"
slp="31$$.5"
"$RINGFENCE" run --via "$SCRATCH/inflight.sock" -- sh -c ": > \"$WS/inflight\"; exec sleep $slp" \
    </dev/null >/dev/null 2>"$SCRATCH/client.err" &
client=$!
wait_until 20 test -e "$WS/inflight"
sleeping() { pgrep -xf "sleep $slp" >/dev/null; } # so that check's ok line is not sent to /dev/null
wait_until 10 sleeping
check "inflight: control: the command runs" sleeping
rm "$SCRATCH/inflight.sock"
stopped inflight "was removed"
rc=0
wait "$client" || rc=$?
check "inflight: its client gets the command's status, ended by SIGTERM (143; got $rc)" test "$rc" = 143
[ "$rc" = 143 ] || diag "$(cat "$SCRATCH/client.err")"
wait_until 10 no_token_procs "sleep $slp"
check "inflight: no process of the command is left" no_token_procs "sleep $slp"
