#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `ringfence export oci`: the bundle, run by crun, holds the same boundary
# as `ringfence run`. Each crossing is tried by rf-probe inside crun, with
# the same crossing tried on the host as the control.
#
# crun 1.8 refuses a cgroup v1/v2 hybrid whose v2 side has controllers
# (this test machine: hugetlb). There the test hides the v2 mount in a
# private mount namespace and runs crun without a cgroup manager: every
# boundary below still comes from the bundle; only the limits are then
# checked in config.json instead of enforced, and the cgroup namespace is
# taken out of the bundle (crun 1.8 checks the hybrid layout again for it).
. "$(dirname "$0")/common.bash"

if ! command -v crun >/dev/null; then
    skip "export oci under crun" "crun is not installed (scripts/setup installs it)"
    exit 0
fi
if ! is_root; then
    skip "export oci under crun" "rootless crun needs a user-owned cgroup or a v2 host; run as root"
    exit 0
fi

hybrid=0
if grep -q . /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
    hybrid=1
fi

# inside ACTION...: export a bundle of the policy (RF_OPTS) for the probe and
# run it under crun; the probe's stdout and exit code come back.
inside() {
    # It runs in $(...) subshells: a fresh name each time, not a counter.
    local b name
    b=$(mktemp -u "$SCRATCH/bundle.XXXXXX")
    name="rf-oci-${b##*.}"
    rf export oci "$b" "${RF_OPTS[@]}" --expose "$PROBE" -- "$PROBE" "$@" 2>"$SCRATCH/export-err" || {
        cat "$SCRATCH/export-err" >&2; return 125; }
    local rc=0
    if [ $hybrid = 1 ]; then
        python3 -c 'import json,sys; p=sys.argv[1]; c=json.load(open(p))
c["linux"]["namespaces"]=[n for n in c["linux"]["namespaces"] if n["type"]!="cgroup"]
json.dump(c,open(p,"w"))' "$b/config.json"
        unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup/unified && exec crun --cgroup-manager=disabled run --bundle "$1" "$2"' \
            sh "$b" "$name" || rc=$?
    else
        crun run --bundle "$b" "$name" || rc=$?
    fi
    crun delete -f "$name" >/dev/null 2>&1
    return $rc
}

mkdir -p "$SCRATCH/home-secret"
echo secret >"$SCRATCH/home-secret/key"

# Files: the workspace writable, the system read-only, the rest hidden.
in_ok "workspace writable" write "$WS/from-crun"
check "a file written in the workspace is there on the host" test -f "$WS/from-crun"
in_denied "/usr read-only" write /usr/rf-oci-test
host_ok "control: the probe can read a host file" read "$SCRATCH/home-secret/key"
in_denied "a host path outside the policy is hidden" read "$SCRATCH/home-secret/key"
in_denied "/etc/shadow absent" read /etc/shadow
in_denied "/root hidden" read /root/.bashrc
in_denied "/etc is read-only" write /etc/rf-oci-test
in_ok "/etc/passwd readable (copied into the rootfs)" read /etc/passwd

# Privileges and namespaces.
in_denied "no new user namespace" unshare-user
in_denied "no mount" mount-tmpfs /tmp
check "control: the host caller has capabilities" sh -c '! grep -q "CapEff:.0000000000000000" /proc/self/status'
OUT=$(inside status 2>&1)
contains "no effective capabilities" "$OUT" "CapEff:	0000000000000000"
contains "no bounding capabilities" "$OUT" "CapBnd:	0000000000000000"
contains "no_new_privs" "$OUT" "NoNewPrivs:	1"
contains "seccomp filter installed" "$OUT" "Seccomp:	2"

# seccomp, the same profile as ringfence run's.
for sc in bpf keyctl userfaultfd perf_event_open io_uring_setup open_by_handle_at kexec_load init_module; do
    in_denied "seccomp: $sc refused" syscall "$sc"
done

# Root is never host root: uid 0 inside is 65534 outside.
RF_OPTS=()
map=$(rf export oci "$SCRATCH/mapcheck" -- /bin/true 2>/dev/null && python3 -c '
import json,sys; c=json.load(open(sys.argv[1])); m=c["linux"]["uidMappings"][0]; print(m["containerID"], m["hostID"])' \
    "$SCRATCH/mapcheck/config.json")
check "uid 0 inside maps to 65534 on the host" test "$map" = "0 65534"

# Network none: no route out.
in_denied "network none: no TCP to the host" connect-tcp 127.0.0.1 1

# Limits travel as cgroup resources (enforced where crun can make cgroups).
rf export oci "$SCRATCH/limits" --memory 64M --pids 32 --cpu 0.5 -- /bin/true 2>/dev/null
res=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["linux"]["resources"]; print(r["memory"]["limit"], r["pids"]["limit"], r["cpu"]["quota"], r["cpu"]["period"])' \
    "$SCRATCH/limits/config.json" 2>&1)
check "limits in config.json: memory, pids, cpu" test "$res" = "67108864 32 50000 100000"

# Landlock has no OCI field: said, not dropped.
ann=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["annotations"]["org.ringfence.landlock"])' \
    "$SCRATCH/limits/config.json" 2>&1)
contains "annotation says Landlock is not enforced" "$ann" "not enforced"
expect_exit 125 "landlock required is refused without --accept-weaker" rf export oci "$SCRATCH/ll" --landlock required -- /bin/true
contains "the refusal names the setting" "$ERR" "landlock: required"
check "a refused export leaves nothing" test ! -e "$SCRATCH/ll"
expect_exit 0 "landlock required with --accept-weaker" rf export oci "$SCRATCH/ll" --landlock required --accept-weaker -- /bin/true

# Bad target: a non-empty directory is never written into.
mkdir -p "$SCRATCH/full" && echo keep >"$SCRATCH/full/file"
expect_exit 125 "a non-empty directory is refused" rf export oci "$SCRATCH/full" -- /bin/true
check "its content is untouched" test "$(cat "$SCRATCH/full/file")" = keep
check "no temporary bundle is left beside it" test -z "$(ls -d "$SCRATCH"/full.rf-tmp-* 2>/dev/null)"
