# SPDX-License-Identifier: LGPL-2.1-or-later
# Stdio is the command's alone: bytes pass through untouched both ways,
# and ringfence never writes to stdout (JSON-RPC servers run over it).
. "$(dirname "$0")/common.bash"

big="$SCRATCH/big"
head -c 50M /dev/urandom >"$big"
want=$(sha256sum <"$big" | cut -d' ' -f1)
rc=0
rf run -- cat <"$big" >"$SCRATCH/big.out" 2>"$SCRATCH/err" || rc=$?
check "50 MB through 'ringfence run -- cat' exits 0" test "$rc" = 0
check "50 MB through 'ringfence run -- cat' arrive intact (sha256)" \
    test "$(sha256sum <"$SCRATCH/big.out" | cut -d' ' -f1)" = "$want"
check "nothing on stderr meanwhile" test ! -s "$SCRATCH/err"
rm -f "$big" "$SCRATCH/big.out"

expect_exit 0 "stdin at EOF reaches the command as EOF" rf run -- wc -c
check "the command read 0 bytes" test "$(tr -d ' ' <<<"$OUT")" = 0
expect_exit 0 "a silent command" rf run --log-level debug -- true
check "ringfence writes nothing on stdout, even at debug level" test -z "$OUT"
contains "control: debug output went to stderr" "$ERR" "linux isolation mount plan"
expect_exit 3 "an exit status travels back" rf run -- sh -c 'echo out; echo err >&2; exit 3'
check "stdout carries exactly the command's output" test "$OUT" = out
