# SPDX-License-Identifier: LGPL-2.1-or-later
# Instances (seed 004): chat A's command cannot read chat B's home. For a
# root caller each instance has its own uid, so even with B's home made
# visible inside A's sandbox, its 0700 keeps A out; for every caller B's
# tree is not in A's sandbox at all, and neither is the registry (the
# metadata that says which uid an instance has). A symlink that A plants
# to lead outside is caught before A's next run.
. "$(dirname "$0")/common.bash"
inst="$RINGFENCE_HOME/instances"

rf instance create chat-a >/dev/null 2>&1 && rf instance create chat-b >/dev/null 2>&1 ||
    { fail "create two instances"; exit 0; }
echo "b-secret-$TOKEN" >"$SCRATCH/b-note"
RF_OPTS=(--instance chat-b)
in_ok "control: B writes a note in its home" write "$inst/chat-b/home/note"
rf run --instance chat-b -- cp "$SCRATCH/b-note" "$inst/chat-b/home/note" 2>/dev/null ||
    cp "$SCRATCH/b-note" "$inst/chat-b/home/note"
in_ok "control: B reads its own home" read "$inst/chat-b/home/note"

RF_OPTS=(--instance chat-a)
in_denied "A cannot see B's tree at all" read "$inst/chat-b/home/note"
contains "...it does not exist there (ENOENT)" "$OUT" ENOENT
in_denied "A cannot read the registry's metadata" read "$inst/chat-b.json"
# The registry is not in the sandbox: a write there lands (at most) on the
# sandbox's own scratch root, never on the host's metadata.
before=$(sha256sum <"$inst/chat-a.json")
inside write "$inst/chat-a.json" >/dev/null 2>&1 </dev/null
check "A cannot rewrite its own metadata on the host (its uid, its place)" \
    test "$(sha256sum <"$inst/chat-a.json")" = "$before"

if is_root; then
    ua=$(stat -c %u "$inst/chat-a"); ub=$(stat -c %u "$inst/chat-b")
    check "root caller: the two instances have different owners ($ua, $ub), neither root" \
        test "$ua" != "$ub" -a "$ua" != 0 -a "$ub" != 0
    check "root caller: B's home is 0700" test "$(stat -c %a "$inst/chat-b/home")" = 700
    RF_OPTS=(--instance chat-a --expose "$inst/chat-b/home")
    in_denied "A cannot read B's home even when it is made visible (0700, another owner)" \
        read "$inst/chat-b/home/note"
    contains "...permission denied (EACCES)" "$OUT" EACCES
    chmod 755 "$inst/chat-b/home"; chmod 644 "$inst/chat-b/home/note"
    in_ok "control: with B's home opened to others (755), the same read works" read "$inst/chat-b/home/note"
    chmod 700 "$inst/chat-b/home"
    expect_exit 0 "A's processes run as A's uid on the host" \
        rf run --instance chat-a -- sh -c 'sleep 1 & p=$!; cat /proc/self/status | grep ^Uid; wait'
    # The host sees the command as the instance's uid: check through a file it creates.
    rf run --instance chat-a -- sh -c 'echo x > $HOME/made' 2>/dev/null
    check "a file A creates belongs to A's uid on the host" test "$(stat -c %u "$inst/chat-a/home/made")" = "$ua"
elif [ -n "${RF_TEST_BACKEND:-}" ] && [ "$RF_TEST_BACKEND" != native ]; then
    # An instance with its own subordinate id is the native backend's alone:
    # another backend refuses it with a clear error, never runs it as the caller.
    if grep -q "^$(id -un):" /etc/subuid 2>/dev/null && command -v newuidmap >/dev/null &&
        rf instance create own-x --own-identity >/dev/null 2>&1; then
        expect_exit 125 "own identity under --backend $RF_TEST_BACKEND: refused" rf run --instance own-x -- true
        contains "...saying it needs the native backend" "$ERR" "needs the native backend"
        rf instance rm own-x >/dev/null 2>&1
    else
        skip "own identity under --backend $RF_TEST_BACKEND: refused" "no subordinate id range for $(id -un)"
    fi
elif grep -q "^$(id -un):" /etc/subuid 2>/dev/null && grep -q "^$(id -un):" /etc/subgid 2>/dev/null &&
    command -v newuidmap >/dev/null; then
    # Unprivileged caller with subordinate ranges: --own-identity.
    expect_exit 0 "own identity: create A" rf instance create own-a --own-identity
    expect_exit 0 "own identity: create B" rf instance create own-b --own-identity
    ua=$(stat -c %u "$inst/own-a"); ub=$(stat -c %u "$inst/own-b")
    check "the two instances' trees have different host owners ($ua, $ub), neither the caller" \
        test "$ua" != "$ub" -a "$ua" != "$(id -u)" -a "$ub" != "$(id -u)"
    check "...and are 0700" test "$(stat -c %a "$inst/own-b")" = 700
    rf run --instance own-b -- sh -c "echo b-secret-$TOKEN > \$HOME/note" 2>/dev/null
    RF_OPTS=(--instance own-b)
    in_ok "control: B reads its own home" read "$inst/own-b/home/note"
    RF_OPTS=(--instance own-a --expose "$inst/own-b")
    in_denied "A cannot read B's home even when it is made visible (0700, another owner)" \
        read "$inst/own-b/home/note"
    contains "...permission denied (EACCES)" "$OUT" EACCES
    rf run --instance own-b -- chmod 755 "$inst/own-b/home" 2>/dev/null
    rf run --instance own-b -- chmod 644 "$inst/own-b/home/note" 2>/dev/null
    rf run --instance own-b -- chmod 755 "$inst/own-b" 2>/dev/null
    in_ok "control: with B's tree opened to others (755), the same read works" read "$inst/own-b/home/note"
    rf run --instance own-b -- chmod 700 "$inst/own-b" "$inst/own-b/home" 2>/dev/null
    "$RINGFENCE" run --instance own-a -- sleep 3 >/dev/null 2>&1 &
    runner=$!
    wait_until 5 pgrep -u "$ua" -x sleep >/dev/null
    check "A's command runs as A's own host uid ($ua)" sh -c "pgrep -u $ua -x sleep >/dev/null"
    wait "$runner"
    expect_exit 0 "inside, A still sees itself as the caller's uid" rf run --instance own-a -- id -u
    check "...($OUT)" test "$OUT" = "$(id -u)"
    check "the caller itself cannot read B's home either (it is not B)" test ! -r "$inst/own-b/home/note"
    # A create killed half-way (the test-only hook; without it compiled in,
    # the create just completes, and there is nothing half-made to collect).
    hook_rc=0
    RINGFENCE_TEST_INSTANCE_FAULT_STEP=create:7 rf instance create own-c --own-identity >/dev/null 2>&1 || hook_rc=$?
    if [ "$hook_rc" = 137 ]; then
        expect_exit 0 "gc removes a half-made tree owned by a subordinate id" rf instance gc
        check "...it is gone" test ! -e "$inst/own-c"
    else
        skip "gc removes a half-made tree owned by a subordinate id" \
            "this build has no test hooks (meson configure BUILD -Dtest_hooks=true)"
        rf instance rm own-c >/dev/null 2>&1
    fi
    expect_exit 0 "rm removes a tree owned by a subordinate id" rf instance rm own-b
    check "...nothing of it is left" test ! -e "$inst/own-b" -a ! -e "$inst/own-b.json"
else
    skip "instances have distinct host uids" "needs a root caller, or subordinate ids for $(id -un) in /etc/subuid and /etc/subgid (docs/instances.md)"
fi

RF_OPTS=(--instance chat-a)
# Counted until the runner's own setup helpers have gone (firejail's exit
# just after its start; a process of the host's never would), bounded.
# firejail runs the command through a shell of its own (dash's `sh -c --
# env ...`, which forks): one more process, the runner's.
most=5
[ "${RF_TEST_BACKEND:-}" = firejail ] && most=6
expect_exit 0 "ps inside an instance's sandbox shows only its own processes" \
    rf run --instance chat-a -- sh -c "for i in \$(seq 30); do
        n=\$(ls /proc | grep -cE '^[0-9]+\$'); [ \"\$n\" -le $most ] && break; sleep 0.1; done; echo \"\$n\""
check "at most init, (firejail's shell,) sh, its subshell, ls, grep: $most ($OUT)" test "${OUT:-99}" -le "$most"

expect_exit 0 "A plants a symlink to the host's /etc in its home" \
    rf run --instance chat-a -- ln -s /etc "$inst/chat-a/home/etc-link"
expect_exit 125 "...and the next run of A refuses to start" rf run --instance chat-a -- true
contains "naming the link" "$ERR" "etc-link"
rm -f "$inst/chat-a/home/etc-link"
expect_exit 0 "control: without it A runs" rf run --instance chat-a -- true
