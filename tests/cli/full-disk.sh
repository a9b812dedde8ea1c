# SPDX-License-Identifier: LGPL-2.1-or-later
# A full disk: a small tmpfs as the workspace, filled to the last page, then
# every fs write verb and run's status file. Each must fail with a clear
# error, leave the original file whole and leave no temporary file behind.
# Root mounts the tmpfs itself; an unprivileged caller runs this script
# again inside `unshare -rm` (its own user and mount namespace), or SKIPs.
. "$(dirname "$0")/../lib.sh"

if ! is_root; then
    if [ -z "${RF_FULL_DISK_INNER:-}" ] && unshare -rm true 2>/dev/null; then
        cd / && rm -rf "$SCRATCH"
        trap - EXIT
        RF_FULL_DISK_INNER=1 exec unshare -rm bash "$0"
    fi
    skip "full disk" "not root and no user namespace (unshare -rm) to mount a tmpfs in"
    exit 0
fi

FULL="$SCRATCH/full"
mkdir -p "$FULL"
if ! mount -t tmpfs -o size=256k,mode=0777 tmpfs "$FULL" 2>"$SCRATCH/err"; then
    skip "full disk" "cannot mount a tmpfs: $(cat "$SCRATCH/err")"
    exit 0
fi
# at_exit-like: unmount before lib.sh removes the scratch directory.
eval "set -- $(trap -p EXIT)"
trap "umount -l '$FULL' 2>/dev/null; $3" EXIT
set --

ORIG="original content
line two
"
printf '%s' "$ORIG" >"$FULL/orig.txt"
printf 'previous status\n' >"$FULL/status.json"
dd if=/dev/zero of="$FULL/filler" bs=4096 2>/dev/null
dd if=/dev/zero of="$FULL/filler2" bs=1 2>/dev/null
LISTING=$(ls -A "$FULL" | tr '\n' ' ')
BIG=$(head -c 65536 /dev/zero | tr '\0' x)

check "control: the tmpfs is full (a new 64 KiB file cannot be written)" \
    bash -c "! printf '%s' '$BIG' >'$FULL/probe' 2>/dev/null; rm -f '$FULL/probe'"
rm -f "$FULL/probe"

intact() { [ "$(cat "$FULL/orig.txt")" = "$(printf '%s' "$ORIG")" ]; }
no_temp() { [ "$(ls -A "$FULL" | tr '\n' ' ')" = "$LISTING" ]; }

# after VERB: the three promises for the verb just run.
after() {
    if [ "$RC" != 0 ] && [[ $ERR == *"No space left on device"* ]]; then pass "$1: fails with a clear error"; else
        fail "$1: fails with a clear error"; diag "exit $RC, stderr: ${ERR:0:400}"; fi
    check "$1: the original file is intact" intact
    if no_temp; then pass "$1: no temporary file left"; else
        fail "$1: no temporary file left"; diag "before: $LISTING" "after: $(ls -A "$FULL" | tr '\n' ' ')"; fi
}
run_rc() {
    RC=0
    "$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null || RC=$?
    ERR=$(cat "$SCRATCH/err")
}

run_rc rf fs --workspace "$FULL" write orig.txt --content "$BIG"
after "fs write over an existing file"
run_rc rf fs --workspace "$FULL" write new.txt --content "$BIG"
after "fs write of a new file"
run_rc rf fs --workspace "$FULL" append orig.txt --content "$BIG"
after "fs append"
run_rc rf fs --workspace "$FULL" edit orig.txt --old "line two" --new "$BIG"
after "fs edit"
run_rc rf fs --workspace "$FULL" write sub/dir/new.txt --content "$BIG"
after "fs write that creates parent directories"
run_rc rf fs --workspace "$FULL" append sub/dir/new.txt --content "$BIG"
after "fs append that creates parent directories"

# run --status-json FILE on the full disk: the old record stays whole.
# Inside unshare -rm only uid 0 is mapped, so the sandbox's ids cannot be
# mapped there: the backend none (the status file is written the same way
# whatever the backend).
RUN_OPTS=()
[ -z "${RF_FULL_DISK_INNER:-}" ] || RUN_OPTS=(--backend none --accept-weaker)
mkdir -p "$SCRATCH/runws"
run_rc rf run "${RUN_OPTS[@]}" --workspace "$SCRATCH/runws" --status-json "$FULL/status.json" -- true
if [ "$RC" = 0 ] && [[ $ERR == *"cannot write --status-json"*"No space left on device"* ]]; then
    pass "run --status-json on a full disk: a clear error, the command's exit status"
else
    fail "run --status-json on a full disk: a clear error, the command's exit status"
    diag "exit $RC, stderr: ${ERR:0:400}"
fi
check "run --status-json: the previous record is not truncated" \
    test "$(cat "$FULL/status.json")" = "previous status"
if no_temp; then pass "run --status-json: no temporary file left"; else
    fail "run --status-json: no temporary file left"; diag "after: $(ls -A "$FULL" | tr '\n' ' ')"; fi
rm -f "$FULL/filler" "$FULL/filler2"
run_rc rf run "${RUN_OPTS[@]}" --workspace "$SCRATCH/runws" --status-json "$FULL/status.json" -- true
contains "control: with room again, --status-json writes the record" "$(cat "$FULL/status.json")" '"exit_code"'
