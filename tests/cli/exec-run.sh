#!/usr/bin/env bash
# ringfence exec without --check: the guard, then /bin/sh -c in the sandbox
# (a plain command's words directly), in the workspace, with the exec
# tool's timeout.
. "$(dirname "$0")/../lib.sh"

expect_exit 0 "an allowed command runs" rf exec -- 'echo hello; echo made > made.txt'
[ "$OUT" = hello ] && pass "its stdout passes through" || fail "its stdout passes through ($OUT)"
[ "$(cat "$WS/made.txt" 2>/dev/null)" = made ] && pass "it wrote into the workspace" || fail "it wrote into the workspace"
expect_exit 3 "the command's exit status" rf exec -- 'exit 3'
mkdir -p "$WS/sub"
out=$(cd "$WS/sub" && rf exec --workspace "$WS" -- pwd)
[ "$out" = "$WS" ] && pass "it runs in the workspace root" || fail "it runs in the workspace root ($out)"
out=$(rf exec --chdir "$WS/sub" -- pwd)
[ "$out" = "$WS/sub" ] && pass "--chdir moves it" || fail "--chdir moves it ($out)"

expect_exit 126 "a dangerous command is blocked" rf exec -- 'rm -rf /'
contains "the seed's message" "$ERR" "Command blocked by safety guard (dangerous pattern detected)"
contains "the pattern that matched" "$ERR" 'pattern: \brm\s+-[rf]{1,2}\b'
[ -z "$OUT" ] && pass "a blocked command prints nothing on stdout" || fail "a blocked command prints nothing on stdout"
expect_exit 126 "a path outside the workspace is blocked" rf exec -- "cat $SCRATCH/secret"
contains "the seed's path message" "$ERR" "Command blocked by safety guard (path outside working dir)"
touch "$WS/marker"
expect_exit 126 "obfuscated rm is blocked" rf exec -- "r''m -fr marker"
[ -e "$WS/marker" ] && pass "and nothing ran" || fail "and nothing ran"
expect_exit 0 "--allow exempts a command" rf exec --allow '^rm -rf build$' -- 'rm -rf build'
expect_exit 0 "--no-deny-patterns turns the patterns off" rf exec --no-deny-patterns -- 'rm -rf build'

# A plain command (words only) runs without the shell, with the meaning
# the shell gives it: executed directly, a script is the child of the
# sandbox's init (pid 1); through the shell, the shell's.
printf '#!/bin/sh\nset -- $(cat /proc/$$/stat)\necho $4\n' > "$WS/ppid.sh"
printf 'echo from a script without a hashbang line\n' > "$WS/no-hashbang"
chmod +x "$WS/ppid.sh" "$WS/no-hashbang"
mkdir -p "$WS/a-dir"
expect_exit 0 "a plain command runs" rf exec -- ./ppid.sh
[ "$OUT" = 1 ] && pass "a plain command is executed without a shell" || fail "a plain command is executed without a shell ($OUT)"
expect_exit 0 "control: the same through the shell" rf exec -- '{ ./ppid.sh; }'
[ "$OUT" != 1 ] && pass "control: through the shell, the shell is its parent" || fail "control: through the shell ($OUT)"
# The same outcome as through the shell, failures included (not found, a
# directory, no #! line: those go to the shell); the environment as a set.
for cmd in env 'ls -a' ./no-hashbang ./a-dir "no-such-program-$$" 'printenv PWD'; do
    plain_rc=0 shell_rc=0
    rf exec -- "$cmd" >"$SCRATCH/plain" 2>&1 || plain_rc=$?
    rf exec -- "{ $cmd; }" >"$SCRATCH/shell" 2>&1 || shell_rc=$?
    plain=$(sort "$SCRATCH/plain") shell=$(sort "$SCRATCH/shell")
    if [ "$plain" = "$shell" ] && [ "$plain_rc" = "$shell_rc" ]; then
        pass "'$cmd': the shell's output and exit code ($plain_rc)"
    else
        fail "'$cmd': the shell's output and exit code"
        diag "plain ($plain_rc): $plain" "shell ($shell_rc): $shell"
    fi
done

# A PATH with a relative entry is searched by the shell, never by us: the
# workspace's own `ls` comes first, as it would under /bin/sh.
printf '#!/bin/sh\necho the workspace ls\n' > "$WS/ls"
chmod +x "$WS/ls"
expect_exit 0 "PATH=.:/usr/bin: a plain command still finds what the shell finds" \
    rf exec --env PATH=.:/usr/bin:/bin -- ls
[ "$OUT" = "the workspace ls" ] && pass "the workspace's ls, found through '.'" || fail "the workspace's ls ($OUT)"
rm -f "$WS/ls"

# What gets past the guard still meets the sandbox.
echo secret > "$SCRATCH/secret"
expect_exit 1 "the sandbox still confines what passes the guard" rf exec --no-restrict -- "cat $SCRATCH/secret"
lacks "the secret did not come back" "$OUT" "secret"

expect_exit 124 "--timeout ends it" rf exec --timeout 0.5 -- 'sleep 20'
printf '{"tools": {"exec": {"timeout": 1}}}\n' > "$SCRATCH/t.json"
expect_exit 124 "tools.exec.timeout from a config file applies" rf exec --config "$SCRATCH/t.json" -- 'sleep 20'
expect_exit 125 "no command" rf exec
expect_exit 0 "--help" rf exec --help
contains "--help says the guard is a seatbelt" "$OUT" "seatbelt"
