# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence inside a container, as agents run it (devcontainers, CI job
# containers, pods; docs/containers.md): podman runs this host's own root
# as the container's (--rootfs /:O, an overlay, so nothing written inside
# reaches the host), with each setting of the table in docs/containers.md.
# In every row `ringfence run` either runs with the walls up or refuses
# naming the real cause and the container setting that lifts it, and
# `ringfence doctor` agrees with it (its verdict on native is a real
# start). Root only: rootful podman (a rootless one needs subordinate ids
# and, on a hybrid cgroup host, more than this host gives it).
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"

if ! is_root; then
    skip "ringfence in containers" "needs root (rootful podman)"; exit 0
fi
if ! command -v podman >/dev/null; then
    skip "ringfence in containers" "podman is not installed (scripts/setup installs it)"; exit 0
fi
# Once, with the normal build: the sanitizer build's code paths are the same
# (tests/security/contained-root.sh runs those under ASan).
if ldd "$RINGFENCE" 2>/dev/null | grep -q libasan; then
    skip "ringfence in containers" "run once, with the normal build"; exit 0
fi
# runc: crun refuses a v1/v2 hybrid cgroup host. The host's hard limits
# bound the container's (podman's default nofile would exceed them).
runtime=()
command -v runc >/dev/null && runtime=(--runtime runc)
ctr() { # PODMAN-OPTION... -- SHELL-COMMAND
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    podman run --rm "${runtime[@]}" --network none --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" \
        --ulimit nproc=4096:4096 -e RF="$RINGFENCE" -e PROBE="$PROBE" "${opts[@]}" --rootfs /:O sh -c "$1"
}
if ! ctr -- true >"$SCRATCH/ctr" 2>&1; then
    skip "ringfence in containers" "podman cannot run a container here: $(head -c 300 "$SCRATCH/ctr")"; exit 0
fi
mkdir -p "$SCRATCH/vol" && chmod 755 "$SCRATCH/vol"

# In the container: a workspace (on the container's overlayfs root, or on
# the volume /vol), `run -- PROBE status`, then doctor's verdict on native.
INNER='W=${WSDIR:-$(mktemp -d /tmp/ws.XXXXXX)}; cd "$W" || exit 9; O=$(mktemp -d /tmp/out.XXXXXX)
"$RF" run --status-json $O/st.json --expose "$PROBE" -- "$PROBE" status >$O/out 2>$O/err; echo "run=$?"
"$RF" doctor --json >$O/doc 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(\"native=%s\" % d[\"backends\"][\"native\"][\"usable\"]); print(d[\"user_namespaces\"][\"reasons\"])" $O/doc
cat $O/err; grep -E "^(Uid|CapEff|NoNewPrivs):" $O/out; cat $O/st.json 2>/dev/null'

# row LABEL WANT NEEDLE PODMAN-OPTION...: WANT is "runs" or "refused";
# NEEDLE must be in what run said (the cause and its fix).
row() {
    local label=$1 want=$2 needle=$3; shift 3
    local out
    out=$(ctr "$@" -- "$INNER" 2>&1)
    case $want in
    runs)
        contains "$label: run works" "$out" "run=0"
        contains "$label: ... doctor agrees" "$out" "native=True"
        contains "$label: ... without capabilities" "$out" "CapEff:	0000000000000000"
        contains "$label: ... no_new_privs" "$out" "NoNewPrivs:	1"
        contains "$label: ... the status names the backend" "$out" '"backend":"native"' ;;
    refused)
        contains "$label: run refuses" "$out" "run=125"
        contains "$label: ... doctor agrees" "$out" "native=False" ;;
    esac
    [ -n "$needle" ] && contains "$label: ... saying '$needle'" "$out" "$needle"
    lacks "$label: ... never the userns sysctls (the wrong cause)" "$out" "unprivileged_userns_clone=1"
}

user=${RF_TEST_USER:-rftest}
id "$user" >/dev/null 2>&1 || user=nobody
row "defaults, root" refused "lacks CAP_SYS_ADMIN"
row "defaults, $user" refused "masked /proc" --user "$user"
row "unmask=ALL, root" refused "--cap-add SYS_ADMIN" --security-opt unmask=ALL
row "unmask=ALL, root, --accept-weaker" refused "--accept-weaker" --security-opt unmask=ALL
row "unmask=ALL seccomp=unconfined, root" refused "lacks CAP_SYS_ADMIN" --security-opt unmask=ALL \
    --security-opt seccomp=unconfined
row "unmask=ALL, $user" runs "" --security-opt unmask=ALL --user "$user"
row "unmask=ALL CAP_SYS_ADMIN, root, workspace on the overlayfs root" refused "on overlayfs, which cannot be idmapped" \
    --security-opt unmask=ALL --cap-add SYS_ADMIN,NET_ADMIN
row "unmask=ALL CAP_SYS_ADMIN, root, workspace on a volume" runs "" --security-opt unmask=ALL \
    --cap-add SYS_ADMIN,NET_ADMIN -v "$SCRATCH/vol:/vol" -e WSDIR=/vol
row "--privileged, root, workspace on a volume" runs "" --privileged -v "$SCRATCH/vol:/vol" -e WSDIR=/vol
# The host user's checkout bind-mounted into a root container (files of
# another uid): the sandbox writes it, and what it makes is that uid's;
# --changes overlay (not id-mapped) is refused naming the owner.
U=${RF_TEST_USER:-rftest}
if id "$U" >/dev/null 2>&1; then
    mkdir -p "$SCRATCH/uvol" && echo old >"$SCRATCH/uvol/f" && chown -R "$U:$U" "$SCRATCH/uvol"
    out=$(ctr --security-opt unmask=ALL --cap-add SYS_ADMIN,NET_ADMIN -v "$SCRATCH/uvol:/work" -- \
        'cd /work && "$RF" run -- sh -c "echo new >>f && touch made"; echo "run=$?";
         "$RF" run --changes overlay -- true; echo "overlay=$?"' 2>&1)
    contains "root, a volume another uid owns: the sandbox writes it" "$out" "run=0"
    check "...its file changed" grep -q new "$SCRATCH/uvol/f"
    check "...and what it made is that uid's" test "$(stat -c %U "$SCRATCH/uvol/made" 2>/dev/null)" = "$U"
    contains "...--changes overlay there is refused" "$out" "overlay=125"
    contains "...naming the owner" "$out" "belongs to uid $(id -u "$U")"
else
    skip "root, a volume another uid owns" "no user $U"
fi
# Host root with CAP_SYS_ADMIN mounts a fresh /proc over the masked one:
# native runs, and doctor's text says so beside the failed userns probe.
row "CAP_SYS_ADMIN, masked /proc, root, workspace on a volume" runs "" \
    --cap-add SYS_ADMIN,NET_ADMIN -v "$SCRATCH/vol:/vol" -e WSDIR=/vol
doc=$(ctr --cap-add SYS_ADMIN,NET_ADMIN -v "$SCRATCH/vol:/vol" -- 'cd /vol && "$RF" doctor' 2>&1)
contains "CAP_SYS_ADMIN, masked /proc: doctor says native starts all the same" "$doc" "native backend starts here all the same"
lacks "  ... and lists no failed start-up probe under a usable backend" "$doc" "the start-up probe failed"
row "--cap-drop=all, root" refused "lacks CAP_SYS_ADMIN" --security-opt unmask=ALL --cap-drop=all

# Docker's default seccomp profile, modelled on podman's own (Docker's is
# not on this machine; docs.docker.com describes what it adds): without
# CAP_SYS_ADMIN, clone3 answers ENOSYS, clone with a namespace flag,
# unshare, setns, mount, pivot_root and the key calls are refused (EPERM). Made at test time from containers-common's file.
dockerlike=$SCRATCH/docker-like-seccomp.json
if python3 - /usr/share/containers/seccomp.json "$dockerlike" <<'PY' 2>"$SCRATCH/dockerlike.err"
import json, sys
d = json.load(open(sys.argv[1]))
admin = {"clone", "clone3", "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "keyctl", "add_key",
         "request_key", "sethostname"}
for s in d["syscalls"]:
    s["names"] = [n for n in s["names"] if n not in admin]
d["syscalls"] = [s for s in d["syscalls"] if s["names"]]
d["defaultErrnoRet"] = 1
sysadmin = {"caps": ["CAP_SYS_ADMIN"]}
namespaces = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
d["syscalls"] += [
    {"names": sorted(admin), "action": "SCMP_ACT_ALLOW", "includes": sysadmin},
    {"names": sorted(admin - {"clone", "clone3"}), "action": "SCMP_ACT_ERRNO", "errnoRet": 1, "excludes": sysadmin},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38, "excludes": sysadmin},
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW", "excludes": sysadmin,
     "args": [{"index": 0, "value": namespaces, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
]
json.dump(d, open(sys.argv[2], "w"))
PY
then
    row "docker's seccomp, root" refused "lacks CAP_SYS_ADMIN" --security-opt seccomp="$dockerlike"
    row "docker's seccomp, unmask=ALL, $user" refused "seccomp filter that refuses namespaces" \
        --security-opt seccomp="$dockerlike" --security-opt unmask=ALL --user "$user"
    row "docker's seccomp, unmask=ALL, $user: ... and names the fix" refused "--security-opt seccomp=" \
        --security-opt seccomp="$dockerlike" --security-opt unmask=ALL --user "$user"
    row "docker's seccomp, CAP_SYS_ADMIN, root, workspace on a volume" runs "" \
        --security-opt seccomp="$dockerlike" --cap-add SYS_ADMIN,NET_ADMIN -v "$SCRATCH/vol:/vol" -e WSDIR=/vol
    # Control: the profile does refuse what it should, as Docker's does.
    out=$(ctr --security-opt seccomp="$dockerlike" --user "$user" -- \
        'unshare --user true 2>&1; echo rc=$?')
    contains "control: under the modelled profile an ordinary user's unshare is refused" "$out" "Operation not permitted"
else
    skip "docker's default seccomp rows" "podman's profile to model it on is missing: $(head -c 200 "$SCRATCH/dockerlike.err")"
fi

# The weaker mode accepted by name, where the kernel lets it: it runs, says
# so in the status record, and the walls stand.
out=$(ctr --security-opt unmask=ALL -- 'W=$(mktemp -d /tmp/ws.XXXXXX); cd $W; O=$(mktemp -d /tmp/out.XXXXXX)
echo secret >$O/outside
"$RF" run --accept-weaker --status-json $O/st.json -- sh -c "cat $O/outside; touch /etc/x; grep CapEff /proc/self/status"
echo "run=$?"; cat $O/st.json' 2>&1)
contains "unmask=ALL, root, --accept-weaker: runs" "$out" "run="
contains "... the weakening is in the status record" "$out" '"weakenings":["root: the command'"'"'s uid 0 is host uid 0'
lacks "... the container's /tmp is not there" "$out" "secret"
contains "... the system is read-only" "$out" "Read-only file system"
contains "... no capabilities" "$out" "CapEff:	0000000000000000"

# --backend auto in the default container: landlock, with the reason.
out=$(ctr -- 'cd $(mktemp -d /tmp/ws.XXXXXX); "$RF" run --backend auto -- true; echo "run=$?"' 2>&1)
contains "defaults, root, --backend auto: landlock, with the reason" "$out" "backend auto: landlock"
contains "... refused without --accept-weaker" "$out" "run=125"

# The batteries, inside the container: the same scripts that try to cross
# each wall on the host (filesystem, privileges, processes, network and IPC,
# environment, devices and /proc), run there by ROW's user, each one a line
# here: "N passed, 0 failed".
stage=$(dirname "$RINGFENCE")
battery() { # LABEL PODMAN-OPTION...
    local label=$1 script out passed failed; shift
    for script in filesystem privileges processes network_ipc environment devices_proc; do
        out=$(ctr "$@" -e RINGFENCE="$RINGFENCE" -e RF_SOURCE_DIR="${RF_SOURCE_DIR:-}" -- \
            "bash $stage/tests/security/$script.sh" 2>&1)
        passed=$(grep -c '^ok' <<<"$out"); failed=$(grep -c '^not ok' <<<"$out")
        if [ "$failed" = 0 ] && [ "$passed" -gt 0 ]; then
            pass "$label: security/$script inside: $passed passed, 0 failed"
        else
            fail "$label: security/$script inside: $passed passed, $failed failed"
            diag "$(grep -A3 '^not ok' <<<"$out" | head -20)" "$(tail -3 <<<"$out")"
        fi
    done
}
battery "unmask=ALL, $user" --security-opt unmask=ALL --user "$user"
battery "unmask=ALL, root, contained (--accept-weaker)" --security-opt unmask=ALL -e RINGFENCE_ACCEPT_WEAKER=true
