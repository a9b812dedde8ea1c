#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A plain command of the exec tool (`ringfence exec -- 'git status'`) runs
# without the shell: that path must not widen the sandbox, skip the guard,
# or hand the command anything the shell would not have had.
. "$(dirname "$0")/common.bash"

# A program found only in the caller's PATH: `ringfence run` exposes its
# directory read-only (seed 000); the exec tool, which means what /bin/sh in
# the sandbox means, must not: the shell there finds nothing.
mkdir -p "$SCRATCH/callerbin"
printf '#!/bin/sh\necho ran-from-the-callers-path\n' >"$SCRATCH/callerbin/rf-caller-only-tool"
chmod 755 "$SCRATCH/callerbin" "$SCRATCH/callerbin/rf-caller-only-tool"
chmod 755 "$SCRATCH"
expect_exit 0 "control: run finds a caller-PATH program (its directory exposed)" \
    env PATH="$SCRATCH/callerbin:$PATH" "$RINGFENCE" run -- rf-caller-only-tool
contains "control: it ran" "$OUT" "ran-from-the-callers-path"
expect_exit 127 "exec: the same plain command is not found, as in the sandbox's shell" \
    env PATH="$SCRATCH/callerbin:$PATH" "$RINGFENCE" exec -- rf-caller-only-tool
lacks "exec: it did not run" "$OUT" "ran-from-the-callers-path"
contains "exec: the shell's own message" "$ERR" "rf-caller-only-tool: not found"

# The guard judges a plain command as any other.
touch "$WS/marker"
expect_exit 126 "a plain 'rm -rf marker' is still blocked by the guard" rf exec -- rm -rf marker
check "and nothing ran: the marker is there" test -e "$WS/marker"

# It holds its stdio and nothing else of ringfence's (a report channel in
# its hands could forge the messages of the sandbox's init).
printf '#!/bin/sh\nls /proc/$$/fd\n' >"$WS/fds.sh"
chmod +x "$WS/fds.sh"
expect_exit 0 "a plain command lists its descriptors" rf exec -- ./fds.sh
fds=$(sort -n <<<"$OUT" | tr "\n" " ")
check "only stdio and the script itself are open (got: $fds)" test "$fds" = "0 1 2 10 "

# It runs once: a command whose exec worked is never rerun.
printf '#!/bin/sh\necho ran >> once.log\nexit 3\n' >"$WS/once.sh"
chmod +x "$WS/once.sh"
expect_exit 3 "a plain command that fails runs once" rf exec -- ./once.sh
check "exactly one line in once.log" test "$(cat "$WS/once.log")" = ran
