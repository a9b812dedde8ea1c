# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared helpers for the shell tests (tests/cli, tests/security): TAP output,
# a scratch directory per script, and `rf` to call the binary under test.
# Environment: RINGFENCE (the binary), PROBE (tests/probe/rf-probe).
set -u
: "${RINGFENCE:?set RINGFENCE to the ringfence binary}"
T_N=0
T_FAILED=0
SCRATCH=$(mktemp -d /tmp/rf-test.XXXXXX)
chmod 755 "$SCRATCH"
# tests/run's leftover check knows this script's processes by it (tests/leftovers).
if [ -n "${RF_TEST_SCRATCH_LIST:-}" ]; then echo "$SCRATCH" >>"$RF_TEST_SCRATCH_LIST"; fi 2>/dev/null
trap 'rm -rf "$SCRATCH" 2>/dev/null; echo "1..$T_N"' EXIT
export RINGFENCE_HOME="$SCRATCH/rfhome"
WS="$SCRATCH/ws"
mkdir -p "$WS"
cd "$WS" || exit 1

rf() { "$RINGFENCE" "$@"; }

# RF_TEST_BACKEND=NAME: every `rf run` of the script uses that backend (the
# security battery per backend, tests/security/backend-*.sh). The bwrap
# and firejail backends run a root caller's command as the workspace's owner
# (no id-mapped mounts), so a root run hands the workspace to another uid:
# for firejail, which lets in only users with an account, the unprivileged
# test user.
hand_workspace() { # BACKEND
    [ "$(id -u)" = 0 ] || return 0
    case $1 in
        bwrap) chown 4243:4243 "$WS" ;;
        firejail) chown "${RF_TEST_USER:-rftest}:" "$WS" 2>/dev/null || chown 4243:4243 "$WS" ;;
    esac
}
if [ -n "${RF_TEST_BACKEND:-}" ]; then
    export RINGFENCE_BACKEND="$RF_TEST_BACKEND"
    hand_workspace "$RF_TEST_BACKEND"
fi

pass() { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
fail() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); echo "not ok $T_N - $*"; }
skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP ${2:-}"; }
diag() { printf '#   %s\n' "$@"; }

# check DESC CMD...: passes when CMD exits 0.
check() {
    local desc=$1; shift
    if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# expect_exit CODE DESC CMD...: passes when CMD exits with CODE; output kept
# in $OUT and $ERR for further checks.
expect_exit() {
    local want=$1 desc=$2; shift 2
    local rc=0
    "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null || rc=$?
    OUT=$(cat "$SCRATCH/out"); ERR=$(cat "$SCRATCH/err")
    if [ "$rc" = "$want" ]; then pass "$desc"; else
        fail "$desc"; diag "exit $rc, want $want" "stdout: ${OUT:0:400}" "stderr: ${ERR:0:400}"; fi
}

# contains DESC HAYSTACK NEEDLE
contains() {
    case $2 in *"$3"*) pass "$1" ;; *) fail "$1"; diag "'${2:0:400}' lacks '$3'" ;; esac
}
# lacks DESC HAYSTACK NEEDLE
lacks() {
    case $2 in *"$3"*) fail "$1"; diag "'${2:0:400}' has '$3'" ;; *) pass "$1" ;; esac
}

is_root() { [ "$(id -u)" = 0 ]; }
