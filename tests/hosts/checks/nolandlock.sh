# SPDX-License-Identifier: LGPL-2.1-or-later
# Host debian12-nolandlock: landlock left out of lsm=. --landlock required
# refuses with the fix; best-effort runs, and plan and doctor say that
# Landlock is missing (run itself stays quiet: docs/landlock.md).
. "$(dirname "$0")/lib.bash"

lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)
diag "lsm: $lsm"
lacks "control: landlock is not in the active LSM list" ",$lsm," ",landlock,"
contains "control: the LSM list is readable (securityfs)" "$lsm" "capability"

expect_exit 125 "run --landlock required -- true refuses" rf run --landlock required -- true
contains "the refusal says Landlock is disabled" "$ERR" "landlock: required, but disabled in this kernel"
contains "the hint names lsm=" "$ERR" "lsm="
expect_exit 125 "landlock backend refuses too" rf run --backend landlock --accept-weaker -- true

expect_exit 0 "run --landlock best-effort -- true runs" rf run --landlock best-effort -- true
expect_exit 0 "plan --landlock best-effort -- true" rf plan --landlock best-effort -- true
is "plan: landlock ABI 0" "$(jget 'j["landlock"]["abi"]')" 0
is "plan: landlock mode best-effort" "$(jget 'j["landlock"]["mode"]')" best-effort

expect_exit 0 "doctor exits 0 (native runs without Landlock)" rf doctor
contains "doctor: landlock disabled at boot" "$OUT" "no: disabled at boot"
contains "doctor: native lacks Landlock" "$OUT" "Landlock: not available (the mounts alone confine files)"
contains "doctor: the landlock backend cannot run" "$OUT" "Landlock: not available, so this backend cannot run"
expect_exit 0 "doctor --json" rf doctor --json
is "doctor --json: landlock.status" "$(jget 'j["landlock"]["status"]')" "disabled at boot"
is "doctor --json: landlock backend not usable" "$(jget 'j["backends"]["landlock"]["usable"]')" false
