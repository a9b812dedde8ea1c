# SPDX-License-Identifier: LGPL-2.1-or-later
# The warm pool (ringfence serve, run --via): each pre-built sandbox runs
# exactly one command and nothing of one command reaches the next (a file
# in /tmp, a process left running); a request under another policy is
# refused; only the serving uid may use the socket; killing the server
# leaves nothing behind, and so does SIGTERM with commands in flight; 100
# concurrent requests all succeed.
. "$(dirname "$0")/common.bash"
sock="$SCRATCH/pool.sock"

start_server() {
    RF_POOL_SECRET="pool-env-$TOKEN" "$RINGFENCE" serve --socket "$sock" --pool-size 3 "$@" >"$SCRATCH/serve.log" 2>&1 &
    server=$!
    wait_until 10 test -S "$sock" || { fail "ringfence serve starts"; diag "$(cat "$SCRATCH/serve.log")"; exit 0; }
}
start_server
at_exit "kill $server 2>/dev/null"

check "the socket is 0600" test "$(stat -c %a "$sock")" = 600
expect_exit 0 "a command runs through the pool" rf run --via "$sock" -- sh -c 'echo hi; pwd'
contains "its output arrives on our stdout" "$OUT" hi
contains "in our working directory" "$OUT" "$WS"
expect_exit 3 "its exit status comes back" rf run --via "$sock" -- sh -c 'exit 3'
expect_exit 127 "a missing command is 127" rf run --via "$sock" -- no-such-command-here
echo from-stdin | { expect_exit 0 "stdin is ours" rf run --via "$sock" -- cat; }
# init read the request from the sandbox's report channel and started the
# command's process: neither that channel nor the descriptors the request
# carried may reach the command but as its stdio. ls's own: its stdio and
# the directory it reads.
expect_exit 0 "a command lists its descriptors" rf run --via "$sock" -- sh -c 'exec ls /proc/self/fd'
check "it holds its stdio and nothing else of the sandbox's ($(echo $OUT))" test "$(echo $OUT)" = "0 1 2 3"

# The server ignores SIGPIPE (and, started with &, SIGQUIT): its sandboxes
# do not hand that on to their commands.
expect_exit 0 "a command reads its own signal dispositions" rf run --via "$sock" -- grep ^SigIgn /proc/self/status
check "none is ignored ($OUT)" test "$OUT" = "$(printf 'SigIgn:\t%016d' 0)"

# Nothing carried over: /tmp, processes, pid numbering.
left_sleep=60.$$
expect_exit 0 "a command leaves a file in /tmp and a process running" \
    rf run --via "$sock" -- sh -c "echo secret-$TOKEN > /tmp/left; (sleep $left_sleep &) ; echo done"
for i in 1 2 3 4; do # more than the pool's size: every sandbox of it
    expect_exit 0 "the next command ($i) sees a fresh /tmp and no process of the last" \
        rf run --via "$sock" -- sh -c 'ls -A /tmp; ps -e -o comm= | grep -c sleep || true'
    lacks "no file left by another command ($i)" "$OUT" left
    contains "no sleep process of another command ($i)" "$OUT" 0
done
# Found by its own duration (60.PID seconds), not any 'sleep 60' on the
# machine: another run's would count too. ([.]: the pattern does not match
# the command line of the shell that runs pgrep.)
check "no sandboxed sleep of ours survived on the host" sh -c "! pgrep -f 'sleep 60[.]$$' >/dev/null"

# Policy mismatch: refused, never run under the pool's policy.
expect_exit 125 "a request with other options is refused" rf run --via "$sock" --network host -- touch "$WS/ran-anyway"
contains "it says why" "$ERR" "another policy"
contains "it names the setting that differs" "$ERR" "from the server's in network.mode;"
check "and the command did not run" test ! -e "$WS/ran-anyway"
mkdir -p "$SCRATCH/elsewhere"
elsewhere_err=$(cd "$SCRATCH/elsewhere" && "$RINGFENCE" run --via "$sock" -- touch ran 2>&1 >/dev/null)
check "a request from another workspace is refused too" test ! -e "$SCRATCH/elsewhere/ran"
contains "it shows both workspaces" "$elsewhere_err" "workspace (the server's $WS, this request's $SCRATCH/elsewhere)"
# A directory an agent named with escape sequences (clear the screen, set
# the title), run from: the refusal names it, the terminal never gets them.
evil_dir="$SCRATCH/"$'e\e[2J\e]0;pwn\a'
mkdir -p "$evil_dir"
evil_err=$(cd "$evil_dir" && "$RINGFENCE" run --via "$sock" -- true 2>&1 >/dev/null)
contains "a workspace named with escape sequences is shown with '?'" "$evil_err" "this request's $SCRATCH/e?[2J?]0;pwn?)"
check "...and no escape byte reaches the terminal" sh -c "! printf '%s' \"\$1\" | grep -q \"\$(printf '\\033')\"" _ "$evil_err"

# Peer credentials: another uid is refused even when the socket is open to it.
if is_root && id rftest >/dev/null 2>&1; then
    chmod 777 "$SCRATCH" "$sock"
    OUT=$(runuser -u rftest -- env RINGFENCE_HOME="$SCRATCH/rf-other" "$RINGFENCE" run --via "$sock" \
        --workspace "$WS" -- touch "$WS/by-other" 2>&1) || true
    contains "another uid is refused by the server (SO_PEERCRED)" "$OUT" "only the user who started"
    check "and nothing ran" test ! -e "$WS/by-other"
    chmod 600 "$sock"
else
    skip "another uid is refused (SO_PEERCRED)" "needs root and the rftest user"
fi

# Malformed requests, as any process of ours could send them: each is
# refused with "malformed request", runs nothing, and leaves no descriptor
# behind in the server (descriptors it did not ask for are closed).
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
fds_before=$(fds_of "$server")
python3 - "$sock" "$WS" >"$SCRATCH/abuse.out" 2>&1 <<'PY'
import array, os, socket, struct, sys
sock, ws = sys.argv[1], sys.argv[2]
def req(argv, key=b"k", cwd=ws.encode()):
    return b"RFP1" + key + b"\0" + cwd + b"\0" + b"".join(a + b"\0" for a in argv)
def req2(argv, streams, term=b"xterm", size=(24, 80, 0, 0)):  # with a pty (wire.h)
    return b"RFP2" + bytes([streams]) + struct.pack("<4H", *size) + term + b"\0" + req(argv)[4:]
touch = [b"/usr/bin/touch", (ws + "/abused").encode()]
cases = {
    "one fd": (req(touch), 1), "five fds": (req(touch), 5), "no fds": (req(touch), 0),
    "no magic": (b"XXXX" + req(touch)[4:], 3), "no final NUL": (req(touch)[:-1], 3),
    "no argv": (req([]), 3), "1025 arguments": (req([b"/usr/bin/touch"] * 1025), 3),
    "a pty on stdin and three fds": (req2(touch, 1), 3), "a pty on stdin and one fd": (req2(touch, 1), 1),
    "a pty on every stream and one fd": (req2(touch, 7), 1), "a pty on no stream": (req2(touch, 0), 3),
    "a pty on stream 3": (req2(touch, 8), 2), "a pty whose TERM holds a newline": (req2(touch, 1, b"x\ny"), 2),
    "a pty and a cut head": (req2(touch, 1)[:9], 2),
    # Control: well-formed, huge window and all: parsed, then refused for its key.
    "a pty on stdin and two fds": (req2(touch, 1, size=(65535, 65535, 65535, 65535)), 2),
}
for name, (msg, nfds) in cases.items():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    fds = [os.open("/dev/null", os.O_RDWR) for _ in range(nfds)]
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    s.sendmsg([msg], anc)
    for fd in fds:
        os.close(fd)
    answer = s.recv(65536)
    print(name, "->", answer[:1].decode(), answer[1:].decode(errors="replace"))
    s.close()
PY
for c in "one fd" "five fds" "no fds" "no magic" "no final NUL" "no argv" "1025 arguments" \
    "a pty on stdin and three fds" "a pty on stdin and one fd" "a pty on every stream and one fd" \
    "a pty on no stream" "a pty on stream 3" "a pty whose TERM holds a newline" "a pty and a cut head"; do
    contains "a request with $c is refused as malformed" "$(cat "$SCRATCH/abuse.out")" "$c -> E malformed request"
done
contains "control: a pty request with the right count (and a 65535 window) is parsed, refused only for its key" \
    "$(cat "$SCRATCH/abuse.out")" "a pty on stdin and two fds -> E this pool serves another policy"
check "none of them ran anything" test ! -e "$WS/abused"
wait_until 5 test "$(fds_of "$server")" -le "$fds_before"
check "the server holds no descriptor more than before them ($fds_before, now $(fds_of "$server"))" \
    test "$(fds_of "$server")" -le "$fds_before"
expect_exit 0 "a well-formed request after them is served" rf run --via "$sock" -- true

# A pty through the pool (docs/terminal.md; the terminal side is
# tests/security/terminal.py): with no terminal, --pty gives the command a
# pty relayed to our pipes. It holds the pty and our stderr, nothing of
# the sandbox's (no master, no report channel), and the server keeps no
# copy of the master once passed on.
OUT=$(echo typed | "$RINGFENCE" run --via "$sock" --pty -- sh -c 'tty; read -r l; echo "got:$l"' 2>&1) || true
contains "run --via --pty: the command's stdin is a pty" "$OUT" "/dev/pts/0"
contains "and input reaches it through the relay" "$OUT" "got:typed"
"$RINGFENCE" run --via "$sock" --pty -- sh -c 'ls /proc/self/fd >&2; [ -t 0 ] && [ -t 1 ] && [ ! -t 2 ] && tty >&2' \
    </dev/null >/dev/null 2>"$SCRATCH/ptyfds"
check "a pty command holds its stdio and nothing else ($(echo $(head -4 "$SCRATCH/ptyfds")))" \
    test "$(echo $(head -4 "$SCRATCH/ptyfds"))" = "0 1 2 3"
check "its stdin and stdout are the pty, its stderr ours ($(tail -1 "$SCRATCH/ptyfds"))" \
    test "$(tail -1 "$SCRATCH/ptyfds")" = /dev/pts/0
ptys_of() { find "/proc/$1/fd" -lname '*ptmx*' 2>/dev/null | wc -l; }
check "the server holds no pty master after them ($(ptys_of "$server"))" test "$(ptys_of "$server")" = 0

# A client that goes away mid-run (no terminal here): its sandbox is hung
# up, SIGHUP to every process (the command's trap runs), and nothing is
# left; before, it was killed outright.
# The client is killed only once the command has set its trap (it says so
# in a file) and its sleep runs: "pgrep -f 'sleep N'" alone also matches
# the client's and the shell's own command lines, and a client killed
# before the trap was set made a failure of a hang-up that worked (seen
# under ASan, where the start is slower).
slp="27$$.5"
# A function, so that check's own ok line is not sent to /dev/null too.
sleeping() { pgrep -f "^sleep $slp\$" >/dev/null; }
"$RINGFENCE" run --via "$sock" -- \
    sh -c "trap 'echo hup > \"$WS/hup\"; exit 1' HUP; : > \"$WS/trapped\"; sleep $slp & wait" \
    </dev/null >/dev/null 2>&1 &
client=$!
wait_until 10 test -e "$WS/trapped"
wait_until 5 pgrep -f "^sleep $slp\$" >/dev/null
check "control: the command set its trap and its child runs" sleeping
kill -9 "$client"
wait "$client" 2>/dev/null
wait_until 5 no_token_procs "sleep $slp"
check "the client killed mid-run: nothing of its sandbox is left" no_token_procs "sleep $slp"
# The sleep dies of the hang-up at once; the shell's trap may write a moment
# later (ASan, a loaded machine): wait for it, up to the grace and more.
wait_until 5 test -e "$WS/hup"
check "and it was hung up first (SIGHUP: the command's trap ran)" test -e "$WS/hup"
# One that ignores the hang-up is killed a second later.
"$RINGFENCE" run --via "$sock" -- sh -c "trap '' HUP; : > \"$WS/ignoring\"; sleep $slp" \
    </dev/null >/dev/null 2>&1 &
client=$!
wait_until 10 test -e "$WS/ignoring"
wait_until 5 pgrep -f "^sleep $slp\$" >/dev/null
kill -9 "$client"
wait "$client" 2>/dev/null
sleep 0.5
check "control: a command that ignores SIGHUP outlives the hang-up" sleeping
wait_until 5 no_token_procs "sleep $slp"
check "and is killed after the grace: nothing left" no_token_procs "sleep $slp"

# 100 concurrent requests.
for i in $(seq 100); do
    "$RINGFENCE" run --via "$sock" -- sh -c "echo ok-$i" >"$SCRATCH/c$i.out" 2>&1 &
done
wait_all() { for j in $(jobs -p); do [ "$j" = "$server" ] || wait "$j"; done; }
wait_all
okn=$(cat "$SCRATCH"/c*.out | grep -c '^ok-')
check "100 concurrent requests all succeed ($okn)" test "$okn" = 100
[ "$okn" = 100 ] ||
    diag "$(cat "$SCRATCH"/c*.out | grep -v '^ok-' | sort | uniq -c | sort -rn | head -5)" "$(tail -5 "$SCRATCH/serve.log")"

# A config file change rebuilds the pool (its policy then changes).
echo '{"limits": {"timeout": 577}}' >"$WS/.ringfence.json"
sleep 2.5
expect_exit 0 "after an edit of the workspace configuration, requests with it are served" \
    rf run --via "$sock" -- true
contains "the server said it rebuilt" "$(cat "$SCRATCH/serve.log")" "rebuilding"
# A request made right after an edit, before the server's periodic check:
# its key is the new configuration's, which the server checks for then.
echo '{"limits": {"timeout": 578}}' >"$WS/.ringfence.json"
expect_exit 0 "a request right after an edit is served, not refused for the server's lag" \
    rf run --via "$sock" -- true
rm -f "$WS/.ringfence.json"
expect_exit 0 "a request right after the file's removal is served" rf run --via "$sock" -- true

# The user's files are watched too, where XDG_CONFIG_HOME puts them: an
# "always" answer (answers.yaml, written by --ask) changes the policy of
# every later run (a server that missed it refused all of them), and so
# does an edit of the user's config or of a profile the server was given.
xdg="$SCRATCH/xdg"
mkdir -p "$xdg/ringfence/profiles"
printf '# mine: a test profile\nlimits: { timeout: 533 }\n' >"$xdg/ringfence/profiles/mine.yaml"
xdg_rf() { XDG_CONFIG_HOME=$xdg "$RINGFENCE" "$1" --profile mine "${@:2}"; }
# ringfence itself in the background, not xdg_rf: $! of a function run
# with & is the subshell running it, and killing that left the server
# running, reparented to init, its ready sandbox with it (issue 46).
XDG_CONFIG_HOME=$xdg "$RINGFENCE" serve --profile mine --socket "$SCRATCH/xdg.sock" --pool-size 1 \
    >"$SCRATCH/xdg.log" 2>&1 &
xdg_server=$!
at_exit "kill $xdg_server 2>/dev/null"
wait_until 10 test -S "$SCRATCH/xdg.sock"
printf 'network:\n  allow_domains:\n    - "answered.test:443"\n' >"$xdg/ringfence/answers.yaml"
expect_exit 0 "a request after an \"always\" answer is served (answers.yaml is watched)" \
    xdg_rf run --via "$SCRATCH/xdg.sock" -- true
sleep 1.5 # the server's periodic check
contains "the server rebuilt for the answer" "$(cat "$SCRATCH/xdg.log")" "rebuilding"
echo '{"limits": {"kill_grace": 1.5}}' >"$xdg/ringfence/config.json"
expect_exit 0 "a request after an edit of \$XDG_CONFIG_HOME/ringfence/config.json is served" \
    xdg_rf run --via "$SCRATCH/xdg.sock" -- true
printf '# mine: a test profile\nlimits: { timeout: 534 }\n' >"$xdg/ringfence/profiles/mine.yaml"
expect_exit 0 "a request after an edit of the server's --profile is served" \
    xdg_rf run --via "$SCRATCH/xdg.sock" -- true
rebuilds=$(grep -c rebuilding "$SCRATCH/xdg.log")
check "one rebuild for each of the three edits ($rebuilds)" test "$rebuilds" = 3
[ "$rebuilds" = 3 ] || diag "$(cat "$SCRATCH/xdg.log")"
kill "$xdg_server"
wait "$xdg_server" 2>/dev/null
check "SIGTERM to that server: it is gone, not left running" no_token_procs "serve --profile mine --socket $SCRATCH/xdg.sock"

# A ready sandbox's init is a copy of the server: once built, it gives the
# server's memory back (backend/native/shed.c). Neither the server's
# environment nor an earlier request's words are left in it. Read as
# root: the command itself cannot read its init (not dumpable).
sleep 1
if ldd "$RINGFENCE" 2>/dev/null | grep -qE 'lib(a|t)san'; then
    skip "a ready init holds none of the server's memory" "a sanitizer build keeps the copy (its shadow memory is anonymous too)"
elif is_root; then
    expect_exit 0 "a command whose words hold a secret runs" rf run --via "$sock" -- sh -c ": req-$TOKEN"
    sleep 1.5 # the pool refills: forks of a server that has seen that request
    found=$(python3 - "$server" "pool-env-$TOKEN" "req-$TOKEN" <<'PY'
import os, re, sys
server, secrets = sys.argv[1], [s.encode() for s in sys.argv[2:]]
hits, inits = set(), 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1] != server:
            continue
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", 0)
    except OSError:
        continue
    inits += 1
    for line in maps:
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if line.split()[1][0] != "r" or "[vsyscall]" in line:
            continue
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except OSError:
            continue
        hits.update(s.decode() for s in secrets if s in data)
print(f"{inits} ready inits read; found: {' '.join(sorted(hits)) or 'nothing'}")
PY
)
    contains "the ready sandboxes' inits could be read" "$found" "ready inits read"
    lacks "no ready init holds the server's environment ($found)" "$found" "pool-env-$TOKEN"
    lacks "no ready init holds an earlier request's words ($found)" "$found" "req-$TOKEN"
else
    skip "a ready init holds none of the server's memory" "reading another process's memory needs root"
fi

# Killing the server leaves nothing: no sandbox process, no socket user.
pids_before=$(pgrep -P "$server" | wc -l)
check "the server keeps its ready sandboxes ($pids_before)" test "$pids_before" -ge 1
kill -9 "$server"
wait "$server" 2>/dev/null
sleep 1
left=$(pgrep -f "ringfence serve --socket $sock" | wc -l)
check "SIGKILL of the server: its ready sandboxes die with it" \
    sh -c "! ps -eo ppid=,comm= | awk '\$1 == $server' | grep -q ."
check "no server process left" test "$left" = 0

# SIGTERM to a server with commands in flight: each command is ended as
# `ringfence run` ends its own on SIGTERM, its client gets that status, and
# the server reaps every sandbox (in flight and ready) before it exits.
# Watched from a subreaper: a sandbox left for the host's init to reap (a
# zombie, holding its user and pid namespaces) would become ours.
slp="28$$.5"
stopped=$(python3 - "$RINGFENCE" "$SCRATCH/stop.sock" "$slp" <<'PY'
import ctypes, os, signal, subprocess, sys, time
rf, sock, slp = sys.argv[1:]
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
null = open(os.devnull, "r+b")

def until(pred, seconds):
    end = time.monotonic() + seconds
    while not pred() and time.monotonic() < end:
        time.sleep(0.05)
    return pred()

def sleeps():
    n = 0
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            n += open(f"/proc/{p}/cmdline", "rb").read() == f"sleep\0{slp}\0".encode()
        except OSError:
            pass
    return n

log = open(sock + ".log", "w+b")
serve = subprocess.Popen([rf, "serve", "--socket", sock, "--pool-size", "2"], stdin=null, stdout=log, stderr=log)
until(lambda: os.path.exists(sock), 30)
clients = [subprocess.Popen([rf, "run", "--via", sock, "--", "sleep", slp], stdin=null, stdout=log, stderr=log)
           for _ in range(3)]
running = until(lambda: sleeps() == 3, 30)
serve.send_signal(signal.SIGTERM)
serve.wait(30)
codes = sorted(c.wait(30) for c in clients)
adopted = 0
while True:  # its sandboxes, had it left them: zombies or alive, ours now
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        kids = [k for t in os.listdir("/proc/self/task") for k in open(f"/proc/self/task/{t}/children").read().split()]
        adopted += len(kids)
        for k in kids:
            os.kill(int(k), signal.SIGKILL)
        os.waitpid(-1, 0)
        continue
    adopted += 1
print(f"in-flight={running} serve={serve.returncode} clients={codes} adopted={adopted} sleeps={sleeps()} "
      f"socket={os.path.exists(sock)}")
log.seek(0)
for line in log.read().decode(errors="replace").splitlines()[:8]:
    print(f"log: {line}")
PY
)
case $stopped in *"in-flight=True serve=0 clients=[143, 143, 143] adopted=0 sleeps=0 socket=False"*) ;;
    *) diag "$stopped" ;; esac
contains "control: three commands were in flight through a new server" "$stopped" "in-flight=True"
contains "SIGTERM to the server: it exits 0" "$stopped" "serve=0 "
contains "each client gets its command's status: ended by SIGTERM (143)" "$stopped" "clients=[143, 143, 143]"
contains "the server reaped every sandbox: none is left to another process" "$stopped" "adopted=0 "
contains "no sandboxed sleep is left" "$stopped" "sleeps=0 "
contains "the socket file is removed" "$stopped" "socket=False"

# Each command in flight holds a few descriptors in the server: it raises
# its soft open-files limit to the hard one, so a user's usual soft limit
# (1024; 64 here, for a small count) does not cap the commands in flight.
slp="29$$.5"
prlimit --nofile=64:4096 -- "$RINGFENCE" serve --socket "$SCRATCH/nofile.sock" --pool-size 2 \
    >"$SCRATCH/nofile.log" 2>&1 &
nofile_server=$!
at_exit "kill $nofile_server 2>/dev/null"
wait_until 10 test -S "$SCRATCH/nofile.sock"
for i in $(seq 12); do
    "$RINGFENCE" run --via "$SCRATCH/nofile.sock" -- sleep "$slp" </dev/null >/dev/null 2>>"$SCRATCH/nofile.err" &
done
count_sleeps() { pgrep -xf "sleep $slp" | wc -l; }
wait_until 30 test "$(count_sleeps)" -ge 12
check "12 commands in flight through a server started with a soft limit of 64 descriptors ($(count_sleeps))" \
    test "$(count_sleeps)" = 12
[ -s "$SCRATCH/nofile.err" ] && diag "$(sort "$SCRATCH/nofile.err" | uniq -c | head -3)"
kill -TERM "$nofile_server"
wait "$nofile_server" 2>/dev/null
wait_until 10 test "$(count_sleeps)" = 0
check "SIGTERM to that server: none of them is left" test "$(count_sleeps)" = 0
