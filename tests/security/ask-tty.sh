# SPDX-License-Identifier: LGPL-2.1-or-later
# --ask tty (issue 31): the question on the caller's terminal, answered by
# a key; the harness (ask-tty.py) runs ringfence on a pty of its own and
# prints the TAP lines.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"
if [ "${RF_TEST_BACKEND:-native}" != native ]; then
    skip "asking on the terminal" "the pty is the native backend's"
    exit 0
fi
for tool in python3 curl; do
    if ! command -v "$tool" >/dev/null; then
        skip "asking on the terminal" "no $tool"
        exit 0
    fi
done
# The harness numbers its own checks and prints the plan.
trap 'rm -rf "$SCRATCH" 2>/dev/null' EXIT
python3 "$HERE/ask-tty.py" "$RINGFENCE" "$WS" "$SCRATCH"
