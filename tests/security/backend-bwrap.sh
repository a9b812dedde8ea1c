#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The security battery against --backend bwrap: every boundary script, with
# the failures bwrap's `cannot` list declares (backend-bwrap.expected) and
# nothing else. Skipped, with the reason, where bwrap is absent or cannot
# create its namespaces.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/backend-battery.bash"
battery bwrap network-allowlist
