# SPDX-License-Identifier: LGPL-2.1-or-later
# A root caller without what the unprivileged mapping needs, as root in a
# container is (docs/containers.md): no CAP_SYS_ADMIN (podman's, docker's
# and Kubernetes' default), or root of a user namespace around it. The
# native backend still runs there, in a user namespace of the sandbox's own
# with root's own id mapped (plan_root.c); where that id is host uid 0 it is
# refused unless accepted by name. Either way every other wall stands:
# capabilities, no_new_privs, the filesystem, the processes.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"

status_has() { # DESC PYTHON-EXPR over the status record s
    if python3 -c "import json,sys; s=json.load(open(sys.argv[1])); assert $2, s" "$SCRATCH/st.json" 2>"$SCRATCH/py"
    then pass "$1"; else fail "$1"; diag "$(tail -1 "$SCRATCH/py")"; fi
}

# The walls that must hold in a contained root's sandbox: WRAP... is how
# ringfence is started (setpriv, bwrap), OPTS the run's own options.
walls() { # LABEL HOSTUID WRAP... -- OPTS...
    local label=$1 hostuid=$2; shift 2
    local wrap=() opts=()
    while [ "$1" != -- ]; do wrap+=("$1"); shift; done
    shift; opts=("$@")
    echo secret >"$SCRATCH/outside-$label"
    expect_exit 0 "$label: runs" "${wrap[@]}" "$RINGFENCE" run "${opts[@]}" --status-json "$SCRATCH/st.json" \
        --expose "$PROBE" -- "$PROBE" status
    contains "$label: uid 0 inside" "$OUT" "Uid:	0	0	0	0"
    contains "$label: no capabilities" "$OUT" "CapEff:	0000000000000000"
    contains "$label: no bounding set either" "$OUT" "CapBnd:	0000000000000000"
    contains "$label: no_new_privs" "$OUT" "NoNewPrivs:	1"
    status_has "$label: the status record names the backend" 's["backend"] == "native"'
    status_has "$label: ... and the weakening, with the host uid" \
        "any('uid 0' in w and '$hostuid' in w for w in s['weakenings'])"
    expect_exit 0 "$label: the workspace is writable" "${wrap[@]}" "$RINGFENCE" run "${opts[@]}" -- \
        sh -c 'echo w >written'
    check "$label: ... and the file is root's own id on the host" test "$(stat -c %u "$WS/written")" = "$hostuid"
    expect_exit 1 "$label: a file beside the workspace is not there" "${wrap[@]}" "$RINGFENCE" run "${opts[@]}" -- \
        cat "$SCRATCH/outside-$label"
    expect_exit 1 "$label: the system is read-only" "${wrap[@]}" "$RINGFENCE" run "${opts[@]}" -- \
        touch /etc/rf-contained
    expect_exit 0 "$label: only the sandbox's processes are there" "${wrap[@]}" "$RINGFENCE" run "${opts[@]}" -- \
        sh -c 'ls /proc | grep -c "^[0-9]"'
    check "$label: ... (init, sh, ls, grep at most)" test "${OUT:-99}" -le 4
    expect_exit 1 "$label: no new user namespace inside (seccomp)" "${wrap[@]}" "$RINGFENCE" run "${opts[@]}" -- \
        unshare -U true
    rm -f "$WS/written"
}

# ── host root without CAP_SYS_ADMIN (podman/docker run's default) ──
if is_root && command -v setpriv >/dev/null; then
    nosys=(setpriv --bounding-set -sys_admin)
    expect_exit 125 "root without CAP_SYS_ADMIN: refused" "${nosys[@]}" "$RINGFENCE" run -- true
    contains "... naming the capability" "$ERR" "lacks CAP_SYS_ADMIN"
    contains "... and what it would mean" "$ERR" "would be host uid 0"
    contains "... and the container setting that grants it" "$ERR" "--cap-add SYS_ADMIN"
    contains "... and the weaker way, by name" "$ERR" "--accept-weaker"
    lacks "... not the sysctls that switch user namespaces on" "$ERR" "unprivileged_userns_clone"
    expect_exit 1 "doctor agrees: native not usable" "${nosys[@]}" "$RINGFENCE" doctor --json
    printf '%s' "$OUT" >"$SCRATCH/d.json"
    check "doctor: run's own refusal, from a real start" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["backends"]["native"]["usable"], d["backends"]["native"]
assert d["native_start"]["tried"] and not d["native_start"]["ok"], d["native_start"]
assert "CAP_SYS_ADMIN" in d["native_start"]["error"], d["native_start"]
assert d["auto_backend"] != "native", d["auto_backend"]' "$SCRATCH/d.json"
    expect_exit 125 "--backend auto does not pick native for it" "${nosys[@]}" "$RINGFENCE" plan --backend auto -- true
    lacks "... (auto: not native)" "$ERR" "auto: native"
    walls "root without CAP_SYS_ADMIN, --accept-weaker" 0 "${nosys[@]}" -- --accept-weaker
    # Without CAP_NET_ADMIN, loopback in a network namespace owned by the
    # host's user namespace cannot be brought up: contained too.
    expect_exit 125 "root without CAP_NET_ADMIN: refused, naming it" \
        setpriv --bounding-set -net_admin "$RINGFENCE" run -- true
    contains "... naming CAP_NET_ADMIN" "$ERR" "lacks CAP_NET_ADMIN"
    expect_exit 0 "root without CAP_NET_ADMIN but --network host: the usual mapping" \
        setpriv --bounding-set -net_admin "$RINGFENCE" run --network host --status-json "$SCRATCH/st.json" -- true
    status_has "... with no weakening but the one asked for" \
        'not any("uid 0" in w for w in s["weakenings"]) and any(w.startswith("network host") for w in s["weakenings"])'
else
    skip "root without CAP_SYS_ADMIN" "needs root and setpriv (util-linux)"
fi

# ── root of a user namespace around ringfence (a userns pod, rootless
# podman): its uid 0 is the caller's id on the host, so mapping it is no
# weaker on the host; run without --accept-weaker, the weakening listed.
# It needs CAP_SETFCAP (in podman's and docker's defaults) to map its uid 0
# again; bwrap gives it that one capability, nothing else. ──
userns_root=(bound_root --uid 0 --gid 0 --cap-add CAP_SETFCAP)
if ! command -v bwrap >/dev/null || ! "${userns_root[@]}" true 2>/dev/null; then
    skip "root of a user namespace" "bwrap cannot run here: $("${userns_root[@]}" true 2>&1 | head -c 200)"
elif is_root; then
    # bwrap maps root's own 0 to 0: the sandbox's uid 0 would be host root.
    expect_exit 125 "host root as root of a user namespace: refused" "${userns_root[@]}" "$RINGFENCE" run -- true
    contains "... saying so" "$ERR" "would be host uid 0"
else
    walls "root of a user namespace" "$(id -u)" "${userns_root[@]}" --
    expect_exit 0 "... doctor says native works there" "${userns_root[@]}" "$RINGFENCE" doctor
    expect_exit 125 "root of a user namespace without CAP_SETFCAP: refused" bound_root --uid 0 --gid 0 \
        "$RINGFENCE" run -- true
    contains "... naming the capability" "$ERR" "without CAP_SETFCAP"
    contains "... and the container setting" "$ERR" "--cap-add SETFCAP"
fi
