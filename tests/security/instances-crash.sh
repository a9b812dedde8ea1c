# SPDX-License-Identifier: LGPL-2.1-or-later
# Instances against crashes and each other: ringfence is SIGKILLed after
# every step of `instance create`, `instance rm` and `instance gc` (the
# test-only hook RINGFENCE_TEST_INSTANCE_FAULT_STEP=OP:N, compiled in with
# -Dtest_hooks=true), and after each kill the next command must find a
# consistent registry: the half-made instance absent or whole, nothing left
# behind (staging trees, journals, temporary files, also next to a --target
# outside the root), no stale lock in the way of the next create or rm, the
# credential never readable by others. Two concurrent creates of one name
# give one instance and one clear error.
. "$(dirname "$0")/common.bash"
inst="$RINGFENCE_HOME/instances"
secret="crash-secret-$TOKEN"
printf '{"token":"%s"}\n' "$secret" >"$SCRATCH/auth.json"
chmod 600 "$SCRATCH/auth.json"
mkdir -p "$SCRATCH/cfg/sub" "$SCRATCH/targets"
echo conf >"$SCRATCH/cfg/sub/c.json"

killed_at() { # OP STEP CMD...: run CMD with the hook; its exit status
    local op=$1 step=$2; shift 2
    local rc=0
    RINGFENCE_TEST_INSTANCE_FAULT_STEP="$op:$step" "$@" >/dev/null 2>&1 </dev/null || rc=$?
    echo "$rc"
}

# Without the hook compiled in, the variable does nothing: skip.
if [ "$(killed_at create 1 rf instance create probe)" != 137 ]; then
    skip "kill-at-each-step tests" "this build has no test hooks (meson configure BUILD -Dtest_hooks=true)"
    exit 0
fi
check "control: the hook killed create at step 1, before anything was made" test ! -e "$inst/probe.json"

# consistent NAME TARGET: after the next command, NAME is either whole or
# absent, and nothing of an interrupted step remains anywhere.
consistent() {
    local name=$1 tree=$2 bad=""
    if [ -e "$inst/$name.json" ]; then
        for d in config data state cache runtime home tmp; do
            [ -d "$tree/$d" ] || bad="$bad missing:$d"
        done
        grep -q "$secret" "$tree/data/auth.json" 2>/dev/null || bad="$bad no-credential"
    else
        [ ! -e "$tree" ] || bad="$bad tree-without-instance"
    fi
    local left
    left=$(cd "$inst" && ls -A | grep -E '^\.(new|old|pending)-|\.tmp$|rf-copy' || true)
    left="$left$(ls -A "$SCRATCH/targets" | grep -E 'rf-(new|old)-' || true)"
    [ -z "$left" ] || bad="$bad leftovers:$left"
    # Every file that holds the secret is readable by its owner only.
    local open
    open=$(find "$RINGFENCE_HOME" "$SCRATCH/targets" -type f -perm /077 -exec grep -l "$secret" {} + 2>/dev/null || true)
    [ -z "$open" ] || bad="$bad readable-by-others:$open"
    [ -z "$bad" ] || { diag "$name:$bad"; return 1; }
}

listed() { rf instance list --json | python3 -c '
import json, sys; names = [i["name"] for i in json.load(sys.stdin)]; sys.exit(0 if sys.argv[1] in names else 1)' "$1"; }

# ── create, killed after each step, default place and a --target ──
for where in root target; do
    step=1
    while :; do
        name="c-$where-$step"
        tree="$inst/$name" extra=()
        [ "$where" = target ] && tree="$SCRATCH/targets/$name" extra=(--target "$tree")
        rc=$(killed_at create "$step" rf instance create "$name" "${extra[@]}" \
            --credential "$SCRATCH/auth.json" --copy "$SCRATCH/cfg:config/app")
        [ "$rc" = 137 ] || break
        expect_exit 0 "create ($where) killed at step $step: the next command works" rf instance list
        check "create ($where) killed at step $step: all or nothing, nothing left" consistent "$name" "$tree"
        if listed "$name"; then
            expect_exit 0 "...the instance that was completed can be removed" rf instance rm "$name"
        else
            expect_exit 0 "...no stale lock blocks creating it again" rf instance create "$name" "${extra[@]}" \
                --credential "$SCRATCH/auth.json"
            expect_exit 0 "...and removing it" rf instance rm "$name"
        fi
        check "...after which nothing of it remains" test ! -e "$tree" -a ! -e "$inst/$name.json"
        step=$((step + 1))
        [ $step -le 20 ] || { fail "create: the hook never stopped firing"; break; }
    done
    check "create ($where): $((step - 1)) steps were killed, then it ran to its end (exit $rc)" \
        test "$rc" = 0 -a "$step" -gt 5
    check "...and that last create is whole" consistent "c-$where-$step" "$tree"
    rf instance rm "c-$where-$step" >/dev/null 2>&1
done

# ── rm, killed after each step ──
step=1
while :; do
    name="r-$step"
    rf instance create "$name" --credential "$SCRATCH/auth.json" >/dev/null 2>&1 || { fail "create $name"; break; }
    rc=$(killed_at rm "$step" rf instance rm "$name")
    [ "$rc" = 137 ] || break
    expect_exit 0 "rm killed at step $step: the next command works" rf instance list
    check "rm killed at step $step: all or nothing, nothing left" consistent "$name" "$inst/$name"
    if listed "$name"; then
        expect_exit 0 "...the instance still there is usable" rf run --instance "$name" -- true
        expect_exit 0 "...and no stale lock blocks its removal" rf instance rm "$name"
    else
        expect_exit 0 "...the name can be created again" rf instance create "$name"
        expect_exit 0 "...and removed" rf instance rm "$name"
    fi
    step=$((step + 1))
    [ $step -le 20 ] || { fail "rm: the hook never stopped firing"; break; }
done
check "rm: $((step - 1)) steps were killed, then it ran to its end (exit $rc)" test "$rc" = 0 -a "$step" -gt 3
check "...and the last rm left nothing" consistent "r-$step" "$inst/r-$step"

# ── gc, killed after each thing it collects ──
leftovers() { # a killed ephemeral run, an interrupted create (--target), remove, orphan tree
    "$RINGFENCE" run --instance g4 --ephemeral -- sleep 60 >/dev/null 2>&1 &
    local runner=$!
    for _ in $(seq 100); do rf instance show g4 --json 2>/dev/null | grep -q '"running": 1' && break; sleep 0.1; done
    RINGFENCE_TEST_INSTANCE_FAULT_STEP=create:7 rf instance create g5 --target "$SCRATCH/targets/g5" >/dev/null 2>&1
    mkdir -p "$inst/.new-g1-1/home" "$inst/.old-g2-1/home" "$inst/g3/home"
    kill -9 "$runner"; wait "$runner" 2>/dev/null
}
step=1
while :; do
    leftovers
    rc=$(killed_at gc "$step" rf instance gc)
    [ "$rc" = 137 ] || break
    expect_exit 0 "gc killed at step $step: the next gc finishes" rf instance gc
    check "...nothing is left" consistent g5 "$SCRATCH/targets/g5"
    check "...no orphan tree, no ephemeral instance" test ! -e "$inst/g3" -a ! -e "$inst/g4.json" -a ! -e "$inst/g4"
    step=$((step + 1))
    [ $step -le 20 ] || { fail "gc: the hook never stopped firing"; break; }
done
check "gc: $((step - 1)) steps were killed, then it ran to its end (exit $rc)" test "$rc" = 0 -a "$step" -gt 4
check "...and the last gc left nothing" test -z "$(ls -A "$inst" | grep -vE '^\.lock$')"

# ── concurrency: two creates of one name, create against gc and rm ──
for i in 1 2 3; do
    rf instance create "same-$i" --credential "$SCRATCH/auth.json" >"$SCRATCH/a.out" 2>"$SCRATCH/a.err" &
    a=$!
    rf instance create "same-$i" --credential "$SCRATCH/auth.json" >"$SCRATCH/b.out" 2>"$SCRATCH/b.err" &
    b=$!
    ra=0 rb=0
    wait $a || ra=$?
    wait $b || rb=$?
    check "two concurrent creates of same-$i: one succeeds, one is refused ($ra, $rb)" \
        test "$((ra + rb))" = 125 -a "$ra" -ne "$rb"
    contains "...with a clear error" "$(cat "$SCRATCH/a.err" "$SCRATCH/b.err")" "instance same-$i exists already"
    check "...and the one instance is whole" consistent "same-$i" "$inst/same-$i"
done
for i in 1 2 3 4 5 6; do rf instance create "p-$i" >/dev/null 2>&1 & done
rf instance gc >/dev/null 2>&1 &
rf instance rm same-1 >/dev/null 2>&1 &
wait
expect_exit 0 "creates, a gc and an rm at once" rf instance list --json
n=$(python3 -c 'import json,sys; print(len([i for i in json.loads(sys.argv[1]) if i["name"].startswith("p-")]))' "$OUT")
check "...all six creates took effect ($n)" test "$n" = 6
check "...the rm too" test ! -e "$inst/same-1.json" -a ! -e "$inst/same-1"
check "...and nothing was left half-done" test -z "$(ls -A "$inst" | grep -E '^\.(new|old|pending)-|\.tmp$')"
