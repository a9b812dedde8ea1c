# SPDX-License-Identifier: LGPL-2.1-or-later
# Lifecycle: nothing the command starts outlives the sandbox, whether the
# command ends, the timeout fires, or ringfence itself is SIGKILLed.
# Each leftover would be found by the token in its command line.
. "$(dirname "$0")/common.bash"
at_exit "kill_token_procs '$TOKEN'"

size() { stat -c %s "$1" 2>/dev/null || echo 0; }

# still_growing FILE: did FILE grow over one second? (The writers append
# every 0.1 s, so a live writer always grows it.)
stopped_growing() {
    local a b
    a=$(size "$1")
    sleep 1
    b=$(size "$1")
    [ "$a" = "$b" ]
}

# ── The command ends: its background children end with it ──
expect_exit 0 "a command that leaves a background child behind exits" \
    rf run -- bash -c "(exec -a $TOKEN-orphan sleep 300) &
        for i in \$(seq 100); do pgrep -f ^$TOKEN-orphan && exit; sleep 0.05; done; exit 1"
check "control: the background child was running when the command ended" test -n "$OUT"
check "the orphaned background child is gone when the command ends" \
    wait_until 5 no_token_procs "^$TOKEN-orphan"

# ── The caller's signal dispositions stay outside ──
# A caller that ignores SIGCHLD (some daemons do, so that no zombie is ever
# left) still sees its command end, with its status: init's own SIGCHLD is
# its default again. One that ignores SIGPIPE, SIGQUIT or SIGHUP does not
# hand that on through exec: the command starts with every signal at its
# default (with SIGPIPE ignored, `yes | head -1` ends in "Broken pipe" and
# status 1, and a writer that never checks for errors never ends).
expect_exit 3 "a caller that ignores SIGCHLD, SIGPIPE, SIGQUIT and SIGHUP gets its command's status" \
    timeout 60 python3 -c '
import signal, subprocess, sys
def ignore():
    for s in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
sys.exit(subprocess.run(sys.argv[1:], preexec_fn=ignore, restore_signals=False, timeout=30).returncode)' \
    "$RINGFENCE" run -- sh -c 'grep ^SigIgn /proc/self/status; exit 3'
check "and its command starts with no signal ignored ($OUT)" test "$OUT" = "$(printf 'SigIgn:\t%016d' 0)"

# ── --timeout stops a setsid'd writer ──
out="$WS/out"
expect_exit 124 "--timeout 1 ends a command that would sleep 100 s" \
    rf run --timeout 1 -- sh -c "setsid sh -c 'while :; do : $TOKEN-w; echo x >>$out; sleep 0.1; done' & sleep 100"
check "control: the setsid'd writer did write" test "$(size "$out")" -gt 0
check "no process of the timed-out tree remains" wait_until 5 no_token_procs "$TOKEN-w"
check "the writer's file stops growing after the timeout" stopped_growing "$out"

# ── --timeout stops a double-forked child that ignores SIGTERM ──
expect_exit 124 "--timeout 1 --kill-grace 1 ends a tree with a SIGTERM-ignoring grandchild" \
    rf run --timeout 1 --kill-grace 1 -- bash -c \
    "( (trap '' TERM; echo started >$WS/started; exec -a $TOKEN-dbl sleep 300) & ); sleep 100"
check "control: the double-forked child had started" test -s "$WS/started"
check "the SIGTERM-ignoring double-forked child is gone" wait_until 5 no_token_procs "^$TOKEN-dbl"

# ── SIGKILL of ringfence kills the sandbox ──
marker="$WS/marker"
"$RINGFENCE" run -- bash -c \
    "(exec -a $TOKEN-k sleep 300) & while :; do : $TOKEN-k; echo x >>$marker; sleep 0.1; done" \
    </dev/null >/dev/null 2>&1 &
rfpid=$!
if wait_until 10 test -s "$marker" && wait_until 10 pgrep -f -- "^$TOKEN-k" >/dev/null; then
    pass "control: the sandbox runs, writes its marker and has a background sleep"
    kill -9 "$rfpid"
    wait "$rfpid" 2>/dev/null
    check "after SIGKILL of ringfence, no process of the sandbox remains" wait_until 5 no_token_procs "$TOKEN-k"
    check "the marker file stops growing" stopped_growing "$marker"
else
    fail "control: the sandbox runs, writes its marker and has a background sleep"
    kill -9 "$rfpid" 2>/dev/null
fi

# ── No terminal: SIGINT, SIGTERM, SIGHUP reach every process ──
# As a terminal's Ctrl-C reaches the whole foreground job: sent to the
# command alone, a shell waiting for its child holds SIGINT until the
# child ends, and the child runs on. A three-deep tree, each level a shell
# waiting for the next.
for sig in INT TERM HUP; do
    rm -f "$WS/deep-$sig"
    "$RINGFENCE" run -- sh -c "sh -c 'bash -c \"echo up >$WS/deep-$sig; exec -a $TOKEN-$sig sleep 20\"; echo ran-on'; echo ran-on" \
        </dev/null >"$SCRATCH/deep-out" 2>&1 &
    rfpid=$!
    if wait_until 10 test -s "$WS/deep-$sig" && wait_until 10 pgrep -f -- "^$TOKEN-$sig" >/dev/null; then
        pass "control: a three-deep tree runs (SIG$sig)"
        t0=$(date +%s%N)
        kill -"$sig" "$rfpid"
        rc=0
        wait "$rfpid" || rc=$?
        ms=$((($(date +%s%N) - t0) / 1000000))
        # Ended by the signal, not by the 20 s sleep (the time it took is a
        # note: timings are bench/'s, never a pass/fail bound).
        check "SIG$sig to ringfence ends the three-deep tree at once (took ${ms} ms, exit $rc)" test "$ms" -lt 15000
        check "nothing of the tree is left after SIG$sig" no_token_procs "^$TOKEN-$sig"
        lacks "no shell of the tree ran on after SIG$sig" "$(cat "$SCRATCH/deep-out")" ran-on
    else
        fail "control: a three-deep tree runs (SIG$sig)"
        kill -9 "$rfpid" 2>/dev/null
    fi
done
