# SPDX-License-Identifier: LGPL-2.1-or-later
# learn and --explain-denials observe; they never change a verdict. The
# hidden battery gives the same answers under `run` and under `learn`;
# a learned ~/.ssh/id_* read is flagged, never suggested or written; the
# supervisor outlives a hostile command (a flood of calls, unterminated
# paths before an unmapped page, unmapped pointers, racing threads).
. "$(dirname "$0")/common.bash"
fake="$SCRATCH/home"
mkdir -p "$fake/.ssh"
echo "rf-secret-key" >"$fake/.ssh/id_ed25519"
echo "rf-secret-content" >"$SCRATCH/secret"
chmod -R a+rX "$fake" "$SCRATCH/secret"
export HOME="$fake"

host_ok "control: the key is readable on the host" read "$fake/.ssh/id_ed25519"

# Each crossing: its verdict under run, then under learn and
# --explain-denials, which must be the same.
same_verdict() {
    local desc=$1; shift
    local a b c
    a=$(rf run --expose "$PROBE" -- "$PROBE" "$@" 2>/dev/null </dev/null; echo "exit $?")
    b=$(rf learn --expose "$PROBE" -- "$PROBE" "$@" 2>/dev/null </dev/null; echo "exit $?")
    c=$(rf run --explain-denials --expose "$PROBE" -- "$PROBE" "$@" 2>/dev/null </dev/null; echo "exit $?")
    if [ "$a" = "$b" ] && [ "$a" = "$c" ] && [[ $a == *"denied:"* ]]; then pass "$desc: denied, under learn too"; else
        fail "$desc"; diag "run: $a" "learn: $b" "explain-denials: $c"; fi
}
same_verdict "a hidden key" read "$fake/.ssh/id_ed25519"
same_verdict "a secret outside the workspace" read "$SCRATCH/secret"
same_verdict "a write into the caller's home" write "$fake/planted"
same_verdict "a write to the system" write /usr/rf-planted
same_verdict "/etc/shadow" read /etc/shadow
same_verdict "seccomp: mount" syscall mount
same_verdict "seccomp: unshare a user namespace" unshare-user
same_verdict "seccomp: bpf" syscall bpf
check "nothing was planted" test ! -e "$fake/planted"

# The key read is flagged, not suggested, not written.
layer="$SCRATCH/learned.yaml"
expect_exit 1 "learn a command that reads ~/.ssh/id_ed25519" \
    rf learn --write "$layer" --expose "$PROBE" -- "$PROBE" read "$fake/.ssh/id_ed25519"
contains "the read stayed denied" "$OUT" "denied:"
contains "the report flags ~/.ssh" "$ERR" "FLAGGED, not suggested: ~/.ssh"
expect_exit 0 "the written layer loads" rf config --config "$layer"
check "and exposes nothing of ~/.ssh" python3 -c '
import json, sys
e = json.loads(sys.argv[1])["expose"]
assert not any(".ssh" in json.dumps(r) for r in e), e' "$OUT"
contains "the file says what it left out" "$(cat "$layer")" "# Flagged, NOT written"
echo "# rc" >"$fake/.bashrc"
chmod 644 "$fake/.bashrc"
expect_exit 1 "learn a command that appends to ~/.bashrc (persistence)" \
    rf learn --expose "$PROBE" -- "$PROBE" write "$fake/.bashrc"
contains "shell start-up files are flagged" "$ERR" "persistence"

# A hostile command: the supervisor keeps answering, the verdict holds.
start=$(date +%s)
expect_exit 1 "a hostile command under learn ends, its read still denied" \
    timeout 60 "$RINGFENCE" learn --expose "$PROBE" -- "$PROBE" observe-hostile "$fake/.ssh/id_ed25519" 3000
contains "the probe's read was denied" "$OUT" "denied:"
contains "and ringfence still reported" "$ERR" "learn: what the command looked for"
# It ended by itself: `timeout 60` would have made the exit 124. The time
# is a note, not a check.
diag "the hostile command under learn took $(($(date +%s) - start)) s"
expect_exit 1 "the same under --explain-denials" \
    timeout 60 "$RINGFENCE" run --explain-denials --expose "$PROBE" -- "$PROBE" observe-hostile "$SCRATCH/secret" 1000
contains "denied there too" "$OUT" "denied:"

# The mount point of an expose into the sandbox's own home is made by
# ringfence on the host: a symlink planted there by an earlier run must not
# lead it outside (it may be root).
uhome="$RINGFENCE_HOME/runtime-user-env"
expect_exit 0 "a first run makes the sandbox's home" rf run -- true
mkdir -p "$SCRATCH/outside"
chmod 777 "$SCRATCH/outside"
rm -rf "$uhome/.cfg-link"
ln -s "$SCRATCH/outside" "$uhome/.cfg-link"
echo x >"$SCRATCH/src-file"
chmod 644 "$SCRATCH/src-file"
rc=0
rf run --expose "$SCRATCH/src-file:$uhome/.cfg-link/planted" -- true >/dev/null 2>&1 || rc=$?
check "no file was made through the planted symlink (run exit $rc)" test ! -e "$SCRATCH/outside/planted"

# A write to a protected path of the workspace (.git/hooks: runs outside
# the sandbox) or to the system: named, and no flag is offered for it.
mkdir -p "$WS/.git/hooks"
expect_exit 0 "writes to .git/hooks and /usr, observed" rf learn --write "$layer" -- \
    sh -c "echo x > $WS/.git/hooks/pre-commit; touch /usr/rf-planted; true"
check "the hook was not written" test ! -e "$WS/.git/hooks/pre-commit"
contains "the hook is flagged as protected" "$ERR" "FLAGGED, not suggested: $WS/.git/hooks/pre-commit"
contains "the system write too" "$ERR" "a system directory: never made writable"
lacks "no rule in the layer makes either writable" "$(grep -v '^#' "$layer")" "rw"
