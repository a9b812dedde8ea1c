#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The container backend (podman; rootless as an unprivileged user): the
# escape battery against a command that podman runs from the plan's own
# root. What must stay outside stays outside (files beyond the workspace,
# /etc beyond the curated list, the network, capabilities), the limits
# hold, the workspace is writable, exit statuses and signals come through,
# and no container or root directory is left behind: after an exit, a
# timeout, or ringfence itself killed. Each boundary has its host control.
. "$(dirname "$0")/common.bash"

if ! command -v podman >/dev/null 2>&1; then
    skip "backend container" "podman is not installed (apt-get install podman uidmap slirp4netns runc catatonit)"
    exit 0
fi
RF_OPTS=(--backend container)
# A root caller runs as uid 0 without capabilities: refused unless named.
if is_root; then
    expect_exit 125 "root: refused without --accept-weaker" rf plan --backend container -- /bin/true
    contains "the refusal names the reason" "$ERR" "root caller"
    contains "and the fix" "$ERR" "--accept-weaker"
    RF_OPTS+=(--accept-weaker)
fi
rc=0
rf run "${RF_OPTS[@]}" -- /bin/true >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null || rc=$?
if [ "$rc" != 0 ]; then
    skip "backend container" "podman cannot run a container here as $(id -un): $(grep -v warning "$SCRATCH/err" | head -c 300)"
    exit 0
fi
# podman sees containers of this user only (rootless storage is per user).
ours() { podman ps -a --format '{{.Names}}' 2>/dev/null | grep "^ringfence-$1-" || true; }
left_dirs() { find "$RINGFENCE_HOME" -path '*/container/ringfence-*' -prune -print 2>/dev/null; }
has_ours() { [ -n "$(ours "$1")" ]; }
no_ours() { [ -z "$(ours "$1")" ]; }
no_dirs() { [ -z "$(left_dirs)" ]; }

# ── the plan ───────────────────────────────────────────────────────────────
expect_exit 0 "plan --backend container" rf plan "${RF_OPTS[@]}" -- /bin/true
check "the plan shows the podman argv" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
a = d["container"]["argv"]
assert d["backend"] == "container", d["backend"]
for want in ("--rm", "--cap-drop=all", "--security-opt=no-new-privileges", "--network=none", "--read-only"):
    assert want in a, want
assert any(x.startswith("--security-opt=seccomp=/") for x in a), "no seccomp profile"
assert any("Landlock" in c for c in d["cannot"]), d["cannot"]' "$OUT"
expect_exit 125 "no podman on PATH: refused, not replaced" env PATH=/nonexistent "$RINGFENCE" plan --backend container -- /bin/true
contains "the refusal names the tool and the fix" "$ERR" "podman is not installed"

# ── network: allowlist ─────────────────────────────────────────────────────
# podman run by root joins a network namespace of ringfence's whose only way
# out is the proxy; rootless podman and docker cannot, and are refused.
if is_root; then
    mkdir -p "$SCRATCH/www"
    echo "allowed-$TOKEN" >"$SCRATCH/www/hello"
    port=$(free_port)
    /usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$SCRATCH/www" >/dev/null 2>&1 &
    at_exit "kill $! 2>/dev/null"
    wait_until 10 curl -fsS -o /dev/null "http://127.0.0.1:$port/hello" 2>/dev/null
    host_get() { curl -fsS -m 5 "http://127.0.0.1:$port/hello"; }
    check "control: the host's test server answers on the host" host_get
    NETA=(--add-host "svc.test:127.0.0.1" --allow-domain svc.test --allow-port "$port")
    expect_exit 0 "allowlist: plan" rf plan "${RF_OPTS[@]}" "${NETA[@]}" -- /bin/true
    contains "  ... podman joins ringfence's network namespace" "$OUT" "--network=ns:"
    expect_exit 0 "allowlist: an allowed name is reached through the proxy" rf run "${RF_OPTS[@]}" "${NETA[@]}" \
        --status-json "$SCRATCH/net.json" -- curl -fsS -m 10 "http://svc.test:$port/hello" </dev/null
    contains "  ... the content arrived" "$OUT" "allowed-$TOKEN"
    check "  ... the status JSON counts it" python3 -c "import json; n=json.load(open('$SCRATCH/net.json'))['network']; assert n['connections'] == 1 and n['allowed'][0]['host'] == 'svc.test', n"
    expect_exit 22 "allowlist: a name not allowed is refused by the proxy (403)" rf run "${RF_OPTS[@]}" "${NETA[@]}" \
        -- curl -fsS -m 10 "http://other.test:$port/hello" </dev/null
    contains "  ... and reported" "$ERR" "blocked connect to other.test"
    expect_exit 7 "allowlist: a connection that ignores the proxy reaches nothing" rf run "${RF_OPTS[@]}" \
        "${NETA[@]}" -- curl -sS -m 5 --noproxy '*' "http://127.0.0.1:$port/hello" </dev/null
    check "allowlist: no network namespace mount left behind" sh -c "! grep -q ' $RINGFENCE_HOME' /proc/self/mountinfo"
    check "allowlist: no container directory left behind" no_dirs
    pub=$((20000 + RANDOM % 20000))
    cp "$SCRATCH/www/hello" "$WS/hello"
    "$RINGFENCE" run "${RF_OPTS[@]}" --publish "$pub:8000" -- /usr/bin/python3 -m http.server 8000 --bind 127.0.0.1 \
        </dev/null >"$SCRATCH/pub.log" 2>&1 &
    pub_pid=$!
    at_exit "kill $pub_pid 2>/dev/null"
    if wait_until 30 curl -fsS -o /dev/null "http://127.0.0.1:$pub/hello" 2>/dev/null; then
        check "allowlist: --publish reaches the server in the container" curl -fsS -m 5 -o /dev/null "http://127.0.0.1:$pub/hello"
    else
        fail "allowlist: --publish reaches the server in the container"; diag "$(tail -5 "$SCRATCH/pub.log")"
    fi
    kill "$pub_pid" 2>/dev/null
    wait "$pub_pid" 2>/dev/null
    rm -f "$WS/hello"
    check "  ... and the run ends, leaving no directory" no_dirs
    no_dirs || diag "left: $(find $(left_dirs) 2>/dev/null | head -10; grep ringfence /proc/self/mountinfo | head -3)"
else
    expect_exit 125 "network: allowlist is refused for rootless podman" \
        rf plan "${RF_OPTS[@]}" --allow-domain example.com -- /bin/true
    contains "the refusal names the reason" "$ERR" "rootless podman"
fi

# ── files ──────────────────────────────────────────────────────────────────
mkdir -p "$SCRATCH/outside"
echo secret >"$SCRATCH/outside/secret"
chmod 644 "$SCRATCH/outside/secret"
in_denied "a file outside the workspace is invisible" read "$SCRATCH/outside/secret"
host_ok "control: it is readable on the host" read "$SCRATCH/outside/secret"
etc_extra=""
for f in /etc/fstab /etc/debconf.conf /etc/deluser.conf /etc/adduser.conf /etc/login.defs; do
    [ -r "$f" ] && { etc_extra=$f; break; }
done
if [ -n "$etc_extra" ]; then
    in_denied "/etc is curated: $etc_extra is not there" read "$etc_extra"
    host_ok "control: $etc_extra is readable on the host" read "$etc_extra"
else
    skip "/etc is curated" "no readable uncurated /etc file on this host"
fi
in_denied "/etc/shadow is not there" stat /etc/shadow
in_ok "/etc/passwd is there (curated)" read /etc/passwd
in_ok "the workspace is writable" write "$WS/made-inside"
check "the file is on the host, owned by the caller" test -O "$WS/made-inside"
in_denied "/usr is read-only" write /usr/rf-container-test
in_denied "the root is read-only" write /rf-container-test

# ── network, privileges ────────────────────────────────────────────────────
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); time.sleep(120)' "$port" &
listener=$!
at_exit "kill $listener 2>/dev/null"
wait_until 5 "$PROBE" connect-tcp 127.0.0.1 "$port" >/dev/null 2>&1
in_denied "network none: a host listener on loopback is out of reach" connect-tcp 127.0.0.1 "$port"
host_ok "control: it answers on the host" connect-tcp 127.0.0.1 "$port"
OUT=$(rf run "${RF_OPTS[@]}" -- /bin/sh -c 'ls /sys/class/net' 2>/dev/null </dev/null)
check "network none: only loopback" test "$OUT" = lo
saved=("${RF_OPTS[@]}")
RF_OPTS+=(--network host)
in_ok "control: with --network host the listener answers" connect-tcp 127.0.0.1 "$port"
RF_OPTS=("${saved[@]}")
OUT=$(inside status 2>/dev/null </dev/null)
contains "no effective capabilities" "$OUT" "CapEff:	0000000000000000"
contains "no bounding capabilities" "$OUT" "CapBnd:	0000000000000000"
contains "no_new_privs is set" "$OUT" "NoNewPrivs:	1"
in_denied "mounting a tmpfs is denied" mount-tmpfs "$WS"
if is_root; then
    skip "becoming root through setuid fails" "a root caller's command is uid 0 already (the weaker mode accepted above)"
else
    in_denied "becoming root through setuid fails" setuid-root
fi
in_denied "the seccomp filter is in place (keyctl)" syscall keyctl

# ── limits ─────────────────────────────────────────────────────────────────
forks='for i in $(seq 40); do sleep 2 & done 2>&1; wait'
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] && ! is_root; then
    expect_exit 125 "rootless on cgroup v1: a pids limit is refused" rf run "${RF_OPTS[@]}" --pids 20 -- /bin/true
    contains "the refusal says why" "$ERR" "cgroup v1"
else
    OUT=$(rf run "${RF_OPTS[@]}" --pids 20 -- /bin/sh -c "$forks" 2>&1 </dev/null)
    contains "pids limit: forks beyond it fail" "$OUT" "fork"
    expect_exit 0 "control: without the limit all forks succeed" rf run "${RF_OPTS[@]}" -- /bin/sh -c "$forks"
    lacks "control: no fork failed" "$OUT" "fork"
    expect_exit 137 "memory limit: 300 MB in a 64 MB container is killed" rf run "${RF_OPTS[@]}" --memory 64M -- \
        python3 -c 'b = bytearray(300 << 20); b[::4096] = b"x" * len(b[::4096])'
    expect_exit 0 "control: without the limit it completes" rf run "${RF_OPTS[@]}" -- \
        python3 -c 'b = bytearray(300 << 20); b[::4096] = b"x" * len(b[::4096])'
fi

# ── status, signals, leftovers ─────────────────────────────────────────────
expect_exit 7 "the exit status comes through" rf run "${RF_OPTS[@]}" -- /bin/sh -c 'exit 7'
expect_exit 143 "death by a signal comes through as 128+N" rf run "${RF_OPTS[@]}" -- /bin/sh -c 'kill -TERM $$'
expect_exit 127 "a missing command inside: 127" rf run "${RF_OPTS[@]}" -- /bin/sh -c 'no-such-command-rf'
"$RINGFENCE" run "${RF_OPTS[@]}" -- /bin/sleep 60 >/dev/null 2>&1 </dev/null &
rp=$!
wait_until 20 has_ours $rp
check "the container runs under a unique name" has_ours $rp
kill -TERM $rp
rc=0; wait $rp || rc=$?
check "SIGTERM to ringfence ends the command (143)" test "$rc" = 143
check "the container is gone after the exit" no_ours $rp

rc=0; "$RINGFENCE" run "${RF_OPTS[@]}" --timeout 2 -- /bin/sleep 60 >/dev/null 2>"$SCRATCH/err" </dev/null & rp=$!
wait $rp || rc=$?
check "timeout: exit 124" test "$rc" = 124
check "timeout: the container is gone" no_ours $rp

"$RINGFENCE" run "${RF_OPTS[@]}" -- /bin/sleep 60 >/dev/null 2>&1 </dev/null &
rp=$!
wait_until 20 has_ours $rp
check "control: the container runs before ringfence is killed" has_ours $rp
kill -KILL $rp
wait $rp 2>/dev/null
check "ringfence killed: the container is removed" wait_until 30 no_ours $rp
check "no container root directory is left" wait_until 10 no_dirs || diag "left: $(left_dirs)"
