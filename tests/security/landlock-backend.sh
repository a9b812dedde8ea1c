#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The landlock backend (no namespaces) against the part of the security
# suite it claims: files, network, IPC, environment, descriptors, the tree
# kill, no_new_privs, seccomp. Every denial has a control that shows the
# same access succeeding without the sandbox, so a test fails only when the
# boundary does not hold. Then the plan's `cannot` list is checked against
# what the command really sees: what the plan says stays reachable, is.
. "$(dirname "$0")/../lib.sh"

pyplan() { python3 -c "import json,sys; p=json.load(open('$SCRATCH/plan.json')); $1"; }

rf plan --backend landlock --accept-weaker -- true >"$SCRATCH/plan.json" 2>/dev/null
abi=$(pyplan 'print(p["landlock"]["abi"])' 2>/dev/null || echo 0)
if [ "${abi:-0}" -lt 1 ]; then
    skip "landlock backend" "this kernel has no usable Landlock"
    exit 0
fi

# Outside the workspace and outside /tmp (which --accept-weaker opens):
# world-writable, so only Landlock stands between the command and it.
OUTSIDE=$(mktemp -d /var/tmp/rf-ll.XXXXXX)
chmod 1777 "$OUTSIDE"
LISTENER=
trap 'kill $LISTENER 2>/dev/null; rm -rf "$SCRATCH" "$OUTSIDE" 2>/dev/null; echo "1..$T_N"' EXIT
echo s3cret >"$OUTSIDE/secret"
chmod 644 "$OUTSIDE/secret"
mkdir -m 777 "$OUTSIDE/rodir"
if is_root; then
    # A root caller runs the command as the workspace's owner (no
    # map_root_to given): a uid no other test process uses.
    chown 4242:4242 "$WS"
    sandbox_uid=4242
else
    sandbox_uid=$(id -u)
fi
LL=(--backend landlock --accept-weaker)
ll() { rf run "${LL[@]}" "$@"; }

# ── the plan ──
check "plan: backend landlock" pyplan 'assert p["backend"]=="landlock"'
check "plan: no namespaces, no mounts" pyplan 'assert p["namespaces"]==[] and p["mounts"]==[]'
check "plan: rules on host paths" pyplan "assert {'path':'$WS','access':'read-write'} in p['landlock']['rules']"
check "plan: the cannot list is there" pyplan 'assert len(p["cannot"])>=5'
check "plan: IP sockets denied by seccomp" pyplan 'assert p["seccomp"]["deny_inet_sockets"]'
expect_exit 125 "without --accept-weaker: refused" rf run --backend landlock -- true
contains "refusal names the private /tmp" "$ERR" "/tmp cannot be a private mount"
contains "refusal names the setting" "$ERR" "accept_weaker"
contains "refusal names the flag" "$ERR" "--accept-weaker"
mkdir -p "$SCRATCH/data"
expect_exit 125 "an expose with another target: refused" rf run --backend landlock --expose "$SCRATCH/data:/data" -- true
contains "refusal names the expose" "$ERR" "cannot be remapped"

# ── files ──
expect_exit 0 "control: the secret is readable without a sandbox" rf run --backend none -- "$PROBE" read "$OUTSIDE/secret"
expect_exit 1 "secret outside the workspace: unreadable" ll -- "$PROBE" read "$OUTSIDE/secret"
contains "  ... by Landlock (EACCES)" "$OUT" "EACCES"
expect_exit 1 "write outside the workspace: denied" ll -- "$PROBE" write "$OUTSIDE/new"
[ ! -e "$OUTSIDE/new" ] && pass "  ... and nothing was created" || fail "  ... a file was created outside"
expect_exit 0 "control: writing there works without a sandbox" rf run --backend none -- "$PROBE" write "$OUTSIDE/ctl"
expect_exit 0 "write inside the workspace: allowed" ll -- "$PROBE" write "$WS/inside"
expect_exit 1 "/usr is read-only" ll -- "$PROBE" write /usr/rf-ll-probe
expect_exit 1 "a read-only expose is read-only (mode 777, Landlock alone)" ll --expose "$OUTSIDE/rodir" -- "$PROBE" write "$OUTSIDE/rodir/f"
expect_exit 0 "  ... and readable" ll --expose "$OUTSIDE" -- "$PROBE" read "$OUTSIDE/secret"
expect_exit 0 "a read-write expose is writable" ll --expose "$OUTSIDE/rodir:$OUTSIDE/rodir:rw" -- "$PROBE" write "$OUTSIDE/rodir/f"
expect_exit 0 "control: /etc/fstab is readable without a sandbox" rf run --backend none -- "$PROBE" read /etc/fstab
expect_exit 1 "an /etc file outside the curated list stays unreadable" ll -- "$PROBE" read /etc/fstab
# The curated files the native backend copies in are read where they are:
# names resolve, the loader finds its cache, git reads /etc/gitconfig.
expect_exit 0 "a curated /etc file is readable (/etc/passwd)" ll -- "$PROBE" read /etc/passwd
if getent passwd "$sandbox_uid" >/dev/null; then
    expect_exit 0 "  ... so the command's uid has its name" ll -- id -un
else
    skip "the command's uid has its name" "uid $sandbox_uid has no passwd entry on this host"
fi
if [ -e /etc/gitconfig ]; then
    expect_exit 0 "  ... and git config --global works (it reads /etc/gitconfig)" ll -- git config --global user.name rf
else
    skip "git config --global under landlock" "no /etc/gitconfig on this host"
fi
expect_exit 1 "/dev/shm is not usable" ll -- "$PROBE" write /dev/shm/rf-ll-probe
expect_exit 0 "/dev/null is writable" ll -- "$PROBE" write /dev/null
expect_exit 0 "HOME (the instance's) is writable" ll -- sh -c 'echo x > "$HOME/f"'

# ── the instance root inside the workspace (a home as the workspace) ──
# Its cache/ holds the compiled filters the next start trusts: Landlock
# grants the workspace's entries one by one around it, the plan says so.
rfh="$WS/.rfhome"
RINGFENCE_HOME=$rfh ll -- true
mkdir -p "$rfh/cache" && echo original >"$rfh/cache/seccomp-0000000000000000.bpf"
expect_exit 1 "instance root in the workspace: its cache cannot be rewritten" \
    env RINGFENCE_HOME="$rfh" "$RINGFENCE" run "${LL[@]}" -- "$PROBE" write "$rfh/cache/seccomp-0000000000000000.bpf"
check "  ... the cached file is unchanged" grep -qx original "$rfh/cache/seccomp-0000000000000000.bpf"
expect_exit 0 "  ... while the command's HOME inside it is writable" \
    env RINGFENCE_HOME="$rfh" "$RINGFENCE" run "${LL[@]}" -- sh -c 'touch "$HOME/ll-home-ok"'
mkdir -p "$WS/sub" && chmod 777 "$WS/sub"
expect_exit 0 "  ... and so is a directory beside it" \
    env RINGFENCE_HOME="$rfh" "$RINGFENCE" run "${LL[@]}" -- "$PROBE" write "$WS/sub/beside"
expect_exit 1 "  ... but, as the plan says, nothing new directly in the workspace" \
    env RINGFENCE_HOME="$rfh" "$RINGFENCE" run "${LL[@]}" -- "$PROBE" write "$WS/beside"
RINGFENCE_HOME=$rfh rf plan "${LL[@]}" -- true >"$SCRATCH/rfh.json" 2>/dev/null
check "  ... the plan names what cannot be created" \
    python3 -c "import json; p=json.load(open('$SCRATCH/rfh.json')); assert any('nothing new can be created directly in $WS' in c for c in p['cannot'])"
rm -rf "$rfh" "$WS/sub" "$WS/beside"

# ── identity, privileges ──
expect_exit 0 "probe status" ll -- "$PROBE" status
contains "no_new_privs" "$OUT" "NoNewPrivs:	1"
contains "seccomp filter on" "$OUT" "Seccomp:	2"
contains "no effective capabilities" "$OUT" "CapEff:	0000000000000000"
contains "runs as uid $sandbox_uid" "$OUT" "Uid:	$sandbox_uid	$sandbox_uid	$sandbox_uid	$sandbox_uid"
expect_exit 1 "uid 0 cannot be regained" ll -- "$PROBE" setuid-root
expect_exit 1 "nested unshare -U fails" ll -- "$PROBE" unshare-user

# ── environment and descriptors ──
out=$(RF_LL_SECRET=hunter2 ll -- env 2>/dev/null)
lacks "environment cleaned" "$out" "hunter2"
contains "HOME redirected" "$out" "HOME=$RINGFENCE_HOME/runtime-user-env"
expect_exit 1 "inherited fd 9 is closed" sh -c "exec 9</dev/null; '$RINGFENCE' run --backend landlock --accept-weaker -- '$PROBE' fd 9"
contains "  ... EBADF" "$OUT" "EBADF"
expect_exit 0 "control: fd 9 reaches a command without the close" sh -c "exec 9</dev/null; '$PROBE' fd 9"

# ── network and IPC: listeners on the host ──
ABSTRACT="rf-ll-$$-$RANDOM"
python3 - "$OUTSIDE" "$ABSTRACT" <<'PY' &
import os, socket, sys, time
out, name = sys.argv[1], sys.argv[2]
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(16)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
a = socket.socket(socket.AF_UNIX); a.bind("\0" + name); a.listen(16)
p = socket.socket(socket.AF_UNIX); p.bind(out + "/sock"); os.chmod(out + "/sock", 0o777); p.listen(16)
for s in (t, u, a, p): s.setblocking(False)
with open(out + "/ports.tmp", "w") as f:
    f.write("%d %d\n" % (t.getsockname()[1], u.getsockname()[1]))
os.rename(out + "/ports.tmp", out + "/ports")
end = time.time() + 120
while time.time() < end:
    for s in (t, a, p):
        try: s.accept()[0].close()
        except BlockingIOError: pass
    try:
        u.recv(64); open(out + "/udp-got", "a").write("x")
    except BlockingIOError: pass
    time.sleep(0.005)
PY
LISTENER=$!
for _ in $(seq 200); do [ -s "$OUTSIDE/ports" ] && break; sleep 0.05; done
read -r TCP UDP <"$OUTSIDE/ports" || fail "the listeners did not start"

expect_exit 0 "control: TCP to the host listener with --network host" ll --network host -- "$PROBE" connect-tcp 127.0.0.1 "$TCP"
expect_exit 1 "network none: TCP connect to a host loopback listener denied" ll -- "$PROBE" connect-tcp 127.0.0.1 "$TCP"
if [ "$abi" -ge 4 ]; then
    expect_exit 1 "network none, seccomp off: Landlock alone denies TCP connect (ABI $abi)" \
        ll --seccomp off -- "$PROBE" connect-tcp 127.0.0.1 "$TCP"
    contains "  ... with EACCES" "$OUT" "EACCES"
else
    skip "Landlock TCP rules" "ABI $abi < 4"
fi
expect_exit 1 "network none: UDP to a host listener denied (seccomp)" ll -- "$PROBE" udp-send 127.0.0.1 "$UDP"
contains "  ... with EAFNOSUPPORT" "$OUT" "EAFNOSUPPORT"
if [ "$abi" -ge 6 ]; then
    expect_exit 0 "control: the abstract socket is reachable without a sandbox" rf run --backend none -- "$PROBE" connect-abstract "$ABSTRACT"
    expect_exit 1 "abstract unix socket of the host: denied (ABI $abi scoping)" ll -- "$PROBE" connect-abstract "$ABSTRACT"
    expect_exit 0 "control: the listener can be signalled without a sandbox" rf run --backend none -- "$PROBE" kill "$LISTENER"
    expect_exit 1 "a host process cannot be signalled" ll -- "$PROBE" kill "$LISTENER"
else
    skip "IPC scoping" "ABI $abi < 6"
fi

# ── the tree kill ──
tree='trap "" TERM; setsid sh -c "trap \"\" TERM; (trap \"\" TERM; exec sleep 300) & echo \$! > gc.pid; wait" & sleep 300'
rm -f "$WS/gc.pid"
expect_exit 124 "timeout: exit 124" ll --timeout 1 --kill-grace 0.5 -- sh -c "$tree"
gone() { for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; return 1; }
if [ -s "$WS/gc.pid" ]; then
    gc=$(cat "$WS/gc.pid")
    check "timeout killed the setsid'd, double-forked, SIGTERM-ignoring grandchild" gone "$gc"
else
    fail "the grandchild did not start"
fi
rm -f "$WS/gc.pid"
"$RINGFENCE" run "${LL[@]}" -- sh -c "$tree" >/dev/null 2>&1 &
rfpid=$! # ringfence itself, not a subshell
disown "$rfpid" # no "Killed" notice from bash
for _ in $(seq 200); do [ -s "$WS/gc.pid" ] && break; sleep 0.05; done
if [ -s "$WS/gc.pid" ]; then
    gc=$(cat "$WS/gc.pid")
    kill -0 "$gc" 2>/dev/null && pass "the grandchild runs" || fail "the grandchild runs"
    kill -9 "$rfpid"
    check "SIGKILL of ringfence kills the tree" gone "$gc"
else
    fail "the grandchild did not start (SIGKILL test)"
fi

# ── the blocked syscalls (same filter as native), with controls ──
for sc in unshare clone mount keyctl bpf perf_event_open userfaultfd io_uring_setup \
          process_vm_readv open_by_handle_at personality socket-packet socket-netlink-audit; do
    ctl=$(ll --seccomp off -- "$PROBE" syscall "$sc" 2>/dev/null)
    got=$(ll -- "$PROBE" syscall "$sc" 2>/dev/null)
    case $got in
        denied:*) if [ "$ctl" = "$got" ]; then skip "seccomp: $sc" "the kernel alone answers the same ($got)"
                  else pass "seccomp: $sc -> ${got#denied: }"; fi ;;
        *) fail "seccomp: $sc was not denied ($got)" ;;
    esac
done

# ── the plan's cannot list, as the command sees it ──
cannot() { pyplan "import sys; sys.exit(0 if any('$1' in c for c in p['cannot']) else 1)"; }
if cannot "host processes stay visible"; then
    expect_exit 0 "cannot: host processes are visible in /proc, as the plan says" ll -- "$PROBE" read "/proc/$LISTENER/stat"
    expect_exit 1 "  ... but their environment is out of reach" ll -- "$PROBE" read "/proc/$LISTENER/environ"
else fail "the plan lists visible host processes"; fi
if cannot "no private /tmp mount"; then
    expect_exit 1 "cannot: /tmp is not private, so it is out of reach: a program that hard-codes it gets EACCES" \
        ll -- "$PROBE" write /tmp/rf-ll-hardcoded-$$
    contains "  ... EACCES" "$OUT" "EACCES"
else fail "the plan lists the missing private /tmp"; fi
if cannot "no hostname"; then
    inside=$(ll -- cat /proc/sys/kernel/hostname 2>/dev/null)
    [ "$inside" = "$(cat /proc/sys/kernel/hostname)" ] && pass "cannot: the hostname is the host's" ||
        fail "cannot: the hostname is the host's ($inside)"
else fail "the plan lists the hostname"; fi
if cannot "unix sockets with a path"; then
    expect_exit 0 "cannot: a host unix socket with a path can be connected to" ll -- "$PROBE" connect-unix "$OUTSIDE/sock"
else fail "the plan lists pathname unix sockets"; fi
if cannot "can be looked up"; then
    expect_exit 0 "cannot: stat outside works" ll -- stat -c %s "$OUTSIDE/secret"
else fail "the plan lists path lookup"; fi
if cannot "chmod"; then
    touch "$OUTSIDE/mine"; chmod 600 "$OUTSIDE/mine"
    is_root && chown "$sandbox_uid" "$OUTSIDE/mine"
    ll -- chmod 604 "$OUTSIDE/mine" 2>/dev/null
    [ "$(stat -c %a "$OUTSIDE/mine")" = 604 ] && pass "cannot: chmod outside works, as the plan says" ||
        fail "cannot: chmod outside ($(stat -c %a "$OUTSIDE/mine"))"
else fail "the plan lists chmod"; fi
if cannot "protected paths"; then
    mkdir -p "$WS/.git/hooks" && chmod -R 777 "$WS/.git"
    expect_exit 125 "a protected path in the workspace: refused without --accept-weaker" rf run --backend landlock -- true
    contains "  ... naming it" "$ERR" ".git/hooks"
    ll -- sh -c 'echo x > .git/hooks/pre-commit' 2>/dev/null
    [ -e "$WS/.git/hooks/pre-commit" ] && pass "cannot: the protected path is writable, as the plan says" ||
        fail "cannot: protected path writable"
else fail "the plan lists protected paths"; fi
rf plan "${LL[@]}" --seccomp off -- true >"$SCRATCH/plan.json" 2>/dev/null
if cannot "UDP and other non-TCP traffic pass"; then
    rm -f "$OUTSIDE/udp-got"
    expect_exit 0 "cannot: with seccomp off, UDP gets out, as the plan says" ll --seccomp off -- "$PROBE" udp-send 127.0.0.1 "$UDP"
    for _ in $(seq 100); do [ -e "$OUTSIDE/udp-got" ] && break; sleep 0.05; done
    [ -e "$OUTSIDE/udp-got" ] && pass "  ... and the host listener received it" || fail "  ... the host listener received nothing"
else fail "the plan lists UDP with seccomp off"; fi

# ── a private temporary directory, not the host's /tmp ──
HOSTTMP=$(mktemp -d /tmp/rf-ll-host.XXXXXX)
chmod 755 "$HOSTTMP"
echo host-secret >"$HOSTTMP/other-users-file"
chmod 644 "$HOSTTMP/other-users-file"
expect_exit 0 "control: a file in the host's /tmp is readable without a sandbox" rf run --backend none -- "$PROBE" read "$HOSTTMP/other-users-file"
expect_exit 1 "a file in the host's /tmp: unreadable" ll -- "$PROBE" read "$HOSTTMP/other-users-file"
contains "  ... by Landlock (EACCES)" "$OUT" "EACCES"
expect_exit 3 "the host's /tmp cannot be listed" ll -- sh -c 'ls /tmp >/dev/null || exit 3'
expect_exit 1 "nothing can be created in the host's /tmp" ll -- "$PROBE" write "/tmp/rf-ll-new-$$"
[ ! -e "/tmp/rf-ll-new-$$" ] && pass "  ... and nothing was" || { fail "  ... a file was created in /tmp"; rm -f "/tmp/rf-ll-new-$$"; }
out=$(ll -- sh -c 'echo "$TMPDIR $XDG_RUNTIME_DIR"' 2>/dev/null)
case $out in
    "$RINGFENCE_HOME"/*" $RINGFENCE_HOME"/*) pass "TMPDIR and XDG_RUNTIME_DIR point into the instance root" ;;
    *) fail "TMPDIR and XDG_RUNTIME_DIR point into the instance root ($out)" ;;
esac
expect_exit 0 "TMPDIR is writable (mktemp)" ll -- sh -c 'f=$(mktemp) && echo x > "$f" && cat "$f"'
expect_exit 0 "XDG_RUNTIME_DIR is writable" ll -- sh -c 'echo x > "$XDG_RUNTIME_DIR/probe" && rm "$XDG_RUNTIME_DIR/probe"'
expect_exit 0 "--share-tmp (the weakening, by name): the host's /tmp is readable" ll --share-tmp -- "$PROBE" read "$HOSTTMP/other-users-file"
contains "  ... with a warning" "$ERR" "the host's /tmp is shared"
rm -rf "$HOSTTMP"

# ── a root caller: the workspace's owner, nothing of root ──
if is_root; then
    echo root-only >"$OUTSIDE/rootfile"
    chmod 666 "$OUTSIDE/rootfile" # only Landlock keeps the command out
    expect_exit 0 "root: the command writes its own workspace (as uid $sandbox_uid, the owner)" ll -- "$PROBE" write "$WS/owned"
    [ "$(stat -c %u "$WS/owned")" = "$sandbox_uid" ] && pass "  ... and the file is the owner's" ||
        fail "  ... the file belongs to $(stat -c %u "$WS/owned")"
    expect_exit 0 "control: a root-owned file outside is readable without a sandbox" rf run --backend none -- "$PROBE" read "$OUTSIDE/rootfile"
    expect_exit 1 "root: a root-owned file outside the grants is unreadable" ll -- "$PROBE" read "$OUTSIDE/rootfile"
    expect_exit 1 "root: ... and not writable" ll -- "$PROBE" write "$OUTSIDE/rootfile"
    expect_exit 0 "control: root outside a sandbox can chmod it" rf run --backend none -- chmod 664 "$OUTSIDE/rootfile"
    chmod 666 "$OUTSIDE/rootfile"
    expect_exit 1 "root: ... nor chmod'ed (Landlock does not check chmod; the uid is not root)" ll -- chmod 600 "$OUTSIDE/rootfile"
    [ "$(stat -c %a "$OUTSIDE/rootfile")" = 666 ] && pass "  ... mode unchanged" || fail "  ... mode changed"
    expect_exit 1 "root: ... nor chown'ed" ll -- chown "$sandbox_uid" "$OUTSIDE/rootfile"
    sleep 300 &
    rootproc=$!
    expect_exit 0 "control: a host root process can be signalled without a sandbox" rf run --backend none -- "$PROBE" kill "$rootproc"
    expect_exit 1 "root: a host root process cannot be signalled" ll -- "$PROBE" kill "$rootproc"
    expect_exit 0 "control: ... and ptraced without a sandbox" rf run --backend none -- "$PROBE" ptrace "$rootproc"
    expect_exit 1 "root: a host root process cannot be ptraced" ll --seccomp off -- "$PROBE" ptrace "$rootproc"
    kill "$rootproc" 2>/dev/null
    expect_exit 0 "root: the command's /proc/self/status" ll -- cat /proc/self/status
    for set in CapInh CapPrm CapEff CapBnd CapAmb; do
        contains "root: $set is empty" "$OUT" "$set:	0000000000000000"
    done
    groups=$(grep '^Groups:' <<<"$OUT" | tr -d ' \t')
    [ "$groups" = "Groups:" ] && pass "root: no supplementary groups" || fail "root: supplementary groups ($groups)"
    expect_exit 1 "root: uid 0 cannot be regained (setuid)" ll -- "$PROBE" setuid-root
    cp "$PROBE" "$OUTSIDE/suid-probe" && chown 0:0 "$OUTSIDE/suid-probe" && chmod 4755 "$OUTSIDE/suid-probe"
    expect_exit 0 "root: a set-uid-root program runs" ll --expose "$OUTSIDE/suid-probe" -- "$OUTSIDE/suid-probe" status
    contains "  ... without becoming root (no_new_privs)" "$OUT" "Uid:	$sandbox_uid	$sandbox_uid	$sandbox_uid	$sandbox_uid"
    mkdir -m 755 "$SCRATCH/rootws"
    rf plan --backend landlock --accept-weaker --workspace "$SCRATCH/rootws" -- true >"$SCRATCH/rp.json" 2>/dev/null
    check "root: a root-owned workspace keeps the unprivileged default (65534)" \
        python3 -c "import json; p=json.load(open('$SCRATCH/rp.json')); assert p['identity']['uid']==65534"
    rf plan --backend landlock --accept-weaker --map-root-to 4343 -- true >"$SCRATCH/rp.json" 2>/dev/null
    check "root: --map-root-to wins over the owner" \
        python3 -c "import json; p=json.load(open('$SCRATCH/rp.json')); assert p['identity']['uid']==4343"
    # Root's instance root behind a 0700 directory (root's HOME, where
    # ~/.ringfence lives): the command's HOME tree moves to one of its own
    # under /var/lib/ringfence/homes, handed to the command's uid.
    hidden=$(mktemp -d /var/tmp/rf-hidden.XXXXXX)
    victim=$(mktemp -d /var/tmp/rf-victim.XXXXXX)
    mkdir "$victim/share" "$victim/state"
    llhome=/nonexistent
    hl() { RINGFENCE_HOME=$hidden/rfhome ll "$@"; }
    check "control: the command's uid cannot pass $hidden" \
        sh -c "! setpriv --reuid $sandbox_uid --regid $sandbox_uid --clear-groups test -x '$hidden'"
    expect_exit 0 "root, instance root out of the command's reach: HOME is usable" \
        hl -- sh -c 'echo "$HOME"; touch "$HOME/ok" && mkdir -p "$HOME/.config/git" && test -w "$TMPDIR"'
    llhome=$(head -1 <<<"$OUT")
    case $llhome in
        /var/lib/ringfence/homes/*-"$sandbox_uid") pass "  ... in a tree of its own under /var/lib/ringfence/homes" ;;
        *) fail "  ... in a tree of its own under /var/lib/ringfence/homes (HOME=$llhome)" ;;
    esac
    lacks "  ... with no warning that HOME is out of reach" "$ERR" "cannot reach its HOME"
    [ "$(stat -c %u "$llhome" 2>/dev/null)" = "$sandbox_uid" ] && pass "  ... the tree is the command's uid's" ||
        fail "  ... the tree is the command's uid's"
    [ "$(stat -c %u:%a /var/lib/ringfence/homes)" = 0:711 ] && pass "  ... below a root-owned 0711 directory" ||
        fail "  ... below a root-owned 0711 directory ($(stat -c %u:%a /var/lib/ringfence/homes))"
    # A symlink the command plants in its HOME tree never leads root's next
    # start elsewhere (it would hand VICTIM/share to the command's uid).
    hl -- sh -c "rm -rf \"\$HOME/.local\" && ln -s '$victim' \"\$HOME/.local\"" >/dev/null 2>&1
    check "control: the symlink is planted" test -L "$llhome/.local"
    expect_exit 125 "a symlink planted in HOME stops the next start" hl -- true
    contains "  ... naming it" "$ERR" "$llhome/.local"
    [ "$(stat -c %u "$victim/share")" = 0 ] && pass "  ... and what it points to stays root's" ||
        fail "  ... $victim/share was handed to uid $(stat -c %u "$victim/share")"
    # The same, raced: a sandbox of the instance swaps a directory and the
    # symlink at .local while root starts others beside it.
    rm -f "$llhome/.local"
    hl -- sh -c "cd \"\$HOME\" && end=\$((\$(date +%s) + 8)); while [ \$(date +%s) -lt \$end ]; do
        mkdir -p .d/share .d/state; mv -T .d .local 2>/dev/null; mv -T .local .d 2>/dev/null
        ln -s '$victim' .local 2>/dev/null; rm -f .local; done" >/dev/null 2>&1 &
    racer=$!
    for _ in $(seq 1 40); do hl -- true >/dev/null 2>&1; done
    wait "$racer"
    [ "$(stat -c %u "$victim/share"):$(stat -c %u "$victim/state")" = 0:0 ] &&
        pass "  ... raced 40 times: what the symlink points to stays root's" ||
        fail "  ... raced: $victim/share or state was handed to the command's uid"
    # bwrap drops to the same id before it opens its binds: the same HOME
    # tree (it failed with "Can't find source path .../runtime-user-env").
    if command -v bwrap >/dev/null 2>&1; then
        expect_exit 0 "bwrap, root, instance root out of the command's reach: HOME is usable" \
            env RINGFENCE_HOME="$hidden/rfhome" "$RINGFENCE" run --backend bwrap --accept-weaker -- \
            sh -c 'echo "$HOME"; touch "$HOME/ok-bwrap"'
        case $(head -1 <<<"$OUT") in
            /var/lib/ringfence/homes/*-"$sandbox_uid") pass "  ... the same tree of its own" ;;
            *) fail "  ... the same tree of its own (HOME=$(head -1 <<<"$OUT"))" ;;
        esac
    else
        skip "bwrap, root, instance root out of the command's reach" "bwrap is not installed"
    fi
    rm -rf "$llhome" "$hidden" "$victim"
else
    skip "root caller identity" "needs root"
fi
