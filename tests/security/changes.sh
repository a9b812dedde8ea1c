# SPDX-License-Identifier: LGPL-2.1-or-later
# --changes overlay (docs/changes.md): the real workspace stays byte-identical
# until `changes apply`, is then what the command left, and apply crosses no
# boundary: no symlink followed out of the workspace (planted in the upper
# layer or swapped in on the host), no hard link to a host file, no fifo,
# socket or device node, no set-id bit, no '..', a host change since the
# session began kept as a conflict. `discard` leaves the workspace as it was.
. "$(dirname "$0")/../lib.sh"

# Overlayfs in a user namespace needs Linux 5.11; the probe is a real run.
echo probe >"$WS/.probe"
if ! rf run --changes overlay -- true >/dev/null 2>"$SCRATCH/probe.err"; then
    skip "changes: overlay" "this kernel cannot mount the overlay here: $(head -c 200 "$SCRATCH/probe.err")"
    exit 0
fi
rm -rf "$RINGFENCE_HOME/sessions" "$WS/.probe"

# The tree as the checks compare it: names, types, modes, sizes, link
# texts, and every file's bytes.
snap() {
    (cd "$1" && find . -mindepth 1 -printf '%P %y %m %s %l\n' | LC_ALL=C sort &&
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
}
session_of() { jq -r .session "$1"; }
upper_of() { echo "$RINGFENCE_HOME/sessions/$1/upper"; }

fill_workspace() {
    rm -rf "${WS:?}"/* "$WS"/.[!.]* 2>/dev/null
    printf 'one\ntwo\nthree\n' >"$WS/a.txt"
    echo keep >"$WS/keep.txt"
    echo gone >"$WS/del.txt"
    echo 'echo hi' >"$WS/script.sh"
    mkdir -p "$WS/dir/sub" "$WS/olddir/inner"
    echo nested >"$WS/dir/sub/file"
    echo old >"$WS/olddir/inner/x"
    head -c 3000 /dev/urandom >"$WS/blob.bin"
}

# ── 1. A command's create, modify, delete, rename, chmod, deep directory ──
fill_workspace
before=$(snap "$WS")
cat >"$SCRATCH/edit.sh" <<'SH'
set -e
echo four >> a.txt
rm del.txt
mv keep.txt moved.txt
chmod 755 script.sh
mkdir -p deep/1/2/3/4/5/6/7/8/9
echo bottom > deep/1/2/3/4/5/6/7/8/9/leaf
rm -rf olddir
echo made > new.txt
printf '\001\000\002' > blob.bin
SH
cp "$SCRATCH/edit.sh" "$WS/.edit.sh" && before=$(snap "$WS")
expect_exit 0 "overlay run: the command changes the workspace (in its view)" \
    rf run --changes overlay --status-json "$SCRATCH/st1" -- sh -c \
    'sh .edit.sh && rm .edit.sh && find . -mindepth 1 -printf "%P %y %m %s %l\n" | LC_ALL=C sort &&
     find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum'
inside=$OUT
id1=$(session_of "$SCRATCH/st1")
check "the status record names the session" test -n "$id1" -a "$id1" != null
check "the real workspace is byte-identical after the run" test "$(snap "$WS")" = "$before"
expect_exit 0 "changes diff lists the changes" rf changes diff --name-only "$id1"
check "the real workspace is byte-identical after diff" test "$(snap "$WS")" = "$before"
expect_exit 0 "changes apply" rf changes apply "$id1"
after=$(snap "$WS")
if [ "$after" = "$inside" ]; then pass "after apply the workspace is what the command left"; else
    fail "after apply the workspace is what the command left"; diag "$(diff <(echo "$inside") <(echo "$after") | head -20)"; fi
check "a fully applied session is gone" test ! -e "$RINGFENCE_HOME/sessions/$id1"

# ── 2. discard leaves the workspace as it was ──
fill_workspace
before=$(snap "$WS")
expect_exit 0 "overlay run that wrecks the workspace" \
    rf run --changes overlay --status-json "$SCRATCH/st2" -- sh -c 'rm -rf ./* && echo junk > junk'
id2=$(session_of "$SCRATCH/st2")
check "the workspace survived the wreck" test "$(snap "$WS")" = "$before"
expect_exit 0 "changes discard" rf changes discard "$id2"
check "discard: the workspace is unchanged" test "$(snap "$WS")" = "$before"
check "discard: the session is gone" test ! -e "$RINGFENCE_HOME/sessions/$id2"

# ── 3. Attacks on apply ──
fill_workspace
outside="$SCRATCH/outside"
mkdir -p "$outside"
echo untouched >"$outside/target"
echo host-secret >"$SCRATCH/hostfile"
out_before=$(snap "$outside")
expect_exit 0 "overlay run: set-id bits, a fifo, a symlink out, a hard link attempt" \
    rf run --changes overlay --status-json "$SCRATCH/st3" -- sh -c "
        echo x > setid.sh && chmod 755 setid.sh
        mkfifo fifo
        ln -s '$outside' evil
        ln -s '$outside/target' evil-file
        ln /usr/bin/sh hardlink 2>/dev/null && echo LINKED
        echo in-dir > dir/sub/new
        printf 'changed\n' > a.txt"
lacks "a hard link to a host file cannot be made inside" "$OUT" LINKED
id3=$(session_of "$SCRATCH/st3")
up=$(upper_of "$id3")
# Planted straight into the upper layer: what a compromised layer would hold.
ln -s "$outside" "$up/planted"
ln "$SCRATCH/hostfile" "$up/hostlink" 2>/dev/null || cp "$SCRATCH/hostfile" "$up/hostlink"
if is_root; then mknod "$up/devnode" c 1 3; fi
chmod 6755 "$up/setid.sh" # the sandbox's seccomp filter refuses set-id modes; a layer could hold them
expect_exit 0 "changes show" rf changes show "$id3"
contains "the fifo is listed as refused" "$OUT" "fifo  (refused: a fifo)"
if is_root; then contains "the device node is listed as refused" "$OUT" "devnode  (refused: a device node)"; else
    skip "the device node is listed as refused" "mknod needs root"; fi
# The host swaps a directory for a symlink out of the workspace after the run.
mv "$WS/dir" "$WS/dir.moved"
ln -s "$outside" "$WS/dir"
# ...and edits a file the session changed too: a conflict.
echo host-edit >"$WS/a.txt"
expect_exit 125 "apply --only ../x is refused" rf changes apply "$id3" --only ../outside
contains "the '..' refusal says why" "$ERR" "'..' is not allowed"
expect_exit 1 "apply: something was not applied" rf changes apply "$id3"
contains "the conflict is listed" "$ERR" "conflict: a.txt"
contains "the fifo is refused" "$ERR" "refused: fifo"
contains "the path through the swapped symlink failed" "$ERR" "failed: dir/sub/new"
check "the conflicting host edit is kept" test "$(cat "$WS/a.txt")" = host-edit
check "nothing was written outside through a symlink" test "$(snap "$outside")" = "$out_before"
check "the host file behind the hard link is unchanged" test "$(cat "$SCRATCH/hostfile")" = host-secret
check "the applied hard link is a copy, not the host inode" \
    test "$(stat -c %i "$WS/hostlink")" != "$(stat -c %i "$SCRATCH/hostfile")"
check "the planted symlink is applied as a link, never followed" test -L "$WS/planted"
check "the fifo never reaches the workspace" test ! -e "$WS/fifo"
check "the device node never reaches the workspace" test ! -e "$WS/devnode"
check "set-id bits are never applied" test "$(stat -c %a "$WS/setid.sh")" = 755
check "the session keeps what was not applied" test -d "$RINGFENCE_HOME/sessions/$id3"
expect_exit 1 "apply --force overwrites the conflict (the refused stay refused)" rf changes apply "$id3" --force
check "after --force the file is the session's" test "$(cat "$WS/a.txt")" = changed
check "still nothing written outside" test "$(snap "$outside")" = "$out_before"

# ── 4. A session continued with --session sees its earlier changes ──
fill_workspace
before=$(snap "$WS")
expect_exit 0 "first run of a session" rf run --changes overlay --status-json "$SCRATCH/st4" -- sh -c 'rm del.txt'
id4=$(session_of "$SCRATCH/st4")
expect_exit 0 "run --session continues it" rf run --session "$id4" --status-json "$SCRATCH/st5" -- sh -c \
    'test ! -e del.txt && echo second > second.txt'
check "the status record names the same session" test "$(session_of "$SCRATCH/st5")" = "$id4"
check "the workspace is still unchanged" test "$(snap "$WS")" = "$before"
expect_exit 0 "apply --only second.txt" rf changes apply "$id4" --only second.txt
check "only second.txt was applied" test -e "$WS/second.txt" -a -e "$WS/del.txt"

# ── 5. The session itself is out of the command's reach ──
expect_exit 0 "overlay run looking for its own session" rf run --session "$id4" -- sh -c "
    cat '$RINGFENCE_HOME/sessions/$id4/session.json' 2>/dev/null && echo READ-RECORD
    ls -a '$RINGFENCE_HOME/sessions' 2>/dev/null | grep -q . && echo SAW-SESSIONS
    ls -a / | grep -q rf-session && echo SAW-STAGE
    umount '$WS' 2>/dev/null && echo UNMOUNTED
    echo x > '$SCRATCH/escaped' 2>/dev/null # (the private /tmp takes it, if anything)
    true"
for leak in READ-RECORD SAW-SESSIONS SAW-STAGE UNMOUNTED; do
    lacks "the command cannot: $leak" "$OUT" "$leak"
done
check "nothing written outside the workspace on the host" test ! -e "$SCRATCH/escaped"
rm -rf "$RINGFENCE_HOME/sessions"

# ── 5b. SIGKILL during apply: every file old or new, the rerun finishes ──
fill_workspace
for f in $(seq 1 300); do echo old >"$WS/k$f"; done
expect_exit 0 "overlay run changing 300 files" rf run --changes overlay --status-json "$SCRATCH/st7" -- sh -c \
    'for f in $(seq 1 300); do echo new > k$f; done'
id7=$(session_of "$SCRATCH/st7")
"$RINGFENCE" changes apply "$id7" >/dev/null 2>&1 & # not rf: $! must be ringfence itself
apid=$!
sleep 0.05
kill -9 "$apid" 2>/dev/null
wait "$apid" 2>/dev/null
torn=0
for f in $(seq 1 300); do
    case $(cat "$WS/k$f") in old | new) ;; *) torn=$((torn + 1)) ;; esac
done
check "after SIGKILL every file is whole, old or new" test "$torn" = 0
if [ -d "$RINGFENCE_HOME/sessions/$id7" ]; then
    expect_exit 0 "the rerun finishes" rf changes apply "$id7"
else
    pass "the rerun finishes (the first apply had finished before the kill)"
fi
check "every file is new after the rerun" test "$(cat "$WS"/k[0-9]* | sort -u)" = new
check "no temporary file is left after the rerun" test -z "$(ls -A "$WS" | grep rf-apply)"

# ── 5b. A session in use: the lock a running sandbox holds (the session's
# directory, no lock file) keeps apply and discard out, and a second run
# of it waits; the control: once the sandbox ends, apply goes through ──
rm -rf "${WS:?}"/* "$WS"/.[!.]* 2>/dev/null
echo old >"$WS/u.txt"
expect_exit 0 "overlay run that begins a session" rf run --changes overlay --status-json "$SCRATCH/st8" -- \
    sh -c 'echo new > u.txt'
id8=$(session_of "$SCRATCH/st8")
rf run --session "$id8" -- sh -c 'echo up > started; sleep 4' >/dev/null 2>&1 &
bpid=$!
for _ in $(seq 100); do [ -e "$(upper_of "$id8")/started" ] && break; sleep 0.1; done
check "the sandbox continuing the session is running" test -e "$(upper_of "$id8")/started"
check "the new session's lock made no lock file" test ! -e "$RINGFENCE_HOME/sessions/$id8/lock"
expect_exit 125 "apply of a session in use is refused" rf changes apply "$id8"
contains "it says the session is in use" "$ERR" "is in use"
expect_exit 125 "discard of a session in use is refused" rf changes discard "$id8"
check "the real file is untouched while the session is in use" test "$(cat "$WS/u.txt")" = old
check "the session is still there" test -d "$(upper_of "$id8")"
wait "$bpid" # the sandbox ends by itself (its lock goes with its last process)
rm -f "$(upper_of "$id8")/started"
expect_exit 0 "control: with the sandbox gone, apply goes through" rf changes apply "$id8"
check "control: the file is applied" test "$(cat "$WS/u.txt")" = new
# A session an older ringfence made has a lock file: that is what is locked.
expect_exit 0 "overlay run for an old-style session" rf run --changes overlay --status-json "$SCRATCH/st9" -- \
    sh -c 'echo newer > u.txt'
id9=$(session_of "$SCRATCH/st9")
: >"$RINGFENCE_HOME/sessions/$id9/lock"
exec 8<"$RINGFENCE_HOME/sessions/$id9/lock"
flock -x 8
expect_exit 125 "a session whose lock file another holds is refused" rf changes apply "$id9"
exec 8<&-
expect_exit 0 "control: once it is let go, apply goes through" rf changes apply "$id9"
check "control: the file is applied" test "$(cat "$WS/u.txt")" = newer

# A file the session changed, swapped on the host for a symlink out of the
# workspace: apply leaves it (conflict), --force replaces the link itself;
# the file outside is never written (control: the same apply without the
# swap writes the file).
expect_exit 0 "overlay run changing a file the host will swap for a symlink" rf run --changes overlay \
    --status-json "$SCRATCH/st10" -- sh -c 'echo session > u.txt; echo session > v.txt'
id10=$(session_of "$SCRATCH/st10")
echo outside >"$SCRATCH/outside10"
rm "$WS/u.txt" && ln -s "$SCRATCH/outside10" "$WS/u.txt"
expect_exit 1 "apply: the swapped file is not applied" rf changes apply "$id10"
contains "it is listed" "$ERR" "u.txt"
check "control: the file beside it is applied" test "$(cat "$WS/v.txt")" = session
check "the file outside is untouched" test "$(cat "$SCRATCH/outside10")" = outside
expect_exit 0 "apply --force replaces the link itself" rf changes apply "$id10" --force
check "the file outside is still untouched" test "$(cat "$SCRATCH/outside10")" = outside
check "u.txt is now a regular file with the session's bytes" test ! -L "$WS/u.txt" -a "$(cat "$WS/u.txt")" = session

# ── 6. A full disk during apply: every file old or new, a report, a rerun finishes ──
FULL="$SCRATCH/full"
mkdir -p "$FULL"
if ! is_root || ! mount -t tmpfs -o size=1m,mode=0777 tmpfs "$FULL" 2>/dev/null; then
    skip "full disk during apply" "needs root to mount a small tmpfs as the workspace"
    exit 0
fi
eval "set -- $(trap -p EXIT)"
trap "umount -l '$FULL' 2>/dev/null; $3" EXIT
set --
echo small-old >"$FULL/a.txt"
head -c 2000 /dev/zero | tr '\0' o >"$FULL/big.txt"
expect_exit 0 "overlay run on a small workspace" rf run --workspace "$FULL" --changes overlay \
    --status-json "$SCRATCH/st6" -- sh -c 'echo small-new > a.txt; head -c 400000 /dev/zero | tr "\0" n > big.txt'
id6=$(session_of "$SCRATCH/st6")
dd if=/dev/zero of="$FULL/filler" bs=4096 count=170 2>/dev/null # leaves about 330 KiB: not enough for big.txt
expect_exit 1 "apply on a nearly full disk: partly applied" rf changes apply "$id6"
contains "the file that did not fit is reported" "$ERR" "failed: big.txt"
contains "what fitted is reported applied" "$OUT" "applied: a.txt"
check "the file that did not fit is whole and old" test "$(head -c 2000 /dev/zero | tr '\0' o)" = "$(cat "$FULL/big.txt")"
check "no temporary file is left" test -z "$(ls -A "$FULL" | grep rf-apply)"
rm "$FULL/filler"
expect_exit 0 "after space is freed, the rerun finishes" rf changes apply "$id6"
check "the big file is new now" test "$(wc -c <"$FULL/big.txt")" = 400000
check "the finished session is gone" test ! -e "$RINGFENCE_HOME/sessions/$id6"
