#!/usr/bin/env bash
# Limits and lifecycle (issue 5): a fork bomb stops at --pids, a memory hog
# is killed at --memory and reported as out of memory, the timeout ends the
# whole tree, SIGKILL of ringfence leaves no process and no cgroup behind,
# and the status record says what happened. As root the limits come from a
# cgroup; as an unprivileged user from a cgroup where systemd delegates one
# (docs/limits.md), else from rlimits, with a warning that says so.
. "$(dirname "$0")/../lib.sh"

# Which of the two this user gets here: root always a cgroup; anyone else
# what doctor's probe (run's own code) finds.
if is_root; then
    by_cgroup=1
else
    by_cgroup=$(rf doctor --json 2>/dev/null | python3 -c 'import json, sys
l = json.load(sys.stdin)["cgroup"]["limits"] or {}
print(int(all(str(l.get(k)).startswith("cgroup") for k in ("memory", "pids"))))')
fi
diag "limits by $([ "$by_cgroup" = 1 ] && echo cgroup || echo rlimit) for uid $(id -u)"

status_field() { python3 -c "import json,sys; s=json.load(open('$1')); print(eval('s' + sys.argv[1]))" "$2"; }
cgroup_dirs() { find /sys/fs/cgroup -maxdepth 6 -type d -name "ringfence-$1-*" 2>/dev/null; }
wait_gone() { # wait_gone SECONDS CMD...: until CMD prints nothing
    local i
    for ((i = 0; i < $1 * 10; i++)); do [ -z "$("${@:2}")" ] && return 0; sleep 0.1; done
    return 1
}

# ── pids: a fork bomb stops at the limit ──
# The shell forks once, before any bomb runs, then execs its sleep: any
# later fork of its own could find the limit reached ("Cannot fork", exit
# 2; seen in CI when dash forked the pipeline's right half after its left
# half had already filled --pids 64).
expect_exit 124 "fork bomb under --pids 64 is ended by the timeout" \
    rf run --pids 64 --timeout 3 --kill-grace 0.5 --status-json "$SCRATCH/bomb.json" -- \
    sh -c 'bomb() { bomb | bomb & }; bomb & exec sleep 10'
check "the host still forks" sh -c 'for i in 1 2 3 4 5; do /bin/true || exit 1; done'
if [ "$by_cgroup" = 1 ]; then
    [ "$(status_field "$SCRATCH/bomb.json" "['pids_limit_hit']")" = True ] &&
        pass "status: pids_limit_hit" || fail "status: pids_limit_hit"
    [ "$(status_field "$SCRATCH/bomb.json" "['limits']['pids']['enforced_by']")" != rlimit ] &&
        pass "pids enforced by a cgroup" || fail "pids enforced by a cgroup"
else
    contains "no cgroup: the rlimit fallback is announced" "$ERR" "limits.pids"
fi

# ── memory: a 1 GiB allocation under 128M ──
alloc='b = bytearray(1 << 30); print("allocated", len(b))'
expect_exit_any() { local desc=$1; shift; "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null; RC=$?; OUT=$(cat "$SCRATCH/out"); ERR=$(cat "$SCRATCH/err"); }
expect_exit_any "memory hog" rf run --memory 128M --status-json "$SCRATCH/mem.json" -- python3 -c "$alloc"
lacks "the 1 GiB allocation never completes under --memory 128M" "$OUT" "allocated"
[ "$RC" != 0 ] && pass "the memory hog fails (exit $RC)" || fail "the memory hog fails (exit $RC)"
if [ "$by_cgroup" = 1 ]; then
    [ "$RC" = 137 ] && pass "killed by the OOM killer: 128+9" || fail "killed by the OOM killer: 128+9 (got $RC)"
    contains "the reason is on stderr, with the limit" "$ERR" "killed: out of memory (limit 128M)"
    [ "$(status_field "$SCRATCH/mem.json" "['oom_killed']")" = True ] && pass "status: oom_killed" ||
        fail "status: oom_killed"
    peak=$(status_field "$SCRATCH/mem.json" "['peak_memory_bytes']")
    [ "$peak" -le $((130 * 1024 * 1024)) ] && pass "status: peak memory within the limit ($peak)" ||
        fail "status: peak memory within the limit ($peak)"
else
    contains "no cgroup: the limit is announced as approximate" "$ERR" "approximately"
fi
lacks "nothing of ringfence's on stdout" "$OUT" "ringfence"

# ── require_cgroup refuses where only rlimits are possible ──
printf '{"limits": {"memory": "128M", "require_cgroup": true}}\n' > "$SCRATCH/strict.json"
if [ "$by_cgroup" = 1 ]; then
    expect_exit 0 "require_cgroup with a writable cgroup runs" rf run --config "$SCRATCH/strict.json" -- true
else
    expect_exit 125 "require_cgroup without a writable cgroup refuses" rf run --config "$SCRATCH/strict.json" -- true
    contains "the refusal names the setting" "$ERR" "limits.require_cgroup"
fi

# ── the timeout: status record of a killed tree ──
expect_exit 124 "timeout kills a double-forked, setsid'd, SIGTERM-ignoring child" \
    rf run --timeout 1 --kill-grace 0.5 --status-json "$SCRATCH/to.json" -- \
    sh -c '( setsid sh -c "trap \"\" TERM; while :; do sleep 0.1; done" & ) ; trap "" TERM; sleep 30'
for f in exit_code signal timed_out oom_killed pids_limit_hit wall_seconds user_seconds sys_seconds \
    peak_memory_bytes limits; do
    status_field "$SCRATCH/to.json" "['$f']" >/dev/null 2>&1 && pass "status has $f" || fail "status has $f"
done
[ "$(status_field "$SCRATCH/to.json" "['timed_out']")" = True ] && pass "status: timed_out" || fail "status: timed_out"
[ "$(status_field "$SCRATCH/to.json" "['exit_code']")" = 124 ] && pass "status: exit_code 124" ||
    fail "status: exit_code 124"
contains "timeout reason on stderr" "$ERR" "killed: timed out"

# --status-fd: the child's pid first, then the result, as JSON lines.
rf run --status-fd 3 -- sh -c 'exit 3' 3>"$SCRATCH/fd.jsonl"
check "status-fd: first line carries the child pid" python3 -c "
import json; l=open('$SCRATCH/fd.jsonl').read().splitlines(); assert json.loads(l[0])['child-pid'] > 0; assert json.loads(l[1])['exit_code'] == 3"

# ── SIGKILL of ringfence: no process and no cgroup left ──
token="rf-limits-$$-$RANDOM"
# ringfence itself in the background ($! of `rf ... &` would be a subshell),
# and bash: dash's exec has no -a, so the sleep would never have started.
"$RINGFENCE" run --memory 256M --pids 100 -- bash -c "exec -a $token sleep 300" &
rf_pid=$!
if wait_gone 5 sh -c "pgrep -f -- '^$token' >/dev/null || echo missing"; then
    pass "the sandboxed sleep runs (named $token)"
else
    fail "the sandboxed sleep runs (named $token)"
fi
kill -9 "$rf_pid"
wait "$rf_pid" 2>/dev/null
wait_gone 10 pgrep -f -- "$token" && pass "SIGKILL of ringfence: no sandboxed process left" ||
    fail "SIGKILL of ringfence: no sandboxed process left"
if [ "$by_cgroup" = 1 ]; then
    wait_gone 10 cgroup_dirs "$rf_pid" && pass "SIGKILL of ringfence: no cgroup left" ||
        { fail "SIGKILL of ringfence: no cgroup left"; diag "$(cgroup_dirs "$rf_pid")"; }
fi
rf run --memory 64M -- true
check "a normal end leaves no cgroup of ours" test -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "ringfence-$$-*" 2>/dev/null)"

# ── cpu: about a quarter of a CPU (a loose band; skipped when loaded) ──
load=$(cut -d' ' -f1 /proc/loadavg)
if [ "$by_cgroup" != 1 ]; then
    skip "cpu share under --cpu 0.25" "needs a cgroup (none for this user here)"
elif awk "BEGIN { exit !($load > 1.5) }"; then
    skip "cpu share under --cpu 0.25" "load $load too high for a fair measurement"
else
    rf run --cpu 0.25 --timeout 2 --kill-grace 0.2 --status-json "$SCRATCH/cpu.json" -- \
        sh -c 'while :; do :; done' 2>/dev/null
    used=$(status_field "$SCRATCH/cpu.json" "['user_seconds'] + s['sys_seconds']")
    awk "BEGIN { exit !($used > 0.15 && $used < 1.0) }" &&
        pass "cpu share under --cpu 0.25: ${used}s of CPU in 2s" ||
        fail "cpu share under --cpu 0.25: ${used}s of CPU in 2s (want about 0.5)"
fi
