# SPDX-License-Identifier: LGPL-2.1-or-later
# Host debian11-user: Linux 5.10, below the native backend's floor (5.12,
# mount_setattr). run refuses at once, before any mount, cgroup or instance
# directory is made, naming the missing call and the release that has it;
# plan and doctor say the same; the bwrap backend, which mounts with the
# classic calls, still runs a sandbox here.
. "$(dirname "$0")/lib.bash"

release=$(uname -r)
IFS=. read -r major minor _ <<<"$release"
# Control: this really is a kernel without mount_setattr.
if [ "$major" -gt 5 ] || { [ "$major" = 5 ] && [ "$minor" -ge 12 ]; }; then
    skip "the native backend's floor" "Linux $release has mount_setattr"
    exit 0
fi
pass "control: Linux $release is below 5.12"

home=$SCRATCH/home
mkdir -p "$home"
expect_exit 125 "run --backend native -- true refuses" env RINGFENCE_HOME="$home/rf" "$RINGFENCE" run --backend native -- true
contains "the refusal names mount_setattr(2)" "$ERR" "has no mount_setattr(2)"
contains "the refusal names the release that has it" "$ERR" "it came in Linux 5.12"
contains "the refusal names this kernel" "$ERR" "Linux $release"
contains "with a hint" "$ERR" "hint: "
# At once: nothing was made for the sandbox, not even its instance root.
if [ -e "$home/rf" ]; then fail "nothing made before the refusal"; diag "$(ls -la "$home/rf")"
else pass "nothing made before the refusal"; fi
expect_exit 125 "run -- true (the default backend) refuses too" env RINGFENCE_HOME="$home/rf" "$RINGFENCE" run -- true
contains "its refusal names mount_setattr(2)" "$ERR" "mount_setattr(2)"

expect_exit 0 "plan --backend native -- true" rf plan --backend native -- true
contains "plan's cannot names mount_setattr(2) and 5.12" "$(jget 'j["cannot"]')" "it came in Linux 5.12"

expect_exit 1 "doctor: the default backend cannot run here (exit 1)" rf doctor
contains "doctor names mount_setattr" "$OUT" "mount_setattr"
contains "doctor names 5.12" "$OUT" "5.12"

if command -v bwrap >/dev/null; then
    expect_exit 0 "run --backend bwrap -- true runs below the floor" rf run --backend bwrap --accept-weaker -- true
    diag "${ERR:0:300}"
    # And it is a sandbox: a file of the caller's outside the workspace
    # (the scratch directory, under the host's /tmp) is out of reach.
    echo "secret-$$" >"$home/secret"
    expect_exit 1 "bwrap: a host file outside the workspace cannot be read" \
        rf run --backend bwrap --accept-weaker -- cat "$home/secret"
    lacks "bwrap: its content did not arrive" "$OUT" "secret-$$"
else
    skip "run --backend bwrap" "no bwrap on this host"
fi
