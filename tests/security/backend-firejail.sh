#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The security battery against --backend firejail: every boundary script, with
# the failures firejail's `cannot` list declares (backend-firejail.expected) and
# nothing else. Skipped, with the reason, where firejail is absent or will not let
# this user in.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/backend-battery.bash"
battery firejail
