#!/usr/bin/env bash
# The system audit log (docs/audit.md, "A system-wide log"): `ringfence
# audit-daemon` receives every run's records over a unix socket and
# chains them into a log only its (root) owner can read or write. A
# record carries the sender's uid as the kernel gives it, whatever the
# sender wrote; junk and oversized messages are refused without breaking
# the chain; an edited log fails `audit verify --system`; a boundary that
# requires the log refuses a run that cannot reach it; the socket is not
# reachable from inside a sandbox; SIGTERM ends the daemon with 0.
# The daemon runs on a scratch socket and log (--socket, --log) and the
# boundary comes from RINGFENCE_TEST_MANAGED (test-hook builds only): the
# test never touches /run, /var/log or /etc. As an ordinary user the
# daemon needs the test hook RINGFENCE_TEST_AUDIT_DAEMON_ANY_USER=1.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"

U=${RF_TEST_USER:-rftest}
SYS="$SCRATCH/sys"           # the socket's directory (not the workspace)
LOGD="$SCRATCH/syslog"       # the daemon's log directory
LOG="$LOGD/audit.log"
SOCK="$SYS/audit.sock"
mkdir -p "$SYS" "$SCRATCH/managed"
chmod 755 "$SYS" "$SCRATCH/managed"
boundary="$SCRATCH/managed/managed.yaml"
set_boundary() { # SOCKET REQUIRED
    printf 'system_audit: {socket: "%s", required: %s}\n' "$1" "$2" >"$boundary"
    chmod 644 "$boundary"
}
set_boundary "$SOCK" true
export RINGFENCE_TEST_MANAGED="$boundary"
export RINGFENCE_TEST_AUDIT_DAEMON_ANY_USER=1

daemon_pid=
start_daemon() {
    # Not through rf(): $! must be the daemon itself, not a subshell.
    "$RINGFENCE" audit-daemon --socket "$SOCK" --log "$LOG" >/dev/null 2>>"$SCRATCH/daemon.err" &
    daemon_pid=$!
    wait_until 10 test -S "$SOCK"
}
stop_daemon() {
    [ -n "$daemon_pid" ] || return 0
    kill -TERM "$daemon_pid" 2>/dev/null
    local rc=0
    wait "$daemon_pid" || rc=$?
    daemon_pid=
    return $rc
}
at_exit 'stop_daemon'
fails() { ! "$@" 2>/dev/null; }
# seq_connect PATH: connect a SOCK_SEQPACKET socket (the daemon's kind; the
# probe's connect-unix is a stream) and say so; python3 is the system's,
# visible inside a sandbox as on the host.
seq_connect_py='import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("denied:", e); sys.exit(1)'

# sendmsg [PYTHON-BYTES...]: each argument one message on one connection.
sendmsg() {
    python3 - "$SOCK" "$@" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
for m in sys.argv[2:]:
    s.send(eval(m))
s.close()
PYEOF
}
# field_of EVENT FIELD-PATH: the last record of EVENT, its field (a.b), from the system log.
field_of() {
    rf audit show --system --log "$LOG" --json --event "$1" |
        python3 -c 'import json,sys
recs = [json.loads(l) for l in sys.stdin if l.strip()]
v = recs[-1] if recs else {}
for k in sys.argv[1].split("."): v = v.get(k, {}) if isinstance(v, dict) else {}
print(v if v != {} else "")' "$2"
}

start_daemon
if [ -z "$daemon_pid" ] || ! kill -0 "$daemon_pid" 2>/dev/null; then
    skip "the system audit log" "the daemon did not start: $(head -c 300 "$SCRATCH/daemon.err") (an ordinary user needs a test-hook build)"
    exit 0
fi
check "the daemon listens on its socket" test -S "$SOCK"
check "...its log directory is 0750 and its owner's" test "$(stat -c %a "$LOGD")" = 750 -a -O "$LOGD"

# A run lands in the system log, stamped with the caller's real uid.
marker="$WS/ran-$TOKEN"
expect_exit 0 "a run with the daemon up" rf run --status-json "$SCRATCH/st.json" -- sh -c "touch $marker"
check "...ran" test -e "$marker"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' "$SCRATCH/st.json")
expect_exit 0 "its records are in the system log" rf audit show --system --log "$LOG" --json --sandbox "$id"
contains "...its run.start" "$OUT" '"event":"run.start"'
contains "...its run.end" "$OUT" '"event":"run.end"'
check "...stamped with the caller's uid ($(id -u)) as peer.uid" test "$(field_of run.start peer.uid)" = "$(id -u)"
check "...and the receive time" test -n "$(field_of run.start time)"
check "...and the hash of the user trail's record" test "$(field_of run.start user_hash | wc -c)" = 65
expect_exit 0 "control: the same records are in the user's own trail" rf audit show --json --sandbox "$id"
contains "...run.start there too" "$OUT" '"event":"run.start"'

# A sender that claims someone else in peer is stored as who it is.
sendmsg "b'{\"event\":\"forged.claim\",\"peer\":{\"uid\":4242,\"gid\":4242,\"pid\":1}}'"
wait_until 5 sh -c "'$RINGFENCE' audit show --system --log '$LOG' --event forged.claim | grep -q forged"
check "a record whose sender claims uid 4242 in peer is stored with the real uid" \
    test "$(field_of forged.claim peer.uid)" = "$(id -u)"

# Junk: refused, recorded as refused, and the chain goes on whole.
sendmsg "b'not json at all'" "b'{\"event\":\"big\",\"pad\":\"' + b'a' * 70000 + b'\"}'" \
    "b'[1,2]'" "b'{\"event\":\"after.junk\"}'"
wait_until 5 sh -c "'$RINGFENCE' audit show --system --log '$LOG' --event after.junk | grep -q after.junk"
expect_exit 0 "rf audit show --system lists the refusals" rf audit show --system --log "$LOG" --json --event audit.refused
contains "...a non-JSON message refused" "$OUT" "not JSON"
contains "...an oversized one refused" "$OUT" "too large (70"
contains "...a JSON non-record refused" "$OUT" "not a record"
lacks "...the oversized one's body is not stored" "$(cat "$LOG")" "aaaaaaaaaaaaaaaa"
check "...the record after them landed" test -n "$(field_of after.junk peer.uid)"
expect_exit 0 "the system log verifies after junk" rf audit verify --system --log "$LOG"
contains "...intact" "$OUT" "intact:"

# Another user: a run of theirs is stamped with their uid; they cannot read
# or write the log nor its head. (Root only: the test becomes that user.)
as_user() { runuser -u "$U" -- env RINGFENCE_TEST_MANAGED="$boundary" RINGFENCE_HOME="$SCRATCH/uhome" PATH="$PATH" "$@"; }
if ! is_root; then
    skip "another user's run is stamped with their uid" "needs root to become $U"
    skip "another user cannot read or write the system log" "here the log is this user's own (the daemon runs as them)"
elif ! id "$U" >/dev/null 2>&1 || ! as_user "$RINGFENCE" --help >/dev/null 2>&1; then
    skip "another user's run is stamped with their uid" "no user $U, or it cannot run $RINGFENCE (run from a world-readable copy)"
    skip "another user cannot read or write the system log" "as above"
else
    uid=$(id -u "$U")
    uws="$SCRATCH/uws"; mkdir -p "$uws" "$SCRATCH/uhome"; chown "$U:" "$uws" "$SCRATCH/uhome"
    expect_exit 0 "a run of $U" as_user sh -c "cd '$uws' && '$RINGFENCE' run -- true"
    check "...is in the system log with peer.uid $uid" sh -c "'$RINGFENCE' audit show --system --log '$LOG' --json --event run.start | grep -q '\"peer\":{\"uid\":$uid,'"
    expect_exit 0 "$U claims uid 0 in peer" as_user python3 -c "
import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect('$SOCK')
s.send(b'{\"event\":\"forged.root\",\"peer\":{\"uid\":0,\"gid\":0,\"pid\":1}}')"
    wait_until 5 sh -c "'$RINGFENCE' audit show --system --log '$LOG' --event forged.root | grep -q forged"
    check "...stored with $U's uid $uid" test "$(field_of forged.root peer.uid)" = "$uid"
    expect_exit 125 "$U cannot read the system log (audit show --system)" as_user "$RINGFENCE" audit show --system --log "$LOG"
    check "$U cannot read the log file" fails as_user cat "$LOG"
    check "$U cannot read the head" fails as_user cat "$LOGD/head"
    check "$U cannot append to the log" fails as_user sh -c "printf x >> '$LOG'"
    check "$U cannot rewrite the head" fails as_user sh -c "printf x > '$LOGD/head'"
    check "$U cannot list the log's directory" fails as_user ls "$LOGD"
    check "...the log is 0600 and root's" test "$(stat -c '%a %u' "$LOG" "$LOGD/head" | sort -u)" = "600 0"
    expect_exit 125 "$U cannot start the daemon without the test hook" \
        runuser -u "$U" -- env -u RINGFENCE_TEST_AUDIT_DAEMON_ANY_USER "$RINGFENCE" audit-daemon --socket "$SYS/u.sock" --log "$SCRATCH/ulog/audit.log"
    contains "...naming why" "$ERR" "must run as root"
    expect_exit 0 "control: root reads the log" rf audit verify --system --log "$LOG"
fi

# One uid cannot take every connection: its 17th is refused (recorded),
# while another uid still gets in.
python3 - "$SOCK" "$SCRATCH/conns-ready" <<'PYEOF' &
import socket, sys, time
held = []
for i in range(17):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); held.append(s)
    s.send(b'{"event":"conn.hold"}')
open(sys.argv[2], "w").close()
time.sleep(60)
PYEOF
holder=$!
at_exit "kill $holder 2>/dev/null"
wait_until 10 test -e "$SCRATCH/conns-ready"
wait_until 10 sh -c "'$RINGFENCE' audit show --system --log '$LOG' --event audit.refused | grep -q 'too many connections of this uid'"
expect_exit 0 "a uid's 17th connection is refused and recorded" rf audit show --system --log "$LOG" --event audit.refused
contains "...naming why" "$OUT" "too many connections of this uid"
check "...its first 16 were taken" test "$(rf audit show --system --log "$LOG" --event conn.hold | wc -l)" = 16
if is_root && id "$U" >/dev/null 2>&1 && as_user true 2>/dev/null; then
    expect_exit 0 "...while another uid still gets in" as_user python3 -c "$seq_connect_py" "$SOCK"
else
    skip "...while another uid still gets in" "needs root and user $U"
fi
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# One uid over its rate is not read until it has tokens again; another
# uid's record lands meanwhile. (No timing is judged: only that the other
# record arrives while the flood is still unread.)
if is_root && id "$U" >/dev/null 2>&1 && as_user true 2>/dev/null; then
    python3 - "$SOCK" "$SCRATCH/flood-done" <<'PYEOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.settimeout(0.5)
sent, end = 0, time.time() + 20
# Past the burst (2000): then the daemon reads this uid at its rate only,
# and the sends block on a full socket.
while sent < 4000 and time.time() < end:
    try:
        s.send(b'{"event":"flood.x"}'); sent += 1
    except socket.timeout:
        break
    if sent % 100 == 0:
        open(sys.argv[2], "w").write(str(sent))
time.sleep(30)
PYEOF
    flooder=$!
    at_exit "kill $flooder 2>/dev/null"
    wait_until 20 sh -c "test \"\$(cat '$SCRATCH/flood-done' 2>/dev/null || echo 0)\" -ge 2500"
    as_user python3 -c "
import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect('$SOCK')
s.send(b'{\"event\":\"other.user\"}')"
    wait_until 20 sh -c "'$RINGFENCE' audit show --system --log '$LOG' --event other.user | grep -q other.user"
    flooded=$(rf audit show --system --log "$LOG" --event flood.x | wc -l)
    check "another uid's record lands while a flooding uid waits" \
        sh -c "'$RINGFENCE' audit show --system --log '$LOG' --event other.user | grep -q other.user"
    diag "the flooding uid had sent $(cat "$SCRATCH/flood-done") (past the burst of 2000) when the other uid sent one; $flooded floods were logged once that one landed"
    kill "$flooder" 2>/dev/null; wait "$flooder" 2>/dev/null
else
    skip "another uid's record lands while a flooding uid waits" "needs root and user $U"
fi

# The per-uid bucket bounds bytes, not only records: a record costs a
# token for each 4 KiB it holds, so 60 KiB records (each accepted: under
# the 64 KiB cap) from one uid for 4 s land at most ~(2000 + 4 x 200) / 16
# of them, a few MiB, where 200 records a second of any size let through
# the whole burst (2000 x 60 KiB). A daemon of its own, so the uid's
# bucket is fresh.
"$RINGFENCE" audit-daemon --socket "$SYS/bytes.sock" --log "$SCRATCH/byteslog/audit.log" \
    >/dev/null 2>>"$SCRATCH/daemon.err" &
bytes_daemon=$!
at_exit "kill $bytes_daemon 2>/dev/null"
wait_until 10 test -S "$SYS/bytes.sock"
python3 - "$SYS/bytes.sock" <<'PYEOF' >"$SCRATCH/bytes.out"
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.setblocking(False)
rec = json.dumps({"event": "big.x", "pad": "p" * (60 << 10)}).encode()
sent, end = 0, time.time() + 4
while time.time() < end:
    try:
        s.send(rec); sent += 1
    except BlockingIOError:
        time.sleep(0.01)
print(sent)
PYEOF
sleep 1
big=$(rf audit show --system --log "$SCRATCH/byteslog/audit.log" --event big.x | wc -l)
check "60 KiB records from one uid for 4 s: at most 400 logged (got $big of $(cat "$SCRATCH/bytes.out") sent)" \
    test "$big" -le 400
check "control: some were logged" test "$big" -ge 50
kill "$bytes_daemon" 2>/dev/null; wait "$bytes_daemon" 2>/dev/null

# Socket activation (systemd's protocol, LISTEN_FDS/LISTEN_PID, fd 3),
# through systemd-socket-activate where it is installed.
if command -v systemd-socket-activate >/dev/null; then
    systemd-socket-activate --seqpacket -l "$SYS/act.sock" -E RINGFENCE_TEST_AUDIT_DAEMON_ANY_USER \
        "$RINGFENCE" audit-daemon --log "$SCRATCH/actlog/audit.log" >/dev/null 2>"$SCRATCH/act.err" &
    act=$!
    at_exit "kill $act 2>/dev/null"
    wait_until 10 test -S "$SYS/act.sock"
    python3 -c "
import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect('$SYS/act.sock')
s.send(b'{\"event\":\"activated\"}')"
    wait_until 10 test -s "$SCRATCH/actlog/audit.log"
    check "socket activation: the daemon takes the socket systemd passed" grep -q '"event":"activated"' "$SCRATCH/actlog/audit.log"
    rc=0; kill -TERM "$act"; wait "$act" || rc=$?
    check "...and exits 0 on SIGTERM" test "$rc" = 0
else
    skip "socket activation" "systemd-socket-activate is not installed"
fi

# From inside a sandbox the socket cannot be reached (it is not there).
expect_exit 1 "the daemon's socket cannot be reached from inside a sandbox" \
    rf run -- python3 -c "$seq_connect_py" "$SOCK"
contains "...denied" "$OUT" "denied:"
expect_exit 0 "control: it can be reached outside" python3 -c "$seq_connect_py" "$SOCK"
expect_exit 0 "control: and from a sandbox whose workspace holds it" \
    rf run --workspace "$SYS" -- python3 -c "$seq_connect_py" "$SOCK"
# The machine's socket lives in /run, which a sandbox does not see at all.
host_run=$(ls -A /run 2>/dev/null | head -n 1)
if [ -n "$host_run" ]; then
    expect_exit 0 "the host's /run is not visible inside a sandbox" rf run -- sh -c "test ! -e '/run/$host_run'"
else
    skip "the host's /run inside a sandbox" "the host's /run is empty: nothing to look for"
fi
if [ -S /run/ringfence/audit.sock ]; then
    expect_exit 1 "the machine's daemon socket cannot be reached from inside" \
        rf run -- python3 -c "$seq_connect_py" /run/ringfence/audit.sock
else
    skip "the machine's daemon socket from inside" "no /run/ringfence/audit.sock on this host"
fi

# An edited system log fails verify --system, naming the record.
cp -a "$LOGD" "$SCRATCH/edited"
n=$(grep -n '"event":"forged.claim"' "$SCRATCH/edited/audit.log" | head -n 1 | cut -d: -f1)
sed -i "${n}s/\"forged.claim\"/\"harmless\"/" "$SCRATCH/edited/audit.log"
expect_exit 1 "an edited system log fails audit verify --system" rf audit verify --system --log "$SCRATCH/edited/audit.log"
contains "...naming the record" "$ERR" "record $n: its hash does not match"
expect_exit 125 "--log without --system is refused" rf audit verify --log "$LOG"
expect_exit 0 "audit path --system" rf audit path --system
contains "...prints the system log's path" "$OUT" "/var/log/ringfence/audit.log"

# SIGTERM: exit 0, nothing left, its socket gone.
pid=$daemon_pid
rc=0; stop_daemon || rc=$?
check "the daemon exits 0 on SIGTERM" test "$rc" = 0
check "...and is gone" sh -c "! kill -0 $pid 2>/dev/null"
check "...its socket removed" test ! -e "$SOCK"
expect_exit 0 "...its start and stop are in the chain" rf audit show --system --log "$LOG" --event daemon.
contains "...daemon.start" "$OUT" "daemon.start"
contains "...daemon.stop" "$OUT" "daemon.stop"
expect_exit 0 "...and the log verifies" rf audit verify --system --log "$LOG"

# Required and no daemon: refused before anything runs, naming the socket and the fix.
rm -f "$marker"
starts_before=$(rf audit show --event run.start --json 2>/dev/null | grep -c '"run.start"')
expect_exit 125 "a required system log that cannot be reached refuses the run" rf run -- sh -c "touch $marker"
check "...nothing ran" test ! -e "$marker"
contains "...naming the socket" "$ERR" "$SOCK"
contains "...and the fix" "$ERR" "systemctl enable --now ringfence-audit.socket"
starts_after=$(rf audit show --event run.start --json 2>/dev/null | grep -c '"run.start"')
check "...refused before it started: no run.start in the user's trail ($starts_before then $starts_after)" \
    test "$starts_after" = "$starts_before"
expect_exit 0 "...'ringfence plan' still shows the plan (the daemon is needed to run, not to plan)" rf plan -- true
# Not required: a warning, and the run goes on.
set_boundary "$SOCK" false
expect_exit 0 "a system log that is not required: the run goes on without it" rf run -- sh -c "touch $marker"
check "...it ran" test -e "$marker"
contains "...with a warning naming the socket" "$ERR" "cannot be reached"
# Control: required, with the daemon back, it runs.
set_boundary "$SOCK" true
start_daemon
rm -f "$marker"
expect_exit 0 "control: required, the daemon up: it runs" rf run -- sh -c "touch $marker"
check "...it ran" test -e "$marker"
# The boundary's own checks: a policy cannot turn the trail off under it.
expect_exit 125 "audit: false is beyond a boundary with system_audit" env RINGFENCE_AUDIT=false "$RINGFENCE" run -- true
printf 'system_audit: {sockets: "/x"}\n' >"$boundary"
expect_exit 125 "a malformed system_audit refuses every run" rf run -- true
contains "...naming the setting" "$ERR" "system_audit"
# Required, and the daemon gone while a run lives: the record it cannot
# take fails what it records (here run.end: exit 125 naming it), as an
# unwritable user trail does; the user's own trail keeps the outcome.
set_boundary "$SOCK" true
rm -f "$WS/up3"
rf run -- sh -c 'echo up >up3; sleep 3' >/dev/null 2>"$SCRATCH/gone.err" &
gone_run=$!
wait_until 20 test -s "$WS/up3" && pass "control: the run started with the daemon up" ||
    fail "control: the run started with the daemon up"
kill -9 "$daemon_pid"; wait "$daemon_pid" 2>/dev/null; daemon_pid=
rc=0; wait "$gone_run" || rc=$?
check "the daemon killed under a required log: the run's end is refused (exit $rc, want 125)" test "$rc" = 125
contains "...naming the record the daemon did not take" "$(cat "$SCRATCH/gone.err")" "did not take the run.end record"
expect_exit 0 "...and the user's own trail has the run's end" rf audit show --event run.end --json
check "...with the command's exit status" python3 -c "import json, sys
r = [json.loads(l) for l in sys.argv[1].splitlines() if l.strip()][-1]
assert r['exit_code'] == 0, r" "$OUT"
stop_daemon || true

# The daemon's own socket path: a killed daemon's socket is taken over by
# the next one; a live daemon's, or a file that is not a socket, never.
# (timeout: a daemon wrongly started would run until killed, failing at 124.)
check "control: the killed daemon left its socket behind" test -S "$SOCK"
start_daemon
# start_daemon's wait saw the old socket: wait for the new daemon to answer.
answers() { kill -0 "$daemon_pid" && python3 -c "$seq_connect_py" "$SOCK" >/dev/null; }
wait_until 10 answers
check "a new daemon takes over the socket a killed one left (it answers there)" answers
expect_exit 125 "a second daemon on a live daemon's socket is refused" \
    timeout 20 "$RINGFENCE" audit-daemon --socket "$SOCK" --log "$SCRATCH/second/audit.log"
contains "...saying another daemon answers there" "$ERR" "answered by another daemon"
check "...and the first still serves" answers
stop_daemon || true
echo mine >"$SYS/plain"
expect_exit 125 "a daemon whose --socket is a plain file is refused" \
    timeout 20 "$RINGFENCE" audit-daemon --socket "$SYS/plain" --log "$SCRATCH/plain/audit.log"
contains "...naming it" "$ERR" "not a socket"
check "...and the file is left as it was" test "$(cat "$SYS/plain")" = mine
