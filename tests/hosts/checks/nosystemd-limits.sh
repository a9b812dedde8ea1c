# SPDX-License-Identifier: LGPL-2.1-or-later
# Host debian12-nosystemd: limits on a pure cgroup v2 host with no systemd
# (tests/hosts/nosystemd-init), run as root from a populated non-root
# cgroup and as alice from the subtrees delegated to her. Each limit must
# be a real cgroup made by ringfence's cgroupfs manager (limits/cgmanager.h):
# for root below /sys/fs/cgroup/ringfence, for alice inside what is hers;
# memory is OOM-killed and reported, pids binds, cpu.max is written, and
# the sandbox's cgroup is gone afterwards (also after a SIGKILL of
# ringfence). Controls: a cgroup not delegated to alice gives her no
# cgroup (rlimits, said so), and our own cgroup is left as it was.
. "$(dirname "$0")/lib.bash"

CG=/sys/fs/cgroup
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
own_dir=$CG$own
is "control: pure cgroup v2" "$(stat -fc %T $CG)" cgroup2fs
check "control: no systemd (pid 1 is $(cat /proc/1/comm))" test "$(cat /proc/1/comm)" != systemd
check "control: no systemd manager socket" test ! -e /run/systemd/private
check "control: we run as root" is_root
check "control: our own cgroup ($own) is not the root one" test -f "$own_dir/cgroup.type"
check "control: our own cgroup holds processes" test -n "$(cat "$own_dir/cgroup.procs")"
type_before=$(cat "$own_dir/cgroup.type")
subtree_before=$(cat "$own_dir/cgroup.subtree_control")
lacks "control: the root cgroup hands no memory down before the first run" \
    "$(cat $CG/cgroup.subtree_control)" memory

# alice's workspace, ringfence home and status files.
AW=$SCRATCH/alice
mkdir -p "$AW/home" && chown -R 1000:1000 "$AW" && chmod 755 "$SCRATCH"
export AW
# as_alice_in DIR CMD...: root puts a shell into the cgroup DIR, which
# becomes alice (no other process comes along) and execs CMD in her
# workspace. A script, not a function: run in the background its pid is
# CMD's.
as_alice_in=$SCRATCH/as-alice-in
cat >"$as_alice_in" <<'SH'
#!/bin/sh
echo $$ >"$1/cgroup.procs" && shift && cd "$AW" &&
    exec setpriv --reuid=1000 --regid=1000 --init-groups \
        env HOME=/home/alice USER=alice LOGNAME=alice RINGFENCE_HOME="$AW/home" "$@"
SH
chmod 755 "$as_alice_in"
# fresh_solo: a new cgroup delegated to alice, empty (once ringfence has
# divided one it takes no process any more: cgroup v2's no-internal-process
# rule).
solo_n=0
fresh_solo() { # sets SOLO
    solo_n=$((solo_n + 1))
    SOLO=$CG/alice-solo-$solo_n
    mkdir -p "$SOLO" &&
        chown 1000:1000 "$SOLO" "$SOLO/cgroup.procs" "$SOLO/cgroup.threads" "$SOLO/cgroup.subtree_control"
}
# sandboxes DIR: the sandbox cgroups (ringfence-PID-N, not the -self leaf)
# left in DIR.
sandboxes() { find "$1" -mindepth 1 -maxdepth 1 -type d -name 'ringfence-*' ! -name '*-self' -printf '%f '; }

# battery LABEL PARENT PREFIX...: the limits battery with `PREFIX ringfence`;
# the sandboxes' cgroups must be made in PARENT (PREFIX may set it up anew
# for each run: "solo" means a fresh_solo cgroup per run).
battery() {
    local label=$1 parent=$2 st=$AW/st-$1.json pre
    shift 2
    # next: the PREFIX of the next run (and its PARENT for "solo").
    next() { if [ "${1:-}" = solo ]; then fresh_solo; parent=$SOLO; pre="$as_alice_in $SOLO"; else pre="$*"; fi; }
    next "$@"
    expect_exit 0 "$label: run --memory 64M --pids 20 --cpu 0.5 runs" \
        $pre "$RINGFENCE" run --memory 64M --pids 20 --cpu 0.5 --status-json "$st" -- true
    OUT=$(cat "$st" 2>/dev/null)
    for l in memory pids cpu; do
        is "$label: status: $l is enforced by cgroup v2" "$(jget "j['limits']['$l']['enforced_by']")" cgroup-v2
    done
    lacks "$label: no rlimit fallback warning" "$ERR" "approximately"
    [ "${1:-}" = solo ] && contains "$label: says that ringfence moved itself into a leaf" "$ERR" "moved ringfence"

    next "$@"
    $pre "$RINGFENCE" run --pids 20 --status-json "$st" -- \
        sh -c 'for i in $(seq 30); do sleep 3 & done; wait' >/dev/null 2>&1
    OUT=$(cat "$st" 2>/dev/null)
    is "$label: the pids limit binds: 30 sleeps under --pids 20 hit it" "$(jget "j['pids_limit_hit']")" true

    next "$@"
    expect_exit 137 "$label: 300 MiB under --memory 64M is OOM-killed" \
        $pre "$RINGFENCE" run --memory 64M --status-json "$st" -- \
        python3 -c 'b = bytearray(300 << 20); print(len(b))'
    contains "$label: ...and reported as out of memory" "$ERR" "out of memory"
    lacks "$label: ...not as Python's MemoryError" "$ERR" "MemoryError"
    OUT=$(cat "$st" 2>/dev/null)
    is "$label: ...and the status says oom_killed" "$(jget "j['oom_killed']")" true

    # The cgroup itself, while a sandbox runs; then SIGKILL of ringfence.
    next "$@"
    local token="rf-nosd-$label-$$" pid="" i cgpath=""
    $pre "$RINGFENCE" run --memory 64M --pids 20 --cpu 0.5 -- bash -c "exec -a $token sleep 300" \
        >/dev/null 2>"$SCRATCH/bg.err" &
    local rfpid=$!
    for i in $(seq 150); do pid=$(pgrep -f -- "^$token" | head -1); [ -n "$pid" ] && break; sleep 0.2; done
    check "$label: control: the sandboxed sleep runs" test -n "$pid"
    [ -n "$pid" ] && cgpath=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
    local dir=$CG$cgpath
    contains "$label: the sandbox's cgroup is in ${parent#$CG}" "$cgpath" "${parent#$CG}/ringfence-"
    is "$label: memory.max" "$(cat "$dir/memory.max" 2>&1)" 67108864
    is "$label: memory.swap.max" "$(cat "$dir/memory.swap.max" 2>&1)" 0
    is "$label: pids.max" "$(cat "$dir/pids.max" 2>&1)" 20
    is "$label: cpu.max (--cpu 0.5)" "$(cat "$dir/cpu.max" 2>&1)" "50000 100000"
    kill -9 $rfpid
    wait $rfpid 2>/dev/null
    local gone=0
    for i in $(seq 300); do
        ! pgrep -f -- "^$token" >/dev/null && [ ! -d "$dir" ] && { gone=1; break; }
        sleep 0.1
    done
    check "$label: SIGKILL of ringfence: the sandbox and its cgroup are gone within 30 s" test $gone = 1
    [ $gone = 1 ] || diag "left: $(pgrep -a -f -- "^$token") $dir $(cat "$SCRATCH/bg.err")"
    is "$label: no sandbox cgroup is left in ${parent#$CG}" "$(sandboxes "$parent")" ""
}

# Root, from /session.scope: the shared intermediate /ringfence.
battery root $CG/ringfence
is "root: our own cgroup is still a $type_before cgroup" "$(cat "$own_dir/cgroup.type")" "$type_before"
is "root: our own cgroup's subtree_control is unchanged" "$(cat "$own_dir/cgroup.subtree_control")" "$subtree_before"
is "root: /ringfence holds no process" "$(cat $CG/ringfence/cgroup.procs)" ""
echo '{"limits": {"require_cgroup": true}}' >"$AW/req.json"
chmod 644 "$AW/req.json"
expect_exit 0 "root: limits.require_cgroup: true runs here" rf run --memory 64M --config "$AW/req.json" -- true
expect_exit 0 "root: doctor --json runs" rf doctor --json
for l in memory pids cpu; do
    is "root: doctor: $l by cgroup v2" "$(jget "j['cgroup']['limits']['$l']")" cgroup-v2
done
is "root: doctor names the cgroup it divides" "$(jget "j['cgroup']['cgroup_manager']")" $CG/ringfence

# alice. Root's subtree_control hands the controllers to her subtree (as
# the guest's init would; ringfence enabled them above already).
echo "+memory +pids +cpu" >$CG/cgroup.subtree_control
battery alice-leaf $CG/user-1000 "$as_alice_in" $CG/user-1000/session
expect_exit 0 "alice-leaf: doctor --json runs" "$as_alice_in" $CG/user-1000/session "$RINGFENCE" doctor --json
for l in memory pids cpu; do
    is "alice-leaf: doctor: $l by cgroup v2" "$(jget "j['cgroup']['limits']['$l']")" cgroup-v2
done
is "alice-leaf: doctor names her delegated cgroup" "$(jget "j['cgroup']['cgroup_manager']")" $CG/user-1000
battery alice-solo "" solo
expect_exit 0 "alice, not delegated: runs" \
    "$as_alice_in" $CG/alice-nodeleg "$RINGFENCE" run --memory 64M -- true
contains "alice, not delegated: falls back to rlimits, said so" "$ERR" "approximately"
contains "alice, not delegated: ...naming why" "$ERR" "not delegated to uid 1000"
is "alice, not delegated: nothing made in the cgroup that is not hers" "$(sandboxes $CG/alice-nodeleg)" ""
expect_exit 125 "alice, not delegated: limits.require_cgroup refuses" \
    "$as_alice_in" $CG/alice-nodeleg "$RINGFENCE" run --memory 64M --config "$AW/req.json" -- true
