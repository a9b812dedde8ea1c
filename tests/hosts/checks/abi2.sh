# SPDX-License-Identifier: LGPL-2.1-or-later
# Host debian12-abi2: Landlock ABI 2 (Linux 6.1). plan and doctor name what
# the newer ABIs would add (truncation 3, TCP rules 4, IPC scoping 6), and
# --landlock required refuses what this ABI cannot give.
. "$(dirname "$0")/lib.bash"

expect_exit 0 "doctor --json" rf doctor --json
is "control: doctor sees Landlock ABI 2" "$(jget 'j["landlock"]["abi"]')" 2
lacks_ll=$(jget 'j["backends"]["landlock"]["lacks"]')
contains "doctor: landlock backend lacks truncation (ABI 3)" "$lacks_ll" "truncate(2) is not checked (needs Landlock ABI 3)"
contains "doctor: landlock backend lacks TCP rules (ABI 4)" "$lacks_ll" "TCP is not checked by Landlock (needs ABI 4)"
contains "doctor: landlock backend lacks IPC scoping (ABI 6)" "$lacks_ll" "no scoping of abstract unix sockets and signals (needs Landlock ABI 6)"
expect_exit 0 "doctor (text)" rf doctor
contains "doctor: landlock yes, ABI 2" "$OUT" "yes, ABI 2"
contains "doctor text names ABI 6's scoping" "$OUT" "needs Landlock ABI 6"

expect_exit 0 "plan -- true" rf plan -- true
is "plan: landlock ABI 2" "$(jget 'j["landlock"]["abi"]')" 2
is "plan: no TCP rules" "$(jget 'j["landlock"]["tcp_denied"]')" false
is "plan: no IPC scoping" "$(jget 'j["landlock"]["ipc_scoped"]')" false

# The cannot list names the ABI gaps where Landlock is the wall: the
# landlock backend (native has namespaces for TCP and signals).
expect_exit 0 "plan --backend landlock --accept-weaker -- true" rf plan --backend landlock --accept-weaker -- true
cannot=$(jget 'j["cannot"]')
contains "plan cannot: truncation (ABI 3)" "$cannot" "truncate(2) is not checked (needs Landlock ABI 3, this kernel has 2)"
contains "plan cannot: TCP (ABI 4)" "$cannot" "TCP is not checked by Landlock (needs ABI 4, this kernel has 2)"
contains "plan cannot: IPC scoping (ABI 6)" "$cannot" "no scoping of signals and abstract unix sockets (needs Landlock ABI 6, this kernel has 2)"

expect_exit 0 "run --backend landlock --accept-weaker -- true runs on ABI 2" rf run --backend landlock --accept-weaker -- true
expect_exit 0 "run --landlock best-effort -- true runs" rf run --landlock best-effort -- true
expect_exit 125 "run --landlock required -- true refuses (IPC scoping needs ABI 6)" rf run --landlock required -- true
contains "the refusal names the ABI" "$ERR" "this kernel has 2"
