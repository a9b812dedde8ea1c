# SPDX-License-Identifier: LGPL-2.1-or-later
# Processes: the host's are invisible and unkillable from inside; the
# sandbox has its own pid 1 and its own session, away from the caller's
# terminal.
. "$(dirname "$0")/common.bash"

# ── Host processes ──
sleep 300 &
hp=$!
at_exit "kill $hp 2>/dev/null"
host_ok "control: the host's sleep (pid $hp) can be signalled from the host" kill "$hp"
in_denied "the host's sleep is not in /proc inside" stat "/proc/$hp"
in_denied "the host's sleep cannot be signalled from inside" kill "$hp"
contains "signalling it finds no such process (ESRCH), not just no permission" "$OUT" ESRCH
in_denied "the caller (pid $$) cannot be signalled from inside" kill "$$"
check "the host's sleep is still alive" kill -0 "$hp"
expect_exit 0 "list /proc inside" rf run -- sh -c 'ls /proc'
pids=$(grep -E '^[0-9]+$' <<<"$OUT" | sort -n | tr '\n' ' ')
check "inside, /proc lists only the sandbox's few processes (saw: $pids)" \
    test "$(grep -cE '^[0-9]+$' <<<"$OUT")" -le 4 -a "$(grep -E '^[0-9]+$' <<<"$OUT" | sort -n | tail -1)" -le 10

# ── pid 1 is ringfence's init, the command is pid 2 ──
in_ok "probe status runs" status
contains "the command is pid 2, child of pid 1" "$OUT" "pid=2 ppid=1"
expect_exit 0 "read pid 1's name and parent inside" rf run -- sh -c 'cat /proc/1/comm; grep ^PPid: /proc/1/status'
contains "pid 1 is ringfence's init" "$OUT" ringfence
contains "pid 1 has no parent inside the namespace" "$OUT" $'PPid:\t0'
in_denied "init cannot be ptraced by the command" ptrace 1
expect_exit 0 "control: the command can ptrace its own child" \
    rf run --expose "$PROBE" -- sh -c "\"$PROBE\" ptrace \$\$"
contains "control: ptrace of the shell from its child works" "$OUT" ok

# ── A new session ──
contains "the command's session is led inside the sandbox (sid=1)" "$(inside status </dev/null 2>&1)" "sid=1 "
"$RINGFENCE" run -- bash -c "exec -a $TOKEN sleep 60" </dev/null >/dev/null 2>&1 &
rfpid=$!
at_exit "kill $rfpid 2>/dev/null"
if wait_until 10 pgrep -f -- "^$TOKEN" >/dev/null; then
    sp=$(pgrep -f -- "^$TOKEN" | head -1)
    in_sid=$(ps -o sid= -p "$sp" | tr -d ' ')
    my_sid=$(ps -o sid= -p $$ | tr -d ' ')
    check "seen from the host, the command's session ($in_sid) is not the caller's ($my_sid)" \
        test -n "$in_sid" -a "$in_sid" != "$my_sid"
    uidline=$(grep ^Uid: "/proc/$sp/status")
    if is_root && [ "${RF_TEST_BACKEND:-native}" = native ] && ! root_contained; then
        # ringfence's init holds its signalfd and its report channel,
        # nothing else: no copy of what the setup opened (the network
        # namespace's helper shares its descriptor table).
        ip=$(ps -o ppid= -p "$sp" | tr -d ' ')
        init_fds=$(ls -l "/proc/$ip/fd" 2>/dev/null | awk 'NR > 1 { print $NF }' | tr '\n' ' ')
        check "init holds only its signalfd and report channel (host view: $init_fds)" \
            test "$(wc -w <<<"$init_fds")" -eq 2 -a -n "$(grep -o 'signalfd' <<<"$init_fds")"
    fi
    if root_contained; then
        # Accepted by name (--accept-weaker): the plan says so.
        skip "root caller: no uid of the command is host root" "a contained root, its uid 0 mapped (accept_weaker)"
    elif is_root; then
        # bubblewrap run as root keeps host root, which can still write
        # host-wide sysctls through /proc/sys: never map to 0.
        check "root caller: no uid of the command is host root (host view: $uidline)" \
            awk '{ for (i = 2; i <= 5; i++) if ($i == 0) bad = 1 } END { exit bad }' <<<"$uidline"
    else
        check "the command runs as the caller's uid on the host ($uidline)" \
            test "$(awk '{print $3}' <<<"$uidline")" = "$(id -u)"
    fi
else
    fail "the sandboxed sleep started"
    fail "seen from the host, the command's session is not the caller's"
fi
kill "$rfpid" 2>/dev/null
wait "$rfpid" 2>/dev/null

# TIOCSTI: with a terminal, the command must not be able to push input
# into it (the caller's shell would run it). Needs script(1) for a pty and
# a kernel that still allows TIOCSTI at all.
if command -v script >/dev/null && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 1 ]; then
    ctl=$(script -qec "\"$PROBE\" tiocsti" /dev/null </dev/null 2>&1)
    if [[ $ctl == *ok* ]]; then
        pass "control: TIOCSTI works on a terminal outside the sandbox"
        got=$(script -qec "\"$RINGFENCE\" run --expose \"$PROBE\" -- \"$PROBE\" tiocsti" /dev/null </dev/null 2>&1)
        contains "TIOCSTI into the caller's terminal is denied inside" "$got" "denied:"
    else
        skip "control: TIOCSTI works on a terminal outside the sandbox" "no TIOCSTI here: $ctl"
        skip "TIOCSTI into the caller's terminal is denied inside" "no TIOCSTI here"
    fi
else
    skip "TIOCSTI into the caller's terminal is denied inside" "no script(1) or TIOCSTI disabled"
fi

# A terminal on stdin that is no one's controlling terminal (a harness's
# pty): setsid alone does not help, the command can make it its own
# controlling terminal and then push input into it for whoever reads next.
if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)" = 1 ]; then
    rc=0
    ctl=$("$PROBE" pty-run "$PROBE" steal-tty 2>&1 </dev/null) || rc=$?
    if [ "$rc" = 0 ]; then
        pass "control: on the host, input can be pushed into a pty given as stdin"
        rc=0
        got=$("$PROBE" pty-run "$RINGFENCE" run --expose "$PROBE" -- "$PROBE" steal-tty 2>&1 </dev/null) || rc=$?
        if [ "$rc" = 1 ]; then pass "no input can be pushed into a pty given as stdin from inside"
        else fail "no input can be pushed into a pty given as stdin from inside"; diag "exit $rc: ${got:0:400}"; fi
    else
        skip "no input can be pushed into a pty given as stdin from inside" "control failed: $ctl"
    fi
else
    skip "no input can be pushed into a pty given as stdin from inside" "TIOCSTI disabled on this kernel"
fi
