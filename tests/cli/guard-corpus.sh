#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The guard against two corpora: tests/guard/blocked.txt (obfuscated
# dangerous commands, one or more of every seed 001 category) and
# tests/guard/allowed.txt (everyday commands of coding agents). Prints the
# catch rate and the false-positive rate, and fails below issue 13's
# targets (>= 97% caught, <= 1% false positives).
. "$(dirname "$0")/../lib.sh"
corpus=$(cd "$(dirname "$0")/../guard" && pwd)

# Commands run from $WS, the workspace; one per line, '#' lines are comments.
# A command on the wrong side is reported (diag), and counted; the verdict
# is the rate against the targets of issue 13 (>= 97% caught, <= 1% false
# positives), not each line: the corpora are for measuring the guard.
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
            diag "$label: exit $rc, want $want: $line" "$(tr '\n' ' ' <"$SCRATCH/out")"
        fi
    done <"$file"
    eval "${label}_total=$total ${label}_hit=$hit"
}

# percent NUM DEN: NUM/DEN as a percentage with one decimal
percent() { awk -v n="$1" -v d="$2" 'BEGIN { printf "%.1f", d ? 100 * n / d : 0 }'; }

run_corpus "$corpus/blocked.txt" 126 blocked
run_corpus "$corpus/allowed.txt" 0 allowed
fp=$((allowed_total - allowed_hit))
echo "# caught: $blocked_hit/$blocked_total ($(percent "$blocked_hit" "$blocked_total")%)"
echo "# false positives: $fp/$allowed_total ($(percent "$fp" "$allowed_total")%)"
check "blocked corpus has at least 120 commands" test "$blocked_total" -ge 120
check "allowed corpus has at least 150 commands" test "$allowed_total" -ge 150
check "at least 97% of the dangerous commands are caught" test $((100 * blocked_hit)) -ge $((97 * blocked_total))
check "at most 1% of the everyday commands are blocked" test $((100 * fp)) -le "$allowed_total"
