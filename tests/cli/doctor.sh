# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence doctor: its claims checked against independent observations
# (util-linux unshare, /proc/self/status, mountinfo, PATH), and its failure
# explanations checked inside bwrap sandboxes that break user namespaces or
# /proc on purpose.
. "$(dirname "$0")/../lib.sh"

# js EXPR FILE: evaluate EXPR with the JSON of FILE bound to j.
js() {
    node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
             const v = eval(process.argv[2]); console.log(v === null ? "null" : v);' "$2" "$1"
}

if ! command -v node >/dev/null; then
    skip "doctor --json" "node is needed to read JSON"
    exit 0
fi

expect_exit 0 "doctor --help exits 0" rf doctor --help
contains "help shows usage" "$OUT" "Usage: ringfence doctor"
expect_exit 125 "unknown option exits 125" rf doctor --bogus
contains "unknown option is named" "$ERR" "unknown option '--bogus'"
expect_exit 125 "extra argument exits 125" rf doctor extra
contains "extra argument is named" "$ERR" "unexpected argument 'extra'"

rc=0
rf doctor --json >"$SCRATCH/doctor.json" 2>"$SCRATCH/err" || rc=$?
J=$SCRATCH/doctor.json
check "doctor --json is JSON" node -e 'JSON.parse(require("fs").readFileSync(process.argv[1]))' "$J"
native=$(js 'j.backends.native.usable' "$J")
if [ "$native" = true ]; then want=0; else want=1; fi
if [ "$rc" = "$want" ]; then pass "exit $rc matches native usable=$native"; else
    fail "exit $rc does not match native usable=$native"; fi
is_ok=$(js 'j.ok' "$J")
if [ "$is_ok" = "$native" ]; then pass "ok equals the native backend's verdict"; else fail "ok=$is_ok native=$native"; fi

# User namespaces: the same steps done by util-linux must agree.
userns=$(js 'j.user_namespaces.usable' "$J")
if command -v unshare >/dev/null; then
    if unshare --user --map-root-user --mount --pid --net --ipc --uts --fork --mount-proc true 2>/dev/null; then
        real=true; else real=false; fi
    if [ "$userns" = "$real" ]; then pass "user namespaces usable=$userns, as unshare(1) finds"; else
        fail "doctor says user namespaces usable=$userns, unshare(1) says $real"; fi
else
    skip "user namespaces against unshare(1)" "no unshare"
fi

# seccomp mode of this very process tree.
mode=$(awk '/^Seccomp:/ {print $2}' /proc/self/status)
got=$(js 'j.seccomp.this_process.mode' "$J")
if [ "$got" = "${mode:--1}" ]; then pass "seccomp mode of this process: $got"; else fail "seccomp mode $got, /proc says $mode"; fi
check "seccomp usable is a boolean" test "$(js 'typeof j.seccomp.usable' "$J")" = boolean

# cgroup version from mountinfo.
v1=$(awk '{for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup") n++; break } } END {print n+0}' /proc/self/mountinfo)
v2=$(awk '{for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup2") n++; break } } END {print n+0}' /proc/self/mountinfo)
if [ "$v2" -gt 0 ] && [ "$v1" -gt 0 ]; then cg=hybrid; elif [ "$v2" -gt 0 ]; then cg=v2;
elif [ "$v1" -gt 0 ]; then cg=v1; else cg=none; fi
got=$(js 'j.cgroup.version' "$J")
if [ "$got" = "$cg" ]; then pass "cgroup version $got"; else fail "cgroup version $got, mountinfo says $cg"; fi

# Tools on PATH.
for t in bwrap firejail podman docker; do
    want=$(command -v "$t" 2>/dev/null || echo null)
    got=$(js "j.tools.$t" "$J")
    if [ "$got" = "$want" ]; then pass "tool $t: $got"; else fail "tool $t: doctor $got, PATH $want"; fi
done

# Landlock: when securityfs shows the LSM list, it must agree.
abi=$(js 'j.landlock.abi' "$J")
if [ -r /sys/kernel/security/lsm ]; then
    if grep -qw landlock /sys/kernel/security/lsm; then on=1; else on=0; fi
    if { [ "$on" = 1 ] && [ "$abi" -ge 1 ]; } || { [ "$on" = 0 ] && [ "$abi" = 0 ]; }; then
        pass "landlock ABI $abi agrees with the LSM list"; else fail "landlock ABI $abi, lsm list on=$on"; fi
else
    skip "landlock ABI against the LSM list" "securityfs not readable"
fi

expect_exit "$rc" "text report exits like --json" rf doctor
contains "text names the native backend" "$OUT" "backend native"
contains "text names the landlock backend" "$OUT" "backend landlock"
contains "text gives the Landlock line" "$OUT" "landlock "

# Item 6 of issue 13: doctor's limits are what run enforces (same code).
# On this v1/v2 hybrid doctor used to say "rlimits only" while run used v1.
if rf run --memory 256M --pids 256 --cpu 1 --timeout 60 --status-json "$SCRATCH/lim.json" -- true \
        >/dev/null 2>&1; then
    for l in memory pids cpu; do
        d=$(js "j.cgroup.limits.$l" "$J")
        r=$(js "j.limits.$l.enforced_by" "$SCRATCH/lim.json")
        if [ "$d" = "$r" ]; then pass "limit $l: doctor and run agree ($d)"; else fail "limit $l: doctor $d, run $r"; fi
    done
    case $(js 'j.cgroup.limits.memory' "$J") in
    cgroup-*) if grep -q "rlimits only" "$J"; then fail "cgroup limits but doctor says rlimits only"; else pass "no false rlimits claim"; fi ;;
    *) pass "rlimit fallback: run's own warning is listed" ;;
    esac
else
    skip "doctor's limits against run's" "run with limits fails here"
fi

# Broken on purpose: nested user namespaces switched off by bwrap.
bw() { bwrap --dev-bind / / "$@"; }
if command -v bwrap >/dev/null && bw --unshare-user --disable-userns true 2>/dev/null; then
    expect_exit 1 "without user namespaces: exit 1" bw --unshare-user --disable-userns "$RINGFENCE" doctor --json
    printf '%s' "$OUT" >"$SCRATCH/no-userns.json"
    check "without user namespaces: native not usable" test "$(js 'j.backends.native.usable' "$SCRATCH/no-userns.json")" = false
    check "without user namespaces: failed at unshare" test "$(js 'j.user_namespaces.failed_step' "$SCRATCH/no-userns.json")" = "unshare(CLONE_NEWUSER)"
    check "without user namespaces: a reason is given" test "$(js 'j.user_namespaces.reasons.length' "$SCRATCH/no-userns.json")" -ge 1
    check "without user namespaces: the none backend still works" test "$(js 'j.backends.none.usable' "$SCRATCH/no-userns.json")" = true
else
    skip "doctor without user namespaces" "bwrap --disable-userns cannot run here"
fi

# Broken on purpose: part of /proc covered, as container runtimes do
# (tests/lib.sh: masked_proc builds it with no other procfs in reach).
if masked_proc_ready; then
    expect_exit 1 "with /proc masked: exit 1" masked_proc "$RINGFENCE" doctor
    contains "with /proc masked: the step is named" "$OUT" "mounting /proc"
    contains "with /proc masked: the landlock backend is suggested" "$OUT" "use --backend landlock"
else
    skip "doctor with /proc masked" "$MASKED_WHY"
fi

# Ubuntu's restricted user namespaces (kernel.apparmor_restrict_unprivileged_
# userns = 1): the namespace is made, then a privileged step in it fails.
# This kernel has no AppArmor, so the test hook RF_TEST_APPARMOR stands for
# the sysctl and the process's label, and the masked /proc is the failure.
hook_rc=0
env RF_TEST_FAULT_STEP=instance-dirs "$RINGFENCE" run -- true </dev/null >/dev/null 2>&1 || hook_rc=$?
if [ "$hook_rc" != 137 ]; then
    skip "AppArmor's restriction is recognised" "built without -Dtest_hooks=true"
elif ! masked_proc_ready; then
    skip "AppArmor's restriction is recognised" "$MASKED_WHY"
else
    # Root in bwrap's namespace maps only itself: its uid 0 would be host
    # root, accepted here so that the start reaches the mounts.
    aa_opts=(); is_root && aa_opts=(--accept-weaker)
    expect_exit 125 "AppArmor restricts, ringfence unconfined: run fails" \
        masked_proc env RF_TEST_APPARMOR="1 unconfined" "$RINGFENCE" run "${aa_opts[@]}" -- true
    contains "... and says AppArmor is the cause" "$ERR" "apparmor_restrict_unprivileged_userns = 1"
    contains "... naming the profile the package ships" "$ERR" "apparmor_parser -r /etc/apparmor.d/ringfence"
    contains "... and the landlock backend" "$ERR" "--backend landlock"
    expect_exit 1 "... doctor says the same" masked_proc env RF_TEST_APPARMOR="1 unconfined" "$RINGFENCE" doctor
    contains "... doctor names the profile" "$OUT" "/etc/apparmor.d/ringfence"
    expect_exit 125 "under ringfence's own profile: another cause" \
        masked_proc env RF_TEST_APPARMOR="1 ringfence" "$RINGFENCE" run "${aa_opts[@]}" -- true
    lacks "... not blamed on AppArmor" "$ERR" "apparmor_parser"
    contains "... but on the masked /proc" "$ERR" "masked /proc"
    expect_exit 125 "the sysctl at 0: not AppArmor" masked_proc env RF_TEST_APPARMOR="0 unconfined" "$RINGFENCE" run "${aa_opts[@]}" -- true
    lacks "... not blamed on AppArmor" "$ERR" "apparmor_parser"
fi
