# SPDX-License-Identifier: LGPL-2.1-or-later
# Fault injection: ringfence (the supervisor) SIGKILLed right after each
# setup step of each backend, then the host searched for what it left:
# processes of the sandbox, mounts, cgroups, temporary files, a held
# instance lock, placeholders in the workspace (the next start must remove
# them). Needs a build with -Dtest_hooks=true (RF_TEST_FAULT_STEP, see
# src/lib/util/fault.h and docs/testing.md); SKIP otherwise.
. "$(dirname "$0")/common.bash"
at_exit "kill_token_procs '$TOKEN'"

NATIVE_STEPS="instance-dirs placeholders cgroup clone cgroup-attach uid-map child-go network go proxy
    mount-sources pivot-root identity limits caps landlock seccomp exec spawned"
LANDLOCK_STEPS="instance-dirs placeholders cgroup clone init-session exec landlock identity seccomp spawned"
CONTAINER_STEPS="instance-dirs placeholders container-dir clone netns podman proxy spawned"
LIMITS=(--memory 256M --pids 200)

FI_TMP="$SCRATCH/tmpdir" # the supervisor's TMPDIR: must stay empty (but for
                         # rootless podman's own per-user state, which it keeps there)
mkdir -p "$FI_TMP"

mounts_of_ours() {
    awk -v s="$SCRATCH" '$5 == "/tmp" || index($5, s) == 1 { print $1 }' /proc/self/mountinfo | sort
}
MOUNTS0=$(mounts_of_ours)
TMP0=$(ls -A /tmp | grep -i ringfence | sort)

# fresh_ws: a workspace with a .git that has no hooks (a placeholder target),
# owned by FI_OWNER when set (a root caller's runner backends run the
# command as the workspace's owner).
fresh_ws() {
    WS_FI="$SCRATCH/ws-$1"
    rm -rf "$WS_FI"
    mkdir -p "$WS_FI/.git"
    echo "$1" >"$WS_FI/file"
    [ -z "${FI_OWNER:-}" ] || chown -R "$FI_OWNER" "$WS_FI"
}

FI_INSTANCE=fi # empty: no --instance
FI_SETTLE=15   # seconds the sandbox may take to notice and clean up (a busy CI machine)
instance_running() {
    [ -z "$FI_INSTANCE" ] || rf instance list 2>/dev/null | awk -v i="$FI_INSTANCE" '$1 == i { print $2 }'
}
instance_opt() { [ -z "$FI_INSTANCE" ] || printf '%s\n' --instance "$FI_INSTANCE"; }

# leftovers PID: what the supervisor PID left on the host, one line each
# (empty when nothing).
leftovers() {
    local pid=$1 p
    p=$(token_pids "$TOKEN")
    [ -z "$p" ] || echo "processes: $p"
    [ "$(mounts_of_ours)" = "$MOUNTS0" ] || echo "mounts: $(comm -13 <(echo "$MOUNTS0") <(mounts_of_ours) | tr '\n' ' ')"
    p=$(find /sys/fs/cgroup -maxdepth 4 -type d -name "ringfence-$pid-*" 2>/dev/null)
    [ -z "$p" ] || echo "cgroups: $p"
    p=$(ls -A "$FI_TMP" | grep -v -x -e "containers-user-$(id -u)" -e "podman-run-$(id -u)")
    [ -z "$p" ] || echo "temporary files: $p"
    [ "$(ls -A /tmp | grep -i ringfence | sort)" = "$TMP0" ] || echo "new ringfence entries in /tmp"
    p=$(instance_running)
    [ -z "$p" ] || [ "$p" = 0 ] || echo "instance lock: $p running"
    [ -z "$FI_CONTAINERS" ] || containers_left "$FI_STEP"
}
# The container backend's own traces: podman's containers (of this user:
# rootless storage is per user) and the directories with their roots. A
# start killed before its supervisor exists (step container-dir) leaves its
# directory to the next start, which removes every directory no run holds.
FI_CONTAINERS= FI_STEP=
containers_left() {
    local p
    p=$(podman ps -a --format '{{.Names}}' 2>/dev/null | grep '^ringfence-' | tr '\n' ' ')
    [ -z "$p" ] || echo "podman containers: $p"
    [ "${1:-}" = container-dir ] && return
    p=$(container_dirs)
    [ -z "$p" ] || echo "container directories: $p"
}
container_dirs() { find "$RINGFENCE_HOME" -path '*/container/ringfence-*' -prune -print 2>/dev/null; }
clean() { [ -z "$(leftovers "$1")" ]; }

# The workspace after the next start: only what the test put there.
ws_restored() { [ "$(cd "$WS_FI" && ls -A | tr '\n' ' ')" = ".git file " ] && [ -z "$(ls -A "$WS_FI/.git")" ]; }

# fault BACKEND STEP OPTION...: one killed start and its checks.
fault() {
    local backend=$1 step=$2; shift 2
    FI_STEP=$step
    fresh_ws "$backend-$step"
    local rc=0
    (cd "$WS_FI" && exec env TMPDIR="$FI_TMP" RF_TEST_FAULT_STEP="$step" "$RINGFENCE" run $(instance_opt) "$@" \
        -- bash -c "exec -a $TOKEN-$step sleep 300") </dev/null >/dev/null 2>"$SCRATCH/err" &
    local pid=$!
    wait "$pid" 2>/dev/null || rc=$?
    if [ "$rc" != 137 ]; then
        fail "$backend: the supervisor dies at step $step"
        diag "exit $rc, want 137 (SIGKILL): the step was never reached" "$(head -c 400 "$SCRATCH/err")"
        kill_token_procs "$TOKEN"
        return
    fi
    pass "$backend: the supervisor dies at step $step"
    if wait_until "$FI_SETTLE" clean "$pid"; then pass "$backend/$step: nothing left on the host"; else
        fail "$backend/$step: nothing left on the host"; diag "$(leftovers "$pid")"; kill_token_procs "$TOKEN"; fi
    # The journal's work is only seen if a placeholder was left: it is,
    # by a supervisor killed right after making them.
    if [ "$backend" = native ] && [ "$step" = placeholders ]; then
        if ws_restored; then fail "control: a start killed after its placeholders leaves them"; else
            pass "control: a start killed after its placeholders leaves them"; fi
    fi
    if [ "$backend" = container ] && [ "$step" = container-dir ]; then
        if [ -n "$(container_dirs)" ]; then pass "control: a start killed after making its directory leaves it"; else
            fail "control: a start killed after making its directory leaves it"; fi
    fi
    expect_exit 0 "$backend/$step: the next start in that workspace and instance runs" \
        env -C "$WS_FI" TMPDIR="$FI_TMP" "$RINGFENCE" run $(instance_opt) "$@" -- true
    if ws_restored; then pass "$backend/$step: no placeholder left in the workspace after the next start"; else
        fail "$backend/$step: no placeholder left in the workspace after the next start"
        diag "workspace: $(cd "$WS_FI" && ls -A | tr '\n' ' ') .git: $(ls -A "$WS_FI/.git" | tr '\n' ' ')"; fi
    if [ -n "$FI_CONTAINERS" ]; then
        if [ -z "$(containers_left)" ]; then pass "$backend/$step: no container or directory after the next start"; else
            fail "$backend/$step: no container or directory after the next start"; diag "$(containers_left)"; fi
    fi
}

# Does this build have the hook at all?
rc=0
env RF_TEST_FAULT_STEP=instance-dirs "$RINGFENCE" run -- true </dev/null >/dev/null 2>&1 &
wait $! 2>/dev/null || rc=$?
if [ "$rc" != 137 ]; then
    skip "fault injection" "ringfence built without -Dtest_hooks=true (RF_TEST_FAULT_STEP ignored, exit $rc)"
    exit 0
fi

# Controls: the search finds a leftover process and a stray placeholder.
fresh_ws control
bash -c "exec -a $TOKEN-control sleep 300" &
ctl=$!
wait_until 5 pgrep -f -- "$TOKEN-control" >/dev/null
check "control: a process of the sandbox left behind would be found" test -n "$(leftovers 0)"
kill "$ctl"; wait "$ctl" 2>/dev/null
mkdir "$WS_FI/.git/hooks"
if ws_restored; then fail "control: a placeholder left behind would be found"; else
    pass "control: a placeholder left behind would be found"; fi
rmdir "$WS_FI/.git/hooks"

native=("${LIMITS[@]}" --allow-domain example.invalid)
for step in $NATIVE_STEPS; do
    if [ "$step" = uid-map ] && is_root; then
        skip "native: step uid-map" "a root caller's id map is made before the clone (no uid-map step)"
        continue
    fi
    fault native "$step" "${native[@]}"
done

if [ ! -e /sys/kernel/security/landlock ] && ! grep -q landlock /sys/kernel/security/lsm 2>/dev/null; then
    skip "landlock backend steps" "no Landlock in this kernel"
else
    for step in $LANDLOCK_STEPS; do
        fault landlock "$step" --backend landlock --accept-weaker "${LIMITS[@]}"
    done
fi

# The runner backends start through the landlock backend's init, so they
# pass its steps; bwrap with the allowlist (its own network namespace and
# the proxy), firejail as it is. As root, the workspace goes to the
# unprivileged test user, whom firejail lets in, and no instance is named
# (a root caller's instance needs the native backend); otherwise each
# backend has an instance of its own.
FI_OWNER=
is_root && FI_OWNER="${RF_TEST_USER:-rftest}:"
for backend in bwrap firejail; do
    fresh_ws "probe-$backend"
    if ! (cd "$WS_FI" && "$RINGFENCE" plan --backend "$backend" -- true) >/dev/null 2>"$SCRATCH/err"; then
        skip "$backend backend steps" "not usable here: $(head -1 "$SCRATCH/err")"
        continue
    fi
    FI_INSTANCE="fi-$backend"
    is_root && FI_INSTANCE=
    opts=(--backend "$backend" "${LIMITS[@]}")
    [ "$backend" = bwrap ] && opts+=(--allow-domain example.invalid)
    for step in $LANDLOCK_STEPS; do
        fault "$backend" "$step" "${opts[@]}"
    done
done
FI_OWNER=
FI_INSTANCE=fi

# The container backend: its supervisor sees ringfence's channel close and
# removes the container (podman rm -f, again after podman is killed: one
# killed while it creates the container leaves it behind) and the directory
# with its root. As root: podman run by root, with the allowlist (the
# network namespace ringfence makes, bind-mounted for podman to join, and
# the proxy); otherwise rootless podman with an instance of its own.
if ! command -v podman >/dev/null 2>&1; then
    skip "container backend steps" "podman is not installed (apt-get install podman uidmap slirp4netns)"
else
    opts=(--backend container)
    FI_INSTANCE=fi-container
    if is_root; then
        opts+=(--accept-weaker --allow-domain example.invalid)
        FI_INSTANCE=
    fi
    fresh_ws probe-container
    if ! (cd "$WS_FI" && "$RINGFENCE" run "${opts[@]}" -- true) </dev/null >/dev/null 2>"$SCRATCH/err"; then
        skip "container backend steps" "podman cannot run a container here as $(id -un): $(grep -v warning "$SCRATCH/err" | head -1)"
    else
        FI_CONTAINERS=1 FI_SETTLE=30
        for step in $CONTAINER_STEPS; do
            if ! is_root && { [ "$step" = netns ] || [ "$step" = proxy ]; }; then
                skip "container: step $step" "the allowlist needs podman run by root"
                continue
            fi
            fault container "$step" "${opts[@]}"
        done
        FI_CONTAINERS= FI_SETTLE=15 FI_INSTANCE=fi
    fi
fi
