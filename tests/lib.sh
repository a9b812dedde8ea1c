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

# bound_root [BWRAP-OPTION...] CMD...: run CMD in a user and pid namespace
# of bwrap's with a root assembled from binds, the way a container's root
# is: /usr and /etc read-only, /tmp (the stage, the scratch directory)
# read-write, a fresh /dev and /proc, and no other procfs anywhere in the
# mount namespace. Not `--dev-bind / /`: that keeps the host's own /proc
# there, and whether the kernel then lets a procfs be mounted in a nested
# user namespace would depend on the host's mounts. bwrap drops every
# capability, as a container's default does for root (--uid 0: root).
bound_root() {
    local d args=(--ro-bind /usr /usr --ro-bind /etc /etc --bind /tmp /tmp --dev /dev)
    for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
        if [ -L "$d" ]; then args+=(--symlink "$(readlink "$d")" "$d")
        elif [ -d "$d" ]; then args+=(--ro-bind "$d" "$d"); fi
    done
    bwrap "${args[@]}" --unshare-user --unshare-pid --proc /proc --chdir "$PWD" "$@"
}
# masked_proc CMD...: CMD as a container with a masked /proc runs it (a
# procfs with /proc/sys covered, no other in reach). Use masked_proc_ready
# first.
masked_proc() { bound_root --tmpfs /proc/sys "$@"; }
# masked_proc_ready: 0 when the premise holds (bwrap runs, and a fresh
# procfs cannot be mounted in a user namespace inside), else 1 with the
# reason in MASKED_WHY. unshare(1) is util-linux's, which setup installs.
masked_proc_ready() {
    MASKED_WHY=
    if ! command -v bwrap >/dev/null; then MASKED_WHY="bwrap is not installed"; return 1; fi
    if ! masked_proc true 2>/dev/null; then
        MASKED_WHY="bwrap cannot build the masked /proc here: $(masked_proc true 2>&1 | head -c 200)"; return 1
    fi
    if masked_proc unshare --user --map-root-user --mount --pid --fork --mount-proc true 2>/dev/null; then
        MASKED_WHY="a fresh /proc can still be mounted inside the masked one (this kernel does not check)"; return 1
    fi
    return 0
}
