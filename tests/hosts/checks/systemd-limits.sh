# SPDX-License-Identifier: LGPL-2.1-or-later
# Hosts debian12-root and debian12-user: limits on a systemd host with a
# pure cgroup v2 hierarchy, from a cgroup that holds processes (a service,
# or the user manager's app.slice), as root and as an ordinary user. Each
# limit is a real cgroup in a delegated systemd scope (docs/limits.md), the
# caller's own cgroup is left as it was, and nothing is left behind.
. "$(dirname "$0")/lib.bash"

own=$(sed -n 's/^0:://p' /proc/self/cgroup)
own_dir=/sys/fs/cgroup$own
is "control: pure cgroup v2" "$(stat -fc %T /sys/fs/cgroup)" cgroup2fs
check "control: our own cgroup ($own) is not the root one" test -f "$own_dir/cgroup.type"
type_before=$(cat "$own_dir/cgroup.type")
subtree_before=$(cat "$own_dir/cgroup.subtree_control")
check "control: systemd's manager socket is there" test -S "$([ "$(id -u)" = 0 ] &&
    echo /run/systemd/private || echo "/run/user/$(id -u)/systemd/private")"

scopes() { systemctl $([ "$(id -u)" = 0 ] || echo --user) list-units --all --plain --no-legend \
    'ringfence-*.scope' 2>/dev/null | awk '{ print $1 }'; }
scopes_before=$(scopes)

expect_exit 0 "run --memory 64M --pids 20 --cpu 0.5 runs" \
    rf run --memory 64M --pids 20 --cpu 0.5 --status-json "$SCRATCH/st.json" -- sh -c 'cat /proc/self/cgroup'
OUT=$(cat "$SCRATCH/st.json")
for l in memory pids cpu; do
    is "status: $l is enforced by cgroup v2" "$(jget "j['limits']['$l']['enforced_by']")" cgroup-v2
done
lacks "no rlimit fallback warning" "$ERR" "approximately"
is "our own cgroup is still a $type_before cgroup (not a thread root)" "$(cat "$own_dir/cgroup.type")" "$type_before"
is "our own cgroup's subtree_control is unchanged" "$(cat "$own_dir/cgroup.subtree_control")" "$subtree_before"

# The limits bind: pids.max counts every process of the sandbox.
rf run --pids 20 --status-json "$SCRATCH/st.json" -- \
    sh -c 'for i in $(seq 30); do sleep 3 & done; wait' >/dev/null 2>&1
OUT=$(cat "$SCRATCH/st.json")
is "the pids limit binds: 30 sleeps under --pids 20 hit it" "$(jget "j['pids_limit_hit']")" true
expect_exit 137 "the memory limit binds: 512 MiB under --memory 64M is OOM-killed" \
    rf run --memory 64M -- python3 -c 'b = bytearray(512 << 20); print(len(b))'
contains "...and reported as out of memory" "$ERR" "out of memory"
echo '{"limits": {"require_cgroup": true}}' >"$SCRATCH/req.json"
expect_exit 0 "limits.require_cgroup: true runs here" rf run --memory 64M --config "$SCRATCH/req.json" -- true

# doctor, which probes with run's own code, agrees and names the scope.
expect_exit 0 "doctor --json runs" rf doctor --json
for l in memory pids cpu; do
    is "doctor: $l by cgroup v2" "$(jget "j['cgroup']['limits']['$l']")" cgroup-v2
done
contains "doctor names the delegated systemd scope" "$(jget "j['cgroup']['systemd_scope']")" "/ringfence-"

# Nothing left: the holder exits with ringfence and systemd drops the scope,
# also when ringfence is SIGKILLed in the middle of a run (the keeper then
# kills the sandbox; give it time, the guest may be emulated).
token="rf-hosts-$$-$RANDOM"
"$RINGFENCE" run --memory 64M -- bash -c "exec -a $token sleep 300" &
rfpid=$!
for i in $(seq 100); do pgrep -f -- "^$token" >/dev/null && break; sleep 0.2; done
check "control: the sandboxed sleep runs" pgrep -f -- "^$token"
check "control: a holder keeps the scope while ringfence runs" pgrep -x rf-scope-hold
kill -9 $rfpid
wait $rfpid 2>/dev/null
left() { pgrep -a -f -- "^$token"; pgrep -a -x rf-scope-hold; pgrep -a -x rf-cgroup-keep; }
gone=0
for i in $(seq 300); do
    [ -z "$(left)" ] && [ "$(scopes)" = "$scopes_before" ] && { gone=1; break; }
    sleep 0.1
done
check "SIGKILL of ringfence: no sandbox process, keeper, holder or scope left within 30 s" test $gone = 1
[ $gone = 1 ] || diag "left: $(left | tr '\n' ';') scopes: $(scopes | tr '\n' ' ')"
diag "gone after $((i / 10)).$((i % 10)) s"
is "and no ringfence scope is left after all the runs" "$(scopes)" "$scopes_before"
