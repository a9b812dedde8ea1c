# SPDX-License-Identifier: LGPL-2.1-or-later
# Files: what lies outside the workspace can be neither read nor written;
# the system is read-only; the workspace is read-write and writes land on
# the host.
. "$(dirname "$0")/common.bash"

# ── A secret outside the workspace stays unreadable ──
secret="$SCRATCH/secret"
echo "rf-secret-content" >"$secret"
chmod 644 "$secret"
host_ok "control: the secret is readable on the host" read "$secret"
in_denied "secret outside the workspace: absolute path" read "$secret"
in_denied "secret outside the workspace: ../ from the workspace" read ../secret
in_denied "secret outside the workspace: ../../ws/../secret" read ../../"$(basename "$SCRATCH")"/ws/../secret
ln -s "$secret" "$WS/abs-link"
ln -s ../secret "$WS/rel-link"
host_ok "control: the planted symlinks reach the secret on the host" read "$WS/abs-link"
in_denied "secret through an absolute symlink planted in the workspace" read "$WS/abs-link"
in_denied "secret through a relative symlink planted in the workspace" read "$WS/rel-link"
expect_exit 0 "the secret's directory shows only the workspace and the instance root" \
    rf run -- ls -A "$SCRATCH"
lacks "no 'secret' in the listing of the workspace's parent" "$OUT" secret

# Outside /tmp too (the sandbox's /tmp is private anyway): /var/tmp.
vt=$(mktemp -d /var/tmp/rf-sec.XXXXXX)
at_exit "rm -rf '$vt'"
chmod 755 "$vt"
echo "rf-secret-content" >"$vt/secret"
chmod 644 "$vt/secret"
host_ok "control: the /var/tmp secret is readable on the host" read "$vt/secret"
in_denied "secret in /var/tmp unreadable" read "$vt/secret"
ln -s "$vt/secret" "$WS/vt-link"
in_denied "secret in /var/tmp through a symlink in the workspace" read "$WS/vt-link"

# The instance root's other directories are the caller's, not the sandbox's.
mkdir -p "$RINGFENCE_HOME/state"
echo "state-secret" >"$RINGFENCE_HOME/state/secret"
in_denied "instance state/ is not visible (only runtime-user-env is)" read "$RINGFENCE_HOME/state/secret"

# ── Writes outside the workspace are impossible ──
target="$SCRATCH/target"
echo "original" >"$target"
chmod 666 "$target"
inside write "$target" >/dev/null 2>&1 </dev/null
inside write ../target >/dev/null 2>&1 </dev/null
ln -s "$target" "$WS/target-link"
inside write "$WS/target-link" >/dev/null 2>&1 </dev/null
check "a file outside the workspace is unchanged after writes by path, ../ and symlink" \
    test "$(cat "$target")" = original
inside write "$SCRATCH/created" >/dev/null 2>&1 </dev/null
check "no file was created next to the workspace on the host" test ! -e "$SCRATCH/created"
inside write "$vt/created" >/dev/null 2>&1 </dev/null
check "no file was created in /var/tmp on the host" test ! -e "$vt/created"

probe_file="rf-sec-$TOKEN"
at_exit "rm -f '/usr/$probe_file' '/etc/$probe_file' '/usr/bin/$probe_file' '/$probe_file'"
in_denied "/usr is read-only (create a file)" write "/usr/$probe_file"
in_denied "/usr/bin is read-only (create a file)" write "/usr/bin/$probe_file"
in_denied "/usr/bin/sh cannot be opened for writing" open-write /usr/bin/sh
in_denied "/etc is read-only (create a file)" write "/etc/$probe_file"
in_denied "/etc/passwd cannot be opened for writing" open-write /etc/passwd
in_denied "/etc/hosts cannot be opened for writing" open-write /etc/hosts
in_denied "/ is read-only (create a file)" write "/$probe_file"
check "nothing was created in the host's /usr, /etc or /" \
    test ! -e "/usr/$probe_file" -a ! -e "/etc/$probe_file" -a ! -e "/usr/bin/$probe_file" -a ! -e "/$probe_file"
expect_exit 1 "mkdir in /usr fails" rf run -- mkdir "/usr/$probe_file"
check "no directory was created in the host's /usr" test ! -e "/usr/$probe_file"

# Read-only means a read-only mount, not just file permissions: the
# caller's own directory, exposed without :rw, takes no write.
ro="$SCRATCH/exposed"
mkdir -p "$ro"
echo "original" >"$ro/file"
RF_OPTS=(--expose "$ro")
in_denied "a directory of the caller's exposed read-only takes no new file" write "$ro/new"
in_denied "a file of the caller's exposed read-only cannot be opened for writing" open-write "$ro/file"
RF_OPTS=(--expose "$ro:rw")
in_ok "control: exposed with :rw, the same directory takes a new file" write "$ro/new-rw"
RF_OPTS=()
check "the read-only exposed directory is unchanged on the host" test ! -e "$ro/new" -a "$(cat "$ro/file")" = original
expect_exit 0 "read the mount table inside" rf run -- cat /proc/self/mountinfo
rw_system=$(awk '($5 == "/" || $5 == "/usr" || $5 == "/etc" || $5 ~ /^\/etc\//) && $6 !~ /(^|,)ro(,|$)/ { print $5 }' <<<"$OUT")
check "/, /usr and every /etc entry are read-only mounts, /etc itself too (the cached copy)${rw_system:+ (rw: $rw_system)}" \
    test -z "$rw_system" -a -n "$OUT"
# The cached /etc (backend/native/etc-cache.c) is a directory of the
# instance root on the host: a write through it must not reach the next
# sandbox, and nothing else of the instance root's cache comes with it.
in_denied "the cached /etc takes no new file" write "/etc/rf-planted-$$"
expect_exit 1 "the cached /etc takes no new directory" rf run -- mkdir "/etc/rf-planted-dir-$$"
check "  ... and its host directory has none" \
    sh -c '! ls -d "$1"/cache/etc-*/rf-planted-* 2>/dev/null | grep -q .' sh "$RINGFENCE_HOME"

# ── Inside the workspace: read-write, and the writes reach the host ──
in_ok "a file in the workspace can be created" write "$WS/made-inside"
check "the file made inside is on the host with its content" test "$(cat "$WS/made-inside" 2>/dev/null)" = probe
echo "from-host" >"$WS/from-host"
expect_exit 0 "a host file in the workspace is readable inside" rf run -- cat "$WS/from-host"
contains "its content is intact" "$OUT" from-host
expect_exit 0 "HOME is writable inside" rf run -- sh -c 'echo home >"$HOME/rf-home-file"'
check "a write to HOME lands in \$RINGFENCE_HOME/runtime-user-env" \
    test "$(cat "$RINGFENCE_HOME/runtime-user-env/rf-home-file" 2>/dev/null)" = home

# ── A root caller's workspace that another uid owns (a checkout bind-mounted
# into a container whose user is root): writable, new files the owner's; a
# root-owned file in it and everything outside stay out of reach. Control:
# the plan says which owner the workspace's idmap shows as the sandbox's. ──
# The native backend's: bwrap and landlock drop a root caller to the
# workspace's owner instead (their batteries run this script too).
U=${RF_TEST_USER:-rftest}
native_root=false
if is_root && id "$U" >/dev/null 2>&1 && ! root_contained && [ "${RF_TEST_BACKEND:-native}" = native ]; then
    native_root=true
fi
if $native_root; then
    ows="$SCRATCH/owned-ws"
    mkdir -p "$ows/sub"
    echo old >"$ows/theirs"
    chown -R "$U:$U" "$ows"
    echo root >"$ows/roots"
    chmod 644 "$ows/roots"
    expect_exit 0 "plan for a workspace another uid owns" rf plan --workspace "$ows" -- true
    check "...its bind is idmapped from that owner" python3 -c "import json, sys
m = [m for m in json.loads(sys.argv[1])['mounts'] if m['why'] == 'workspace']
assert m and m[0].get('idmap_owner') == $(id -u "$U"), m" "$OUT"
    expect_exit 0 "root's sandbox writes a file the workspace owner owns" \
        rf run --workspace "$ows" -- sh -c 'echo new >>theirs && touch sub/made made'
    check "...its content changed" grep -q new "$ows/theirs"
    check "...and the files it made belong to the workspace's owner" sh -c "
        [ \"\$(stat -c %U '$ows/made')\" = '$U' ] && [ \"\$(stat -c %U '$ows/sub/made')\" = '$U' ]"
    # (a redirection the shell cannot open exits 2)
    expect_exit 2 "...a root-owned file in it stays read-only" rf run --workspace "$ows" -- sh -c 'echo x >>roots'
    check "...unchanged" test "$(cat "$ows/roots")" = root
    expect_exit 2 "...and the caller's own root-owned scratch outside it is not writable" \
        rf run --workspace "$ows" -- sh -c "echo x >'$SCRATCH/outside-$$'"
    check "...and nothing was made there" test ! -e "$SCRATCH/outside-$$"
else
    skip "a root caller's workspace another uid owns" "needs root (not contained), user $U and the native backend"
fi
# The overlay mode is not id-mapped for a root caller: in such a workspace
# it is refused before anything runs, naming the owner and the way out.
if $native_root; then
    rm -f "$ows/ov-marker"
    expect_exit 125 "--changes overlay in a workspace another uid owns: refused (root)" \
        rf run --workspace "$ows" --changes overlay -- sh -c 'touch ov-marker'
    contains "...naming the owner" "$ERR" "belongs to uid $(id -u "$U") ($U)"
    contains "...and the way out" "$ERR" "runuser -u $U -- ringfence run --changes overlay"
    check "...nothing ran" test ! -e "$ows/ov-marker"
fi
