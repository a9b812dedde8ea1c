#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence fs: each verb, its output, exit codes (0 done, 1 refused or
# failed, 125 bad usage) and the messages an agent sees.
. "$(dirname "$0")/../lib.sh"

OUTSIDE=$SCRATCH/outside
mkdir -p "$OUTSIDE"
echo 'TOP-SECRET' >"$OUTSIDE/secret"

# write / read
if printf 'one\ntwo\nthree\n' | rf fs write notes/a.txt; then pass "write: from stdin, parents created"
else fail "write: from stdin"; fi
check "write: content landed" [ "$(cat notes/a.txt)" = "$(printf 'one\ntwo\nthree')" ]
expect_exit 0 "read: whole file" rf fs read notes/a.txt
contains "read: prints the content" "$OUT" "two"
expect_exit 0 "read: --offset 2 --limit 1" rf fs read notes/a.txt --offset 2 --limit 1
check "read: only line 2" [ "$OUT" = "two" ]
expect_exit 1 "read: missing file exits 1" rf fs read nope.txt
contains "read: says not found" "$ERR" "ringfence: file not found: nope.txt"
expect_exit 1 "read: a directory exits 1" rf fs read notes
contains "read: says is a directory" "$ERR" "is a directory: notes"
printf 'a\0b' >bin.dat
expect_exit 1 "read: binary exits 1" rf fs read bin.dat
contains "read: says binary" "$ERR" "file looks binary: bin.dat"
head -c 300 /dev/zero | tr '\0' 'x' >big.txt
expect_exit 1 "read: over --max-read-bytes exits 1" rf fs read big.txt --max-read-bytes 100
contains "read: says too large" "$ERR" "file too large"

# append / edit
expect_exit 0 "append: --content" rf fs append notes/a.txt --content 'four'
check "append: appended" [ "$(tail -n1 notes/a.txt)" = "four" ]
expect_exit 0 "edit: one occurrence" rf fs edit notes/a.txt --old 'two' --new 'TWO'
check "edit: replaced" grep -qx TWO notes/a.txt
expect_exit 1 "edit: zero occurrences exits 1" rf fs edit notes/a.txt --old 'zzz' --new 'y'
contains "edit: says not found" "$ERR" "old text not found in notes/a.txt"
printf 'x x x\n' >x.txt
expect_exit 1 "edit: several occurrences exits 1" rf fs edit x.txt --old 'x' --new 'y'
contains "edit: says how many" "$ERR" "occurs 3 times in x.txt"
contains "edit: hints how to fix" "$ERR" "hint:"

# a read-only file stays read-only (root may write it, as with any write)
echo ro >ro.txt
chmod 444 ro.txt
if is_root; then skip "write: a read-only file is refused" "root bypasses permissions"
else
    expect_exit 1 "write: a read-only file is refused" rf fs write ro.txt --content x
    contains "write: says permission denied" "$ERR" "cannot write ro.txt: Permission denied"
    check "write: read-only file unchanged" [ "$(cat ro.txt)" = "ro" ]
fi

# list
expect_exit 0 "list: the workspace" rf fs list
contains "list: directories end in /" "$OUT" "notes/"
expect_exit 0 "list: recursive" rf fs list -r notes
check "list: recursive entries" [ "$OUT" = "a.txt" ]
expect_exit 0 "list: --max truncates, still exit 0" rf fs list --max 1
contains "list: says it stopped" "$ERR" "listing stopped after 1 entries"

# confinement
expect_exit 1 "confine: ../ exits 1" rf fs read ../outside/secret
contains "confine: exact message" "$ERR" "ringfence: access denied: path is outside the workspace"
lacks "confine: no secret on stdout" "$OUT" "TOP-SECRET"
expect_exit 1 "confine: absolute outside" rf fs read "$OUTSIDE/secret"
contains "confine: absolute says outside" "$ERR" "path is outside the workspace"
ln -s "$OUTSIDE/secret" link
expect_exit 1 "confine: symlink out exits 1" rf fs read link
contains "confine: says symlink" "$ERR" "access denied: symlink resolves outside workspace"
expect_exit 1 "confine: write through symlink out" rf fs write link --content pwned
check "confine: secret untouched" [ "$(cat "$OUTSIDE/secret")" = "TOP-SECRET" ]
expect_exit 1 "confine: /proc/self/root" rf fs read "/proc/self/root$OUTSIDE/secret"
lacks "confine: no secret via magic link" "$OUT" "TOP-SECRET"
expect_exit 0 "confine: absolute path inside is fine" rf fs read "$WS/notes/a.txt"

# loosening, explicitly
expect_exit 0 "allow-read: matching path" rf fs read "$OUTSIDE/secret" --allow-read "^$OUTSIDE/secret\$"
contains "allow-read: content" "$OUT" "TOP-SECRET"
expect_exit 1 "allow-read: does not allow writing" rf fs write "$OUTSIDE/secret" --content x \
    --allow-read "^$OUTSIDE/secret\$"
expect_exit 0 "allow-write: matching path" rf fs write "$OUTSIDE/w.txt" --content w --allow-write "^$OUTSIDE/w\\.txt\$"
check "allow-write: landed" [ "$(cat "$OUTSIDE/w.txt")" = "w" ]
expect_exit 0 "allow-read-outside: reads" rf fs read "$OUTSIDE/secret" --allow-read-outside
expect_exit 1 "allow-read-outside: writes stay confined" rf fs write "$OUTSIDE/x" --content x --allow-read-outside
expect_exit 0 "no-restrict: reads outside" rf fs read ../outside/secret --no-restrict
contains "no-restrict: warns on stderr" "$ERR" "warning: restrict_to_workspace is off"

# protected paths
expect_exit 1 "protected: .ringfence.json" rf fs write .ringfence.json --content '{}'
contains "protected: exact message" "$ERR" \
    "access denied: .ringfence.json is protected by the policy (protected_paths)"
mkdir -p .git/hooks
expect_exit 1 "protected: ./.git/../.git/hooks/x" rf fs write ./.git/../.git/hooks/x --content x
check "protected: nothing in hooks" [ ! -e .git/hooks/x ]

# --workspace
mkdir -p "$SCRATCH/other"
echo other >"$SCRATCH/other/o.txt"
expect_exit 0 "workspace: --workspace DIR" rf fs read o.txt --workspace "$SCRATCH/other"
contains "workspace: read from it" "$OUT" "other"

# usage
expect_exit 0 "usage: --help" rf fs --help
contains "usage: help documents exit status" "$OUT" "Exit status"
expect_exit 125 "usage: unknown verb" rf fs frobnicate x
expect_exit 125 "usage: missing PATH" rf fs read
expect_exit 125 "usage: edit without --old" rf fs edit x.txt --new y
expect_exit 125 "usage: bad --offset" rf fs read x.txt --offset -3
expect_exit 125 "usage: bad regex" rf fs read x.txt --allow-read '(('
contains "usage: names the setting" "$ERR" "tools.allow_read_paths[0]"
expect_exit 125 "usage: missing workspace" rf fs read x --workspace "$SCRATCH/none"
