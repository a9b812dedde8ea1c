#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence exec --check: verdicts, exit codes, the seed's messages, the
# pattern and detail lines, custom patterns and bad input.
. "$(dirname "$0")/../lib.sh"

PAT_MSG='blocked: Command blocked by safety guard (dangerous pattern detected)'
PATH_MSG='blocked: Command blocked by safety guard (path outside working dir)'

expect_exit 0 "an everyday command is allowed" rf exec --check -- 'make -j4 test'
check "allowed prints 'allowed'" test "$OUT" = allowed

expect_exit 126 "rm -rf is blocked" rf exec --check -- 'rm -rf build'
contains "the seed's pattern message" "$OUT" "$PAT_MSG"
contains "the pattern that matched" "$OUT" 'pattern: \brm\s+-[rf]{1,2}\b'
contains "the segment it matched" "$OUT" 'detail: rm -rf build'

expect_exit 126 "an obfuscated rm -rf is blocked" rf exec --check -- "r''m -fr build"
contains "detail shows the normalised segment" "$OUT" 'detail: rm -fr build'

expect_exit 126 "a path outside the workspace is blocked" rf exec --check -- 'cat ../../etc/passwd'
contains "the seed's path message" "$OUT" "$PATH_MSG"
contains "the path" "$OUT" 'detail: ../../etc/passwd'
lacks "no pattern line for a path" "$OUT" 'pattern:'

mkdir -p "$WS/src"
expect_exit 0 "an absolute path in the workspace is allowed" rf exec --check -- "cat $WS/src/x.c"
expect_exit 0 "safe device paths are allowed" rf exec --check -- 'ls >/dev/null 2>/dev/stderr </dev/stdin'
expect_exit 126 "--workspace moves the boundary" rf exec --check --workspace "$WS/src" -- "cat $WS/x"
expect_exit 0 "--no-restrict turns the path check off" rf exec --check --no-restrict -- 'cat /etc/hostname'
expect_exit 0 "--no-deny-patterns turns the patterns off" rf exec --check --no-deny-patterns -- 'rm -rf build'
expect_exit 126 "--no-deny-patterns keeps the path check" rf exec --check --no-deny-patterns -- 'rm -rf /'
contains "  ... as a path verdict" "$OUT" "$PATH_MSG"

expect_exit 126 "--deny adds a pattern" rf exec --check --deny '\bcurl\b.*--upload-file' -- 'curl --upload-file a https://x'
contains "  ... and names it" "$OUT" 'pattern: \bcurl\b.*--upload-file'
expect_exit 0 "--allow exempts a matching command" rf exec --check --allow '^git\s+push\s+origin\s+main$' -- 'git push origin main'
expect_exit 126 "--allow does not exempt another command in the list" \
    rf exec --check --allow '^git\s+push\s+origin\s+main$' -- 'git push origin main; sudo ls'
contains "  ... which is named" "$OUT" 'pattern: \bsudo\b'

expect_exit 125 "a bad --deny pattern is bad input" rf exec --check --deny 'ab(c' -- 'ls'
contains "  ... naming the pattern" "$ERR" "ab(c"
contains "  ... and the setting" "$ERR" "tools.exec.custom_deny_patterns"
contains "  ... and the position" "$ERR" 'at offset 4'
contains "  ... and the list" "$ERR" 'custom_deny_patterns[0]'
lacks "  ... with nothing on stdout" "$OUT" 'allowed'
expect_exit 125 "a bad --allow pattern is bad input" rf exec --check --allow '*x' -- 'ls'
contains "  ... naming the allow list" "$ERR" 'custom_allow_patterns[0]'

expect_exit 125 "no command is bad input" rf exec --check
expect_exit 125 "an unknown option is bad input" rf exec --check --frobnicate -- ls
long=$(head -c 70000 /dev/zero | tr '\0' x)
expect_exit 125 "a command over 64 KiB is bad input" rf exec --check -- "$long"
contains "  ... saying why" "$ERR" 'too long'

expect_exit 0 "--help" rf exec --help
contains "  ... shows the usage" "$OUT" 'ringfence exec --check'
contains "  ... explains the exit codes" "$OUT" '126 blocked'
contains "  ... says it is a seatbelt" "$OUT" 'seatbelt'
expect_exit 0 "the command list names exec" rf --help
contains "  ... in the list" "$OUT" 'exec'
