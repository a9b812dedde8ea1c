# SPDX-License-Identifier: LGPL-2.1-or-later
# Every host of another suite or architecture: plan and doctor name the
# architecture the build's seccomp filter is for, and it is the kernel's;
# doctor's Landlock ABI is the one this kernel release brings; at or above
# the native backend's floor (Linux 5.12) a sandbox runs and its command
# sees the same machine, below it run refuses at once (checks/floor.sh).
. "$(dirname "$0")/lib.bash"

machine=$(uname -m) release=$(uname -r)
diag "kernel $release ($machine), lsm $(cat /sys/kernel/security/lsm 2>/dev/null)"
IFS=. read -r major minor _ <<<"$release"
at_least() { [ "$major" -gt "$1" ] || { [ "$major" = "$1" ] && [ "${minor%%[!0-9]*}" -ge "$2" ]; }; }

# doctor exits 1 when the default (native) backend cannot run here.
floor_rc=0
at_least 5 12 || floor_rc=1
expect_exit $floor_rc "doctor --json" rf doctor --json
is "doctor names the build's architecture, the kernel's" "$(jget 'j["architecture"]["build"]')" "$machine"
case $machine in
    x86_64) abis="i386, x32" ;;
    aarch64) abis="arm (AArch32)" ;;
    *) abis="?" ;;
esac
is "doctor names the other ABIs the filter kills" "$(jget 'j["architecture"]["killed_abis"]')" "$abis"
# The ABI each release brings (Documentation/userspace-api/landlock.rst),
# when Landlock is in this boot's LSM list at all.
want=0
if grep -qw landlock /sys/kernel/security/lsm 2>/dev/null; then
    for v in "6.12 6" "6.10 5" "6.7 4" "6.2 3" "5.19 2" "5.13 1"; do
        set -- $v
        if at_least "${1%.*}" "${1#*.}"; then want=$2; break; fi
    done
fi
is "doctor: Landlock ABI $want, as Linux $major.$minor brings" "$(jget 'j["landlock"]["abi"]')" "$want"
expect_exit $floor_rc "doctor (text)" rf doctor
contains "doctor text: the architecture line" "$OUT" "architecture     $machine build"

expect_exit 0 "plan -- true" rf plan -- true
is "plan names the architecture" "$(jget 'j["architecture"]')" "$machine"

if at_least 5 12; then
    expect_exit 0 "run -- uname -m" rf run -- uname -m
    is "the sandboxed command sees the same machine" "$OUT" "$machine"
else
    skip "run -- uname -m" "Linux $release is below the native backend's floor (checks/floor.sh)"
fi
