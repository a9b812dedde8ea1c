# SPDX-License-Identifier: LGPL-2.1-or-later
# The terminal: interactive commands behave inside as they do outside
# (docs/terminal.md). A harness (terminal.py) runs ringfence on a pty of
# its own and types at it as a person would; it prints the TAP lines.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
if [ "${RF_TEST_BACKEND:-native}" != native ]; then
    skip "a terminal inside" "the pty is the native backend's"
    exit 0
fi
if ! command -v python3 >/dev/null; then
    skip "a terminal inside" "no python3"
    exit 0
fi
# The harness numbers its own checks: print them after ours (none) and
# leave the plan line to it, not to lib.sh's trap.
trap 'rm -rf "$SCRATCH" 2>/dev/null' EXIT
python3 "$HERE/terminal.py" "$RINGFENCE" "$WS"
