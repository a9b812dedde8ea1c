# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by tests/security/*.sh (not a test itself: the runner only picks
# up *.sh). Runs the probe inside the sandbox and on the host, and tidies
# up host objects a test created even when the script dies half-way.
#
#   in_denied DESC ACTION [ARG...]   probe inside must fail ("denied:")
#   in_ok DESC ACTION [ARG...]       probe inside must succeed
#   host_ok DESC ACTION [ARG...]     the same crossing works on the host:
#                                    proof that the test above could fail
#   RF_OPTS=(...)                    extra ringfence options for in_*
#   at_exit 'CMD'                    run CMD when the script exits
#   wait_until SECONDS CMD...        poll CMD until it succeeds
#   RF_TEST_BACKEND=NAME             run everything against that backend
#                                    (lib.sh; tests/security/backend-*.sh)
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
: "${PROBE:?set PROBE to the rf-probe binary}"

RF_OPTS=()

# Keep lib.sh's exit trap (scratch removal, TAP plan) and run ours first.
eval "set -- $(trap -p EXIT)"
RF_LIB_EXIT=${3:-}
set --
RF_CLEANUP=""
at_exit() {
    RF_CLEANUP="$1; $RF_CLEANUP"
    # shellcheck disable=SC2064 # expand now: the list is fixed at this point
    trap "$RF_CLEANUP $RF_LIB_EXIT" EXIT
}

# A token no other process on the host carries in its command line.
TOKEN="rfsec-$$-$RANDOM$RANDOM"

# root_contained: a root caller whose sandbox maps its own uid 0 (a
# container's root without CAP_SYS_ADMIN; docs/containers.md): the plan
# lists it among its weakenings.
root_contained() {
    is_root && rf plan -- true 2>/dev/null | grep -q "root: the command's uid 0 is"
}

inside() { rf run "${RF_OPTS[@]}" --expose "$PROBE" -- "$PROBE" "$@"; }

in_denied() {
    local desc=$1; shift
    local rc=0
    OUT=$(inside "$@" 2>"$SCRATCH/err" </dev/null) || rc=$?
    ERR=$(cat "$SCRATCH/err")
    if [ "$rc" = 1 ] && [[ $OUT == *"denied:"* ]]; then pass "$desc"; else
        fail "$desc"; diag "probe $* inside: exit $rc, want 1 (denied)" "stdout: ${OUT:0:400}" "stderr: ${ERR:0:400}"; fi
}

in_ok() {
    local desc=$1; shift
    local rc=0
    OUT=$(inside "$@" 2>"$SCRATCH/err" </dev/null) || rc=$?
    ERR=$(cat "$SCRATCH/err")
    if [ "$rc" = 0 ]; then pass "$desc"; else
        fail "$desc"; diag "probe $* inside: exit $rc, want 0" "stdout: ${OUT:0:400}" "stderr: ${ERR:0:400}"; fi
}

host_ok() {
    local desc=$1; shift
    local rc=0
    OUT=$("$PROBE" "$@" 2>&1 </dev/null) || rc=$?
    if [ "$rc" = 0 ]; then pass "$desc"; else
        fail "$desc"; diag "probe $* on the host: exit $rc, want 0 (the control failed, so the test above proves nothing)" "${OUT:0:400}"; fi
}

# wait_until SECONDS COMMAND...: true once COMMAND is; a deadline in time,
# not a count of tries, so a slow COMMAND (podman ps) cannot stretch it.
# free_port: a TCP port free on the host's loopback, below the ephemeral
# range (a random port inside it can be some connection's local port, and
# --publish of it then fails with EADDRINUSE).
free_port() {
    python3 - <<'PYEOF'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randrange(10000, max(low, 10001))
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
PYEOF
}

wait_until() {
    local deadline=$((SECONDS + $1)); shift
    while :; do
        "$@" && return 0
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

# Host pids whose command line carries the token (never our own pgrep).
token_pids() { pgrep -f -- "$1" || true; }
no_token_procs() { [ -z "$(token_pids "$1")" ]; }
kill_token_procs() {
    local p
    for p in $(token_pids "$1"); do kill -9 "$p" 2>/dev/null; done
    return 0
}
