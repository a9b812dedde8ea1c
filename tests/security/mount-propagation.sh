# SPDX-License-Identifier: LGPL-2.1-or-later
# Mount propagation: on a systemd host / is a shared mount, and a clone of a
# shared mount joins its peer group. Nothing the sandbox mounts may then
# reach the host's mount table (found on Debian 12 under systemd: every run
# left a read-only bind of the workspace's .ringfence.json on the host), and
# nothing the host mounts later may appear inside a running sandbox.
# The test makes / shared in a mount namespace of its own, as systemd does.
. "$(dirname "$0")/common.bash"

if ! is_root || ! unshare -m --propagation unchanged true 2>/dev/null; then
    skip "sandbox mounts stay out of a shared host mount table" "needs root (a mount namespace of the test's own)"
    exit 0
fi

echo '{}' >"$WS/.ringfence.json"
mkdir -p "$WS/.git/hooks" "$WS/later"
host_side() {
    mount --make-rshared / || { echo "cannot make / shared"; return; }
    echo "before $(grep -c " $SCRATCH" /proc/self/mountinfo)"
    "$RINGFENCE" run -- sh -c 'echo x > written' >/dev/null 2>&1
    "$RINGFENCE" run --allow-domain allowed.test -- true >/dev/null 2>&1
    "$RINGFENCE" run --expose "$SCRATCH/later:/elsewhere:rw" -- true >/dev/null 2>&1
    echo "after $(grep -c " $SCRATCH" /proc/self/mountinfo)"
    grep " $SCRATCH" /proc/self/mountinfo | sed 's/^/mount /'
    # The other way: a mount the host makes while the sandbox runs.
    # The sandbox says it runs (a file in the workspace), the host mounts,
    # then says so (another file); bounded both ways.
    "$RINGFENCE" run -- sh -c 'touch started; for i in $(seq 300); do [ -e mounted ] && break; sleep 0.1; done
        cat /proc/self/mountinfo' >"$SCRATCH/inside" 2>&1 &
    for _ in $(seq 300); do [ -e "$WS/started" ] && break; sleep 0.1; done
    mount -t tmpfs rf-late-host-mount "$WS/later"
    touch "$WS/mounted"
    wait
    umount "$WS/later"
}
out=$(cd "$WS" && unshare -m --propagation unchanged bash -c "$(declare -f host_side); SCRATCH='$SCRATCH' WS='$WS' RINGFENCE='$RINGFENCE' host_side")
before=$(sed -n 's/^before //p' <<<"$out")
after=$(sed -n 's/^after //p' <<<"$out")
check "control: / was made shared in the test's namespace" test -n "$before"
[ -n "$before" ] && [ "$before" = "$after" ] &&
    pass "no mount of a sandbox (protected files, the allowlist, an rw expose) reaches a shared host mount table" ||
    { fail "no mount of a sandbox reaches a shared host mount table ($before before, $after after)"; diag "$(grep '^mount' <<<"$out")"; }
check "control: the command's write reached the workspace" test "$(cat "$WS/written" 2>/dev/null)" = x
check "control: the late sandbox ran" grep -q " / / " "$SCRATCH/inside"
lacks "a mount the host makes later does not appear inside a running sandbox" "$(cat "$SCRATCH/inside")" rf-late-host-mount
