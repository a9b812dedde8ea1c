# SPDX-License-Identifier: LGPL-2.1-or-later
# Network and IPC: the host's loopback listeners, abstract unix sockets,
# SysV IPC objects and POSIX shared memory are out of reach; loopback
# inside the sandbox works; --network host is the explicit way back.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"

# ── Host loopback TCP ──
"$PROBE" serve-tcp >"$SCRATCH/port" 2>&1 </dev/null &
tcp_pid=$!
at_exit "kill $tcp_pid 2>/dev/null"
if wait_until 10 grep -qsE '^[0-9]+$' "$SCRATCH/port"; then
    port=$(cat "$SCRATCH/port")
    host_ok "control: the host listener on 127.0.0.1:$port is reachable from the host" connect-tcp 127.0.0.1 "$port"
    in_denied "the host listener on 127.0.0.1:$port is unreachable from inside" connect-tcp 127.0.0.1 "$port"
    RF_OPTS=(--network host)
    in_ok "control: with --network host it is reachable" connect-tcp 127.0.0.1 "$port"
    RF_OPTS=()
else
    fail "a loopback listener starts on the host"; diag "$(cat "$SCRATCH/port")"
fi
in_ok "loopback inside the sandbox works (listen and connect on 127.0.0.1)" loopback-tcp
expect_exit 0 "the sandbox has only a loopback interface" rf run -- cat /proc/net/dev
check "no interface but lo in /proc/net/dev" \
    test "$(tail -n +3 <<<"$OUT" | awk -F: '{gsub(/ /, "", $1); print $1}' | grep -cvx lo)" = 0
# Each sandbox has a network namespace of its own (made by a helper of the
# setup child while the mounts are built, and joined before the command
# starts): two at once, each holding its namespace open, never share one,
# nor the host's.
# The first holds its namespace until the second has read its own: it has
# printed it, then waits on a FIFO in the workspace that the test opens
# once the second is done (bounded: a first that never starts fails the
# check, not the run).
mkfifo -m 666 "$WS/ns-gate"
rf run -- sh -c 'readlink /proc/self/ns/net; read x <ns-gate' >"$SCRATCH/ns1" 2>/dev/null &
ns_pid=$!
for _ in $(seq 300); do [ -s "$SCRATCH/ns1" ] && break; kill -0 $ns_pid 2>/dev/null || break; sleep 0.1; done
ns2=
[ -s "$SCRATCH/ns1" ] && ns2=$(rf run -- readlink /proc/self/ns/net 2>/dev/null)
timeout 10 sh -c 'echo >"$1"' sh "$WS/ns-gate" || kill $ns_pid 2>/dev/null
wait $ns_pid
rm -f "$WS/ns-gate"
ns1=$(cat "$SCRATCH/ns1")
host_ns=$(readlink /proc/self/ns/net)
check "two sandboxes at once have two network namespaces (${ns1:-?} ${ns2:-?}), neither the host's" \
    test -n "$ns1" -a -n "$ns2" -a "$ns1" != "$ns2" -a "$ns1" != "$host_ns" -a "$ns2" != "$host_ns"

# ── No network namespace to be had: refused, never the host's network ──
# ringfence as root of a user namespace of its own (root inside is host uid
# 100000) whose limit on network namespaces is 0, as on a host or in a
# container that forbids them: the start must fail with the step and the
# setting to change, and the command must not run. (The native backend's
# own check: the batteries run this script against the others.)
if is_root && [ "${RF_TEST_BACKEND:-native}" = native ]; then
    nsws=$(mktemp -d /tmp/rf-netns-limit.XXXXXX)
    at_exit "rm -rf '$nsws'"
    chown 100000:100000 "$nsws" && chmod 755 "$nsws"
    in_limited() { /usr/bin/python3 "$HERE/netns-limit.py" 100000 sh -c "cd '$nsws' && RINGFENCE_HOME='$nsws/.rf' \"\$0\" run $* -- echo ran-inside" "$RINGFENCE"; }
    expect_exit 125 "no network namespace may be made: run refuses (125)" in_limited
    contains "the refusal names the step" "$ERR" "step 'network namespace'"
    contains "and the setting to change" "$ERR" "user.max_net_namespaces"
    check "the command did not run" test -z "$OUT"
    expect_exit 125 "there, the allowlist (its namespace made in clone3) is refused too" \
        in_limited --allow-domain example.com
    contains "that refusal names the setting" "$ERR" "user.max_net_namespaces"
    check "that command did not run" test -z "$OUT"
    expect_exit 0 "control: there, --network host runs" in_limited --network host
    check "control: that command ran" test "$OUT" = ran-inside
else
    skip "no network namespace to be had: run refuses" "needs root (to map a user namespace's ids) and the native backend"
fi

# ── Host abstract unix socket ──
abstract="rf-sec-$TOKEN"
"$PROBE" serve-abstract "$abstract" >"$SCRATCH/abstract" 2>&1 </dev/null &
abs_pid=$!
at_exit "kill $abs_pid 2>/dev/null"
if wait_until 10 grep -q listening "$SCRATCH/abstract"; then
    host_ok "control: the host's abstract socket @$abstract is reachable from the host" connect-abstract "$abstract"
    in_denied "the host's abstract socket is unreachable from inside" connect-abstract "$abstract"
    # Sharing the host's network does not open host IPC: Landlock's scoping
    # (ABI 6+) still keeps abstract sockets (D-Bus, X11, ...) out of reach.
    # With Landlock off, the shared namespace makes it reachable: that shows
    # which layer holds.
    RF_OPTS=(--network host)
    if [ "$(rf plan -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["landlock"]["abi"])')" -ge 6 ]; then
        in_denied "with --network host, Landlock scoping still keeps the host's abstract socket out" \
            connect-abstract "$abstract"
    fi
    RF_OPTS=(--network host --landlock off)
    in_ok "control: with --network host and Landlock off it is reachable" connect-abstract "$abstract"
    RF_OPTS=()
else
    fail "an abstract socket listener starts on the host"; diag "$(cat "$SCRATCH/abstract")"
fi

# ── Host SysV IPC ──
# A key of our own (the pid keeps parallel runs apart); the objects are
# removed at exit even when a test fails.
for kind in shm msg; do
    key=$(printf '0x52%02x%04x' "$([ $kind = shm ] && echo 1 || echo 2)" $(($$ & 0xffff)))
    if id=$("$PROBE" ipc-create "$kind" "$key" 2>&1); then
        flag=$([ $kind = shm ] && echo -m || echo -q)
        at_exit "ipcrm $flag $id 2>/dev/null"
        host_ok "control: the host's SysV $kind $key is found on the host" ipc "$kind" "$key"
        in_denied "the host's SysV $kind $key is invisible inside" ipc "$kind" "$key"
        contains "it does not exist there (ENOENT), not just forbidden" "$OUT" ENOENT
        ipcrm "$flag" "$id"
    else
        fail "create a SysV $kind on the host"; diag "$id"
    fi
done

# ── Host POSIX message queue ──
mq="/rf-sec-$TOKEN"
if "$PROBE" mq-create "$mq" >/dev/null 2>&1; then
    at_exit "'$PROBE' mq-unlink '$mq' >/dev/null 2>&1"
    host_ok "control: the host's POSIX message queue $mq opens on the host" mq "$mq"
    in_denied "the host's POSIX message queue is invisible inside" mq "$mq"
    contains "it does not exist there (ENOENT), not just forbidden" "$OUT" ENOENT
    "$PROBE" mq-unlink "$mq" >/dev/null 2>&1
else
    skip "the host's POSIX message queue is invisible inside" "cannot create one here"
    skip "it does not exist there (ENOENT), not just forbidden" "cannot create one here"
fi

# ── Host POSIX shared memory (/dev/shm) ──
shmfile="/dev/shm/rf-sec-$TOKEN"
if echo secret >"$shmfile" 2>/dev/null; then
    at_exit "rm -f '$shmfile'"
    chmod 644 "$shmfile"
    host_ok "control: the host's /dev/shm object is readable on the host" read "$shmfile"
    in_denied "the host's /dev/shm object is invisible inside" read "$shmfile"
    rm -f "$shmfile"
else
    skip "the host's /dev/shm object is invisible inside" "cannot write /dev/shm"
fi

# ── Host unix sockets by path: /run and /var are not there at all ──
in_denied "/run is absent inside" stat /run
in_denied "/var is absent inside" stat /var
for sock in /run/dbus/system_bus_socket /var/run/docker.sock /run/systemd/private /tmp/.X11-unix/X0; do
    if [ -S "$sock" ]; then
        in_denied "the host socket $sock is unreachable" stat "$sock"
    fi
done

# ── Hostname (UTS namespace) ──
host_name=$(uname -n)
is_root && at_exit "[ \"\$(uname -n)\" = '$host_name' ] || hostname '$host_name'"
expect_exit 0 "uname -n inside" rf run -- uname -n
# A container's seccomp filter refuses sethostname even in a UTS namespace
# of one's own (podman's and docker's default without CAP_SYS_ADMIN); the
# sandbox then keeps the container's name (docs/containers.md).
if [ "$(unshare --user --map-root-user --uts sh -c 'hostname rf-uts-ctl && uname -n' 2>/dev/null)" != rf-uts-ctl ]; then
    skip "the hostname inside is 'ringfence'" "sethostname is refused here even in a new UTS namespace (a container's seccomp filter)"
else
    check "the hostname inside is 'ringfence', not the host's" test "$OUT" = ringfence
fi
newname="rf-evil-$$"
inside sethostname "$newname" >"$SCRATCH/out" 2>&1 </dev/null
inside nested sethostname "$newname" >>"$SCRATCH/out" 2>&1 </dev/null
diag "sethostname inside: $(tr '\n' ' ' <"$SCRATCH/out")"
check "the host's hostname is unchanged after sethostname inside" test "$(uname -n)" = "$host_name"
