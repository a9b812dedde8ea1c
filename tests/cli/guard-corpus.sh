#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guard against two corpora: tests/guard/blocked.txt (obfuscated
# dangerous commands: every one must be blocked) and tests/guard/allowed.txt
# (everyday developer commands: every one must pass). Prints the catch rate
# and the false-positive rate.
. "$(dirname "$0")/../lib.sh"
corpus=$(cd "$(dirname "$0")/../guard" && pwd)

# Commands run from $WS, the workspace; one per line, '#' lines are comments.
run_corpus() {
    local file=$1 want=$2 label=$3 total=0 hit=0 line rc
    while IFS= read -r line; do
        case $line in '' | '#'*) continue ;; esac
        total=$((total + 1))
        rc=0
        rf exec --check -- "$line" >"$SCRATCH/out" 2>&1 || rc=$?
        if [ "$rc" = "$want" ]; then
            hit=$((hit + 1))
        else
            fail "$label: $line"
            diag "exit $rc, want $want: $(tr '\n' ' ' <"$SCRATCH/out")"
        fi
    done <"$file"
    eval "${label}_total=$total ${label}_hit=$hit"
}

run_corpus "$corpus/blocked.txt" 126 blocked
run_corpus "$corpus/allowed.txt" 0 allowed
echo "# catch rate: $blocked_hit/$blocked_total"
echo "# false positives: $((allowed_total - allowed_hit))/$allowed_total"
check "blocked corpus has at least 40 commands" test "$blocked_total" -ge 40
check "allowed corpus has at least 60 commands" test "$allowed_total" -ge 60
check "every obfuscated command is caught" test "$blocked_hit" = "$blocked_total"
check "no everyday command is blocked" test "$allowed_hit" = "$allowed_total"
