# SPDX-License-Identifier: LGPL-2.1-or-later
# Host debian12-nouserns: user.max_user_namespaces = 0. The native backend
# cannot run, --backend auto falls back to landlock and says why, doctor
# agrees, and --backend native refuses with a clear message.
. "$(dirname "$0")/lib.bash"

# Controls: the host really is in the state the checks below are about.
is "control: user.max_user_namespaces is 0" "$(cat /proc/sys/user/max_user_namespaces)" 0
if unshare --user true 2>/dev/null; then fail "control: unshare --user fails"; else pass "control: unshare --user fails"; fi

# auto: the default policy needs namespaces, so landlock may only run it
# with --accept-weaker (docs/backends.md, "auto").
expect_exit 0 "run --backend auto --accept-weaker -- true runs" rf run --backend auto --accept-weaker -- true
contains "auto warns that it picked landlock" "$ERR" "backend auto: landlock"
contains "... and why: user namespaces failed" "$ERR" "native backend cannot run here (unshare"
expect_exit 125 "run --backend auto -- true without --accept-weaker refuses" rf run --backend auto -- true
contains "the refusal names landlock as auto's choice" "$ERR" "landlock"
contains "the refusal names --accept-weaker" "$ERR" "--accept-weaker"

expect_exit 0 "plan --backend auto --accept-weaker -- true" rf plan --backend auto --accept-weaker -- true
is "plan: backend is landlock" "$(jget 'j["backend"]')" landlock
contains "plan: backend_reason says why" "$(jget 'j["backend_reason"]')" "auto: landlock, since the native backend cannot run here"

# doctor: exit 1 (the default backend, native, cannot run), and the same
# choice as auto.
expect_exit 1 "doctor exits 1: native is not usable" rf doctor
contains "doctor: user namespaces no" "$OUT" "user namespaces  no"
contains "doctor: --backend auto picks landlock here" "$OUT" "--backend auto picks landlock here"
expect_exit 1 "doctor --json exits 1" rf doctor --json
is "doctor --json: native not usable" "$(jget 'j["backends"]["native"]["usable"]')" false
is "doctor --json: auto_backend landlock" "$(jget 'j["auto_backend"]')" landlock
is "doctor --json: user_namespaces.usable false" "$(jget 'j["user_namespaces"]["usable"]')" false
contains "doctor --json: a reason names user.max_user_namespaces" \
    "$(jget 'j["user_namespaces"]["reasons"]')" "user.max_user_namespaces"

# native, asked for by name: no fallback, a clear refusal.
expect_exit 125 "run --backend native -- true exits 125" rf run --backend native -- true
contains "the refusal says user namespaces are the problem" "$ERR" "user namespace"
contains "the refusal carries a hint" "$ERR" "hint:"
diag "run --backend native said: ${ERR:0:300}"
