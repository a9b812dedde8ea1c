#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --backend auto, none and landlock: what the plan says, what stderr says,
# the refusals (exit 125 with the setting and the fix), and the runner
# types of the compatibility readers. The fallback of auto is checked where
# the native backend really cannot run: inside bwrap with user namespaces
# switched off or /proc masked, and nested in ringfence's landlock backend.
. "$(dirname "$0")/../lib.sh"

pj() { python3 -c "import json,sys; p=json.load(open('$SCRATCH/p.json')); $1"; }
plan_to() { rf plan "$@" >"$SCRATCH/p.json" 2>"$SCRATCH/err"; local rc=$?; ERR=$(cat "$SCRATCH/err"); return $rc; }

# ── none ──
check "none: plan" plan_to --backend none -- true
check "none: backend none" pj 'assert p["backend"]=="none"'
check "none: no namespaces, mounts or rules" pj 'assert p["namespaces"]==[] and p["mounts"]==[] and p["landlock"]["rules"]==[]'
check "none: Landlock and seccomp off" pj 'assert p["landlock"]["mode"]=="off" and p["seccomp"]["profile"]=="off"'
check "none: the plan says what is missing" pj 'assert any("no filesystem isolation" in c for c in p["cannot"])'
check "none: a warning in the plan" pj 'assert any("WITHOUT a sandbox" in w for w in p["warnings"])'
contains "none: a warning on stderr" "$ERR" "warning: backend none: the command runs WITHOUT a sandbox"
expect_exit 7 "none: the command's exit code" rf run --backend none -- sh -c 'exit 7'
contains "none: the run warns too" "$ERR" "WITHOUT a sandbox"
expect_exit 137 "none: killed by SIGKILL -> 137" rf run --backend none -- sh -c 'kill -9 $$'
expect_exit 124 "none: timeout -> 124" rf run --backend none --timeout 0.5 -- sleep 30
out=$(RF_NONE_SECRET=x rf run --backend none -- env 2>/dev/null)
lacks "none: the environment is cleaned" "$out" "RF_NONE_SECRET"
mkdir -p "$WS/sub"
out=$(cd "$WS/sub" && rf run --backend none -- pwd 2>/dev/null)
[ "$out" = "$WS/sub" ] && pass "none: the working directory" || fail "none: the working directory ($out)"

# ── landlock ──
expect_exit 125 "landlock: the default policy is refused" rf plan --backend landlock -- true
contains "landlock: refusal says what it cannot honour" "$ERR" "backend landlock cannot honour this policy"
contains "landlock: ... the private /tmp" "$ERR" "/tmp cannot be a private mount"
contains "landlock: ... names the setting" "$ERR" "accept_weaker"
contains "landlock: ... and the fix" "$ERR" "--accept-weaker"
lacks "landlock: nothing on stdout when refused" "$OUT" "{"
mkdir -p "$SCRATCH/d"
expect_exit 125 "landlock: an expose with another target is refused" rf plan --backend landlock --expose "$SCRATCH/d:/elsewhere" -- true
contains "landlock: ... naming it" "$ERR" "expose $SCRATCH/d:/elsewhere cannot be remapped"
if plan_to --backend landlock --accept-weaker --expose "$SCRATCH/d:/elsewhere" -- true; then
    pass "landlock: --accept-weaker accepts the remapped expose"
    check "landlock: ... seen at its source" pj "assert {'path':'$SCRATCH/d','access':'read-execute'} in p['landlock']['rules']"
    contains "landlock: ... with a warning" "$ERR" "cannot be remapped"
else
    fail "landlock: --accept-weaker accepts the remapped expose"; diag "$ERR"
fi
expect_exit 125 "landlock: with --landlock off it is refused" rf plan --backend landlock --accept-weaker --landlock off -- true
contains "landlock: ... pointing at backend none" "$ERR" "--backend none"
if plan_to --backend landlock --accept-weaker -- true; then
    pass "landlock: plan with --accept-weaker"
    check "landlock: backend landlock" pj 'assert p["backend"]=="landlock"'
    check "landlock: no namespaces, no mounts" pj 'assert p["namespaces"]==[] and p["mounts"]==[]'
    check "landlock: the cannot list" pj 'assert any("host processes stay visible" in c for c in p["cannot"]) and any("no private /tmp mount" in c for c in p["cannot"])'
    check "landlock: workspace rule read-write" pj "assert {'path':'$WS','access':'read-write'} in p['landlock']['rules']"
    check "landlock: /usr read-execute" pj "assert {'path':'/usr','access':'read-execute'} in p['landlock']['rules']"
    check "landlock: no rule on the host's /tmp" pj "assert not any(r['path']=='/tmp' for r in p['landlock']['rules'])"
    check "landlock: no rule on / or /home" pj "assert not any(r['path'] in ('/','/home','/root') for r in p['landlock']['rules'])"
    check "landlock: /etc/ssl/private masked" pj "assert not any(r['path'].startswith('/etc/ssl/private') or r['path']=='/etc/ssl' for r in p['landlock']['rules'])"
    check "landlock: TCP and IP sockets denied" pj 'assert p["seccomp"]["deny_inet_sockets"] and (p["landlock"]["abi"]<4 or p["landlock"]["tcp_denied"])'
    contains "landlock: the accepted weakness is a warning" "$ERR" "weaker sandbox accepted (accept_weaker)"
    if is_root; then
        check "landlock: root runs as map_root_to" pj 'assert p["identity"]["uid"]==65534 and p["identity"]["host_uid"]==65534'
    else
        check "landlock: a user runs as itself" pj "assert p['identity']['uid']==$(id -u)"
    fi
else
    fail "landlock: plan with --accept-weaker"; diag "$ERR"
fi
if plan_to --backend landlock --accept-weaker --share-tmp -- true; then
    check "landlock: --share-tmp grants the host's /tmp" pj "assert {'path':'/tmp','access':'read-write'} in p['landlock']['rules']"
    check "landlock: ... and the plan says so" pj 'assert any("share_tmp" in c for c in p["cannot"])'
    contains "landlock: ... with a warning" "$ERR" "the host's /tmp is shared"
else
    fail "landlock: plan with --share-tmp"; diag "$ERR"
fi
plan_to --backend landlock --accept-weaker --network host -- true
check "landlock: network host, no TCP rule" pj 'assert not p["landlock"]["tcp_denied"] and not p["seccomp"]["deny_inet_sockets"]'
echo '{"backend": "landlock", "accept_weaker": true}' >"$SCRATCH/ll.json"
check "landlock: from a config file" plan_to --config "$SCRATCH/ll.json" -- true
check "landlock: ... says where it was set" pj 'assert "ll.json" in (p["backend_reason"] or "")'
if is_root; then
    echo '{"backend": "landlock", "accept_weaker": true, "map_root_to": 0}' >"$SCRATCH/root0.json"
    expect_exit 125 "landlock: map_root_to 0 is refused for a root caller" rf plan --config "$SCRATCH/root0.json" -- true
    contains "landlock: ... naming it" "$ERR" "map_root_to is 0"
    mkdir -m 700 "$SCRATCH/closed"
    expect_exit 125 "landlock: a workspace uid 65534 cannot enter is refused" rf plan --backend landlock --accept-weaker --workspace "$SCRATCH/closed" -- true
    contains "landlock: ... with the fix" "$ERR" "--map-root-to"
fi

# ── auto ──
rf doctor --json >"$SCRATCH/doctor.json" 2>/dev/null
doctor_auto=$(python3 -c "import json; print(json.load(open('$SCRATCH/doctor.json'))['auto_backend'])")
if plan_to --backend auto --accept-weaker -- true; then
    got=$(pj 'print(p["backend"])')
    [ "$got" = "$doctor_auto" ] && pass "auto: picks what doctor says ($got)" || fail "auto: picks $got, doctor says $doctor_auto"
    check "auto: the plan says why" pj 'assert p["backend_reason"].startswith("auto: ")'
    if [ "$got" = native ]; then
        lacks "auto: no warning when native works" "$ERR" "warning: backend auto"
        expect_exit 0 "auto: runs" rf run --backend auto -- true
    fi
else
    fail "auto: plan"; diag "$ERR"
fi

bw() { bwrap --dev-bind / / "$@"; }
auto_in() { # LABEL WHY WRAPPER ARGS...: auto must fall back to landlock inside WRAPPER ARGS
    local label=$1 why=$2; shift 2
    if [ "$1" = masked_proc ]; then
        masked_proc_ready || { skip "auto $label" "$MASKED_WHY"; return; }
    elif ! command -v bwrap >/dev/null || ! "$@" true 2>/dev/null; then
        skip "auto $label" "bwrap cannot run here"; return
    fi
    expect_exit 125 "auto $label: landlock, refused without --accept-weaker" "$@" "$RINGFENCE" plan --backend auto -- true
    contains "auto $label: ... the refusal says auto chose landlock, and why" "$ERR" "backend auto: landlock"
    contains "auto $label: ... naming the failed step" "$ERR" "$why"
    if is_root; then
        # Only root is mapped in bwrap's user namespace: no unprivileged id to become.
        expect_exit 125 "auto $label: root cannot drop to an unmapped uid: refused" \
            "$@" "$RINGFENCE" plan --backend auto --accept-weaker -- true
        contains "auto $label: ... saying why" "$ERR" "is not mapped"
    else
        contains "auto $label: ... naming the setting" "$ERR" "accept_weaker"
        expect_exit 0 "auto $label: plan with --accept-weaker" "$@" "$RINGFENCE" plan --backend auto --accept-weaker -- true
        printf '%s' "$OUT" >"$SCRATCH/p.json"
        check "auto $label: backend landlock" pj 'assert p["backend"]=="landlock"'
        check "auto $label: the plan says why" pj "assert p['backend_reason'].startswith('auto: landlock') and '$why' in p['backend_reason']"
        contains "auto $label: a warning on stderr says which and why" "$ERR" "warning: backend auto: landlock"
        expect_exit 0 "auto $label: runs under landlock" "$@" "$RINGFENCE" run --backend auto --accept-weaker -- "$PROBE" status
        contains "auto $label: ... with no_new_privs" "$OUT" "NoNewPrivs:	1"
    fi
    expect_exit 1 "auto $label: doctor agrees (native not usable)" "$@" "$RINGFENCE" doctor --json
    printf '%s' "$OUT" >"$SCRATCH/d.json"
    check "auto $label: doctor's auto_backend is landlock" python3 -c "import json; assert json.load(open('$SCRATCH/d.json'))['auto_backend']=='landlock'"
}
auto_in "without user namespaces" "unshare" bw --unshare-user --disable-userns
auto_in "with /proc masked" "mounting a fresh /proc" masked_proc

# Nested in ringfence's own landlock backend: seccomp denies user namespaces.
expect_exit 0 "auto nested in the landlock backend: plan" rf run --backend landlock --accept-weaker -- \
    "$RINGFENCE" plan --backend auto --accept-weaker -- true
printf '%s' "$OUT" >"$SCRATCH/p.json"
check "auto nested: backend landlock" pj 'assert p["backend"]=="landlock"'
expect_exit 0 "auto nested: runs" rf run --backend landlock --accept-weaker -- \
    "$RINGFENCE" run --backend auto --accept-weaker -- "$PROBE" status

# ── runner types of the compatibility readers ──
echo '{ "isolation": { "enabled": false }, "providers": {} }' >"$SCRATCH/pico.json"
check "picoclaw isolation.enabled false: plan" plan_to --config "$SCRATCH/pico.json" -- true
check "picoclaw: backend none" pj 'assert p["backend"]=="none"'
contains "picoclaw: a warning on stderr" "$ERR" "WITHOUT a sandbox"
printf 'restricted_runner:\n  default_type: exec\n' >"$SCRATCH/mitto-exec.yaml"
check "Mitto runner exec: plan" plan_to --config "$SCRATCH/mitto-exec.yaml" -- true
check "Mitto exec: backend none" pj 'assert p["backend"]=="none"'
contains "Mitto exec: a warning on stderr" "$ERR" "WITHOUT a sandbox"
# term_run BACKEND WANT DESC: SIGTERM to a running ringfence ends the run
# within 10 s, with exit status WANT (the command traps it: exit 42 and a
# file rf-term in the workspace).
term_run() {
    local backend=$1 want=$2 desc=$3 pid t0 rc
    rm -f rf-term
    "$RINGFENCE" run --backend "$backend" -- sh -c 'trap "echo trapped >rf-term; exit 42" TERM; sleep 30 & wait' \
        </dev/null >/dev/null 2>&1 &
    pid=$!
    sleep 2
    kill -TERM "$pid"
    t0=$SECONDS
    while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt 10 ]; do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
        fail "--backend $backend: SIGTERM to ringfence ends the run"
        kill -KILL "$pid"
        return
    fi
    wait "$pid"
    rc=$?
    check "--backend $backend: SIGTERM to ringfence ends the run: $desc ($want, got $rc)" test "$rc" = "$want"
}

# ── firejail: never replaced by another backend ──
printf 'restricted_runner:\n  default_type: firejail\n' >"$SCRATCH/mitto-firejail.yaml"
if rf plan --backend firejail -- true >/dev/null 2>&1; then
    check "--backend firejail: plan" plan_to --backend firejail -- true
    check "--backend firejail: the plan names firejail" pj "assert p['backend']=='firejail'"
    check "--backend firejail: the plan shows firejail's argv and profile" pj "f=p['firejail']; assert f['argv'][0]=='/usr/bin/firejail' and 'net none' in f['profile'] and 'caps.drop all' in f['profile'] and f['argv'][-1].endswith('/true')"
    check "--backend firejail: the cannot list names what it lacks" pj "assert any('no Landlock' in c for c in p['cannot'])"
    expect_exit 7 "--backend firejail: the command's exit status" rf run --backend firejail -- sh -c 'exit 7' </dev/null
    expect_exit 0 "--backend firejail: runs" rf run --backend firejail --env RF_X=1 -- env </dev/null
    check "--backend firejail: the environment is the plan's, nothing firejail adds" \
        bash -c '! grep -qE "^(container|FIREJAIL_QUIET|SHELL|QT_X11_NO_MITSHM)=" <<<"$0" && grep -q "^RF_X=1$" <<<"$0"' "$OUT"
    expect_exit 0 "--backend firejail: no capabilities, no_new_privs" rf run --backend firejail -- "$PROBE" status </dev/null
    contains "--backend firejail: ... NoNewPrivs" "$OUT" "NoNewPrivs:	1"
    # SIGTERM to ringfence reaches the command (its trap writes a file); firejail then reports 143.
    term_run firejail 143 "the trap ran, firejail's status"
    check "--backend firejail: ... the command's trap ran" test -f rf-term
    check "Mitto runner firejail: plan" plan_to --config "$SCRATCH/mitto-firejail.yaml" -- true
    check "Mitto firejail: backend firejail" pj 'assert p["backend"]=="firejail"'
    rf doctor --json >"$SCRATCH/d.json" 2>/dev/null || true
    check "doctor: firejail present and usable" python3 -c "import json; b=json.load(open('$SCRATCH/d.json'))['backends']['firejail']; assert b['present'] and b['usable'] and 'firejail' in b['version'] and any('no Landlock' in l for l in b['lacks'])"
else
    expect_exit 125 "--backend firejail where it cannot run: refused" rf plan --backend firejail -- true
    contains "... naming the backend" "$ERR" "backend firejail"
    expect_exit 125 "Mitto runner firejail: refused the same way, never native" \
        rf plan --config "$SCRATCH/mitto-firejail.yaml" -- true
    contains "... naming the backend" "$ERR" "backend firejail"
fi

# ── bwrap: never replaced by another backend ──
if rf plan --backend bwrap -- true >/dev/null 2>&1; then
    check "--backend bwrap: plan" plan_to --backend bwrap -- true
    check "--backend bwrap: the plan names bwrap" pj "assert p['backend']=='bwrap'"
    check "--backend bwrap: the plan shows bwrap's argv" pj "a=p['bwrap']['argv']; assert a[0]=='/usr/bin/bwrap' and '--unshare-net' in a and '--seccomp' in a and a[-1].endswith('/true')"
    check "--backend bwrap: the plan's cannot list names Landlock" pj "assert any('no Landlock' in c for c in p['cannot'])"
    expect_exit 0 "--backend bwrap: runs" rf run --backend bwrap -- "$PROBE" status
    contains "--backend bwrap: ... under seccomp" "$OUT" "Seccomp:	2"
    expect_exit 7 "--backend bwrap: the command's exit status" rf run --backend bwrap -- sh -c 'exit 7'
    # SIGTERM to ringfence reaches the command inside bwrap (init forwards it
    # to the monitor, which passes it to the command), and bwrap reports its status.
    term_run bwrap 42 "the command's trap's exit 42"
    printf 'restricted_runner:\n  default_type: bwrap\n' >"$SCRATCH/mitto-bwrap.yaml"
    check "Mitto runner bwrap: plan" plan_to --config "$SCRATCH/mitto-bwrap.yaml" -- true
    check "Mitto bwrap: backend bwrap" pj 'assert p["backend"]=="bwrap"'
    rf doctor --json >"$SCRATCH/d.json" 2>/dev/null || true
    check "doctor: bwrap present and usable, with its version and what it cannot do" python3 -c "import json; b=json.load(open('$SCRATCH/d.json'))['backends']['bwrap']; assert b['present'] and b['usable'] and b['version'].startswith('bubblewrap') and any('no Landlock' in l for l in b['lacks'])"
    check "doctor: firejail and container reported, present or not" python3 -c "import json; d=json.load(open('$SCRATCH/d.json'))['backends']; assert all('present' in d[k] and 'version' in d[k] for k in ('firejail','container','native'))"
else
    skip "--backend bwrap" "bwrap cannot run here"
fi
if command -v bwrap >/dev/null && bw --unshare-user --disable-userns true 2>/dev/null; then
    expect_exit 125 "--backend bwrap without user namespaces: refused" \
        bw --unshare-user --disable-userns "$RINGFENCE" plan --backend bwrap -- true
    contains "  ... naming the backend and the reason" "$ERR" "backend bwrap cannot run here"
    contains "  ... and the fix" "$ERR" "hint:"
    lacks "  ... never native instead" "$OUT" '"native"'
else
    skip "--backend bwrap without user namespaces: refused" "bwrap cannot run here"
fi
# The container backend (podman) and Mitto's docker runner, which maps to it.
printf 'restricted_runner:\n  default_type: docker\n' >"$SCRATCH/mitto-docker.yaml"
if command -v podman >/dev/null; then
    ct=(); is_root && ct=(--accept-weaker) # a root caller's command is uid 0 there
    check "--backend container: plan" plan_to --backend container "${ct[@]}" -- true
    check "--backend container: the podman argv in the plan" pj 'assert p["backend"]=="container" and "--cap-drop=all" in p["container"]["argv"]'
    check "Mitto runner docker: plan" plan_to --config "$SCRATCH/mitto-docker.yaml" "${ct[@]}" -- true
    check "Mitto docker: the container backend" pj 'assert p["backend"]=="container" and p["container"]["tool"]=="podman"'
    printf 'restricted_runner:\n  default_type: docker\n  default_restrictions:\n    docker:\n      memory_limit: 512m\n      cpu_limit: "1.5"\n' \
        >"$SCRATCH/mitto-docker-limits.yaml"
    if is_root || [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        check "Mitto docker memory/cpu: plan" plan_to --config "$SCRATCH/mitto-docker-limits.yaml" "${ct[@]}" -- true
        check "Mitto docker memory/cpu: in podman's argv" pj 'a = p["container"]["argv"]; assert "--memory=536870912" in a and "--cpus=1.5" in a, a'
    else
        expect_exit 125 "Mitto docker memory/cpu, rootless on cgroup v1: refused" rf plan --config "$SCRATCH/mitto-docker-limits.yaml" -- true
        contains "the refusal says why" "$ERR" "cgroup v1"
    fi
else
    expect_exit 125 "--backend container without podman: refused" rf plan --backend container -- true
    contains "the refusal names podman" "$ERR" "podman is not installed"
fi
expect_exit 125 "--backend container, no podman on PATH: refused, never native" env PATH=/nonexistent \
    "$RINGFENCE" plan --backend container -- true
contains "the refusal names podman and the fix" "$ERR" "install podman"
expect_exit 125 "an unknown backend is an error" rf plan --backend bogus -- true
