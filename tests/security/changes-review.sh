# SPDX-License-Identifier: LGPL-2.1-or-later
# Review against a hostile command (docs/changes.md, docs/learn.md):
#  1. `changes diff` and `changes show` on a terminal send no control
#     character the command wrote (contents or names): no ESC, BEL, C1 or
#     bare CR reaches the terminal, the visible form and a note appear;
#     --raw and a pipe keep the bytes.
#  2. learn's report and --explain-denials on a terminal: the same for the
#     paths the command looked for.
#  3. overlay on a workspace holding a file of another group or owner:
#     refused before the start for an unprivileged caller (the file named,
#     the way out given), where --changes direct writes it; the same
#     outcome in both modes for a root caller.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/common.bash"

if [ "${RF_TEST_BACKEND:-native}" != native ] || ! command -v python3 >/dev/null || ! command -v jq >/dev/null; then
    skip "review against a hostile command" "needs the native backend, python3 and jq"
    exit 0
fi
echo probe >"$WS/.probe"
if ! rf run --changes overlay -- true >/dev/null 2>"$SCRATCH/probe.err"; then
    skip "changes: overlay" "this kernel cannot mount the overlay here: $(head -c 200 "$SCRATCH/probe.err")"
    exit 0
fi
rm -rf "$RINGFENCE_HOME/sessions" "$WS/.probe"

# pty_run OUT CMD...: CMD on a fresh pseudo-terminal (all of stdin, stdout
# and stderr), everything it wrote to it in OUT; its exit status.
pty_run() {
    python3 - "$@" <<'PY'
import os, pty, sys
out, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
buf = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:  # EIO: the slave's last holder closed it
        break
    if not d:
        break
    buf += d
_, st = os.waitpid(pid, 0)
open(out, "wb").write(buf)
sys.exit(os.waitstatus_to_exitcode(st))
PY
}

# controls FILE [sgr]: what in FILE a terminal would act on, one line each
# (empty: nothing). With sgr, ESC [ digits m (our own colours) is allowed.
controls() {
    python3 - "$@" <<'PY'
import re, sys
b = open(sys.argv[1], "rb").read()
if len(sys.argv) > 2:
    b = re.sub(rb"\x1b\[[0-9;]*m", b"", b)
for what, rx in (("ESC", rb"\x1b"), ("BEL", rb"\x07"), ("C1 control", rb"\xc2[\x80-\x9f]"),
                 ("byte 0x9b", rb"(?<![\xc2])\x9b"), ("bare CR", rb"\r(?!\n)")):
    m = re.search(rx, b)
    if m:
        print("%s at %d: %r" % (what, m.start(), b[max(0, m.start() - 20):m.start() + 20]))
PY
}

# ── 1. changes diff and show on a terminal ──
printf 'ok\n' >"$WS/a.txt"
cat >"$SCRATCH/hostile.sh" <<'SH'
printf 'ok line\nevil\033[1A\033[2Khidden\n\033]52;c;aGk=\007title\nbare\rCR\n\302\233c1\n' > a.txt
printf x > "$(printf 'n\033[2J\033]0;t\aame')"
SH
cp "$SCRATCH/hostile.sh" "$WS/.h.sh"
expect_exit 0 "a command writes escape sequences into a file and a file name" \
    rf run --changes overlay --status-json "$SCRATCH/st1" -- sh -c 'sh .h.sh; rm .h.sh'
rm -f "$WS/.h.sh"
id1=$(jq -r .session "$SCRATCH/st1")

rc=0; NO_COLOR=1 pty_run "$SCRATCH/tty1" "$RINGFENCE" changes diff "$id1" || rc=$?
check "changes diff on a terminal: exit 0" test "$rc" = 0
bad=$(controls "$SCRATCH/tty1")
check "no ESC, BEL, C1 or bare CR from the workspace reaches the terminal" test -z "$bad"
[ -z "$bad" ] || diag "$bad"
shown=$(cat "$SCRATCH/tty1")
contains "the escape sequences are shown visibly" "$shown" 'evil^[[1A^[[2Khidden'
contains "OSC 52 and BEL are shown visibly" "$shown" '^[]52;c;aGk=^Gtitle'
contains "a bare CR is shown as ^M" "$shown" 'bare^MCR'
contains "a C1 CSI is shown as \\u009b" "$shown" '\u009bc1'
contains "the diff says the file holds control characters" "$shown" "holds 6 control characters"
contains "the added line that an erase would hide is there" "$shown" "+ok line"
contains "the file name is quoted" "$shown" '"n\033[2J\033]0;t\aame"'

rc=0; pty_run "$SCRATCH/tty2" "$RINGFENCE" changes diff --color always "$id1" || rc=$?
bad=$(controls "$SCRATCH/tty2" sgr)
check "with colours: the only escape sequences are ringfence's own colours" test "$rc" = 0 -a -z "$bad"
[ -z "$bad" ] || diag "$bad"

rc=0; pty_run "$SCRATCH/tty3" "$RINGFENCE" changes show "$id1" || rc=$?
bad=$(controls "$SCRATCH/tty3")
check "changes show on a terminal: nothing to act on" test "$rc" = 0 -a -z "$bad"
contains "changes show names the hostile file quoted" "$(cat "$SCRATCH/tty3")" '"n\033[2J\033]0;t\aame"'

rc=0; NO_COLOR=1 pty_run "$SCRATCH/tty4" "$RINGFENCE" changes diff --raw "$id1" || rc=$?
check "--raw on a terminal keeps the bytes (for tools)" \
    python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); sys.exit(0 if b"evil\x1b[1A\x1b[2Khidden" in b and b"\x1b]52;c;aGk=\x07" in b else 1)' "$SCRATCH/tty4"
"$RINGFENCE" changes diff "$id1" >"$SCRATCH/pipe"
check "a pipe keeps the bytes, and gets no note" \
    python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); sys.exit(0 if b"evil\x1b[1A\x1b[2Khidden" in b and b"bare\rCR" in b and b"control character" not in b else 1)' "$SCRATCH/pipe"
rf changes discard "$id1" >/dev/null

# ── 2. learn and --explain-denials on a terminal ──
mkdir -p "$SCRATCH/hid"
evil="$SCRATCH/hid/x$(printf '\033]0;pwned\007\033[2K\r')y"
echo secret >"$evil"
cat >"$WS/.look.sh" <<SH
cat "\$(printf '$SCRATCH/hid/x\\033]0;pwned\\007\\033[2K\\ry')" 2>/dev/null; true
SH
rc=0; pty_run "$SCRATCH/tty5" "$RINGFENCE" learn -- sh .look.sh || rc=$?
bad=$(controls "$SCRATCH/tty5")
check "learn's report on a terminal: no control character of the path" test "$rc" = 0 -a -z "$bad"
[ -z "$bad" ] || diag "$bad"
contains "learn's report shows the path visibly" "$(cat "$SCRATCH/tty5")" 'x^[]0;pwned^G^[[2K^My'
rc=0; pty_run "$SCRATCH/tty6" "$RINGFENCE" run --explain-denials -- sh .look.sh || rc=$?
bad=$(controls "$SCRATCH/tty6")
check "--explain-denials on a terminal: no control character of the path" test "$rc" = 0 -a -z "$bad"
[ -z "$bad" ] || diag "$bad"
contains "--explain-denials shows the path visibly" "$(cat "$SCRATCH/tty6")" 'x^[]0;pwned^G^[[2K^My'
rm -f "$WS/.look.sh"

# ── 3. overlay on files of another group or owner ──
# A workspace of the unprivileged user U holding a.txt: its own, group
# root, group-writable.
unpriv_case() { # DESC RUN-PREFIX...
    local u=$1; shift
    local base="$SCRATCH/ids-$u" ws
    ws="$base/ws"
    rm -rf "$base"
    mkdir -p "$ws/src" "$base/home"
    echo base >"$ws/src/a.txt"
    echo ok >"$ws/mine.txt"
    chown -R "$u:" "$base"
    chgrp root "$ws/src/a.txt"
    chmod 664 "$ws/src/a.txt"
    as_u() { (cd "$ws" && runuser -u "$u" -- env RINGFENCE_HOME="$base/home" "$RINGFENCE" "$@"); }
    expect_exit 0 "[$u] --changes direct writes a group-root file it may write" \
        as_u run -- sh -c 'echo direct > src/a.txt'
    expect_exit 125 "[$u] --changes overlay is refused before the start" \
        as_u run --changes overlay -- sh -c 'echo started > started.txt'
    contains "[$u] the refusal names the file and its group" "$ERR" "src/a.txt in the workspace $ws has group root (gid 0)"
    contains "[$u] the refusal says why" "$ERR" "overlayfs cannot copy it up"
    contains "[$u] and the way out" "$ERR" "hint: make it your group's (chgrp"
    contains "[$u] ... or --changes direct" "$ERR" "--changes direct"
    check "[$u] nothing started: no file, no session" test ! -e "$ws/started.txt" -a -z "$(ls -A "$base/home/sessions" 2>/dev/null)"
    # Another user's file it writes through its group.
    chgrp "$(id -gn "$u")" "$ws/src/a.txt"
    echo theirs >"$ws/other.txt"
    chown "root:$(id -gn "$u")" "$ws/other.txt"
    chmod 664 "$ws/other.txt"
    expect_exit 0 "[$u] --changes direct writes another user's file through the group" \
        as_u run -- sh -c 'echo direct > other.txt'
    expect_exit 125 "[$u] --changes overlay is refused for it" as_u run --changes overlay -- true
    contains "[$u] the refusal names it and its owner" "$ERR" "other.txt in the workspace $ws has owner root (uid 0)"
    # A name chosen by a command: shown quoted, no escape reaches stderr.
    rm -f "$ws/other.txt"
    local n
    n="$ws/$(printf 'e\033]0;t\avil')"
    echo x >"$n" && chown "$u:root" "$n" && chmod 664 "$n"
    expect_exit 125 "[$u] a hostile file name in the refusal" as_u run --changes overlay -- true
    contains "[$u] ... is quoted" "$ERR" '"e\033]0;t\avil"'
    lacks "[$u] ... and no ESC reaches the terminal" "$ERR" $'\033'
    rm -f "$n"
    # Every file its own: overlay runs, the write is in the session.
    expect_exit 0 "[$u] once the files are its own, overlay runs" \
        as_u run --changes overlay --status-json "$base/st" -- sh -c 'echo overlay > src/a.txt'
    check "[$u] the real file is untouched" test "$(cat "$ws/src/a.txt")" = direct
    local sid
    sid=$(jq -r .session "$base/st")
    expect_exit 0 "[$u] the write is in the session's diff" as_u changes diff "$sid"
    contains "[$u] ... as written" "$OUT" "+overlay"
    # The clean walk is remembered for a minute, for this very tree: a new
    # entry in the workspace's directory is a new tree.
    echo x >"$ws/new.txt" && chown "$u:root" "$ws/new.txt" && chmod 664 "$ws/new.txt"
    expect_exit 125 "[$u] a file of group root added since the clean walk is found" \
        as_u run --changes overlay -- true
    contains "[$u] ... and named" "$ERR" "new.txt in the workspace"
}

if is_root; then
    if id rftest >/dev/null 2>&1; then
        unpriv_case rftest
    else
        skip "overlay on another group's file, unprivileged" "no user rftest (tests/run creates it)"
    fi
    # A root caller: the workspace is id-mapped; a file of an unmapped
    # group is read-only inside in both modes, and nothing is refused.
    rm -rf "${WS:?}"/*
    echo base >"$WS/g.txt"
    chgrp staff "$WS/g.txt" 2>/dev/null || chgrp 50 "$WS/g.txt"
    chmod 664 "$WS/g.txt"
    echo base >"$WS/r.txt"
    rcd=0; rf run -- sh -c 'echo x > g.txt' 2>/dev/null || rcd=$?
    rco=0; rf run --changes overlay -- sh -c 'echo x > g.txt' 2>/dev/null || rco=$?
    check "root: a write to a file of an unmapped group ends the same in both modes ($rcd, $rco)" test "$rcd" = "$rco"
    expect_exit 0 "root: overlay is not refused, and writes root's own files" \
        rf run --changes overlay --status-json "$SCRATCH/str" -- sh -c 'echo new > r.txt; cat r.txt'
    contains "root: ... as written" "$OUT" new
else
    skip "overlay on another group's file, unprivileged" "needs root to make a file of a group or owner this user cannot map (runs as root, for user rftest)"
    # What this user can make: every file its own; overlay runs.
    echo base >"$WS/a.txt"
    expect_exit 0 "unprivileged: a workspace of its own files is not refused" \
        rf run --changes overlay --status-json "$SCRATCH/stu" -- sh -c 'echo overlay > a.txt'
    check "unprivileged: the real file is untouched" test "$(cat "$WS/a.txt")" = base
fi

# ── 4. apply: a file renamed from the upper layer is what a copy would be ──
# (src/lib/changes/apply.c: prepare_move) ours, our group, no set-id bit,
# its times now, no extended attribute the command set. (The set-gid
# directory's group is not checked here: a sandbox can write in such a
# directory only when its group is the caller's own.)
mkdir -p "$SCRATCH/ap"
WS2="$SCRATCH/ap/ws"
rm -rf "$WS2"
mkdir -p "$WS2"
echo old >"$WS2/old.txt"
mygid=$(id -g)
cat >"$WS2/.ap.sh" <<'SH'
echo new > old.txt
touch -d 2000-01-01 old.txt
echo setid > setid.sh && chmod 4755 setid.sh 2>/dev/null
echo tagged > tagged.txt
python3 -c 'import os; os.setxattr("tagged.txt", "user.rf-test", b"planted")' 2>/dev/null
rm .ap.sh
SH
expect_exit 0 "apply: a command changes and makes files" \
    rf run --workspace "$WS2" --changes overlay --status-json "$SCRATCH/st4" -- sh .ap.sh
id4=$(jq -r .session "$SCRATCH/st4")
before_apply=$(date +%s)
expect_exit 0 "apply: all of it" rf changes apply "$id4"
check "the applied file holds the new bytes" test "$(cat "$WS2/old.txt")" = new
check "it is ours (uid $(id -u))" test "$(stat -c %u "$WS2/old.txt")" = "$(id -u)"
check "its mtime is the apply's, not the command's 2000-01-01" test "$(stat -c %Y "$WS2/old.txt")" -ge "$((before_apply - 5))"
check "a file made elsewhere has our group" test "$(stat -c %g "$WS2/tagged.txt")" = "$mygid"
if [ -e "$WS2/setid.sh" ]; then
    check "no set-id bit is applied" test "$(stat -c %a "$WS2/setid.sh")" -lt 1000
else
    skip "no set-id bit is applied" "the command could not make the file"
fi
check "an extended attribute the command set is not applied" \
    python3 -c 'import os, sys; sys.exit(1 if "user.rf-test" in os.listxattr(sys.argv[1]) else 0)' "$WS2/tagged.txt"
check "nor overlayfs' own" \
    python3 -c 'import os, sys; sys.exit(1 if any("overlay" in n for n in os.listxattr(sys.argv[1])) else 0)' "$WS2/old.txt"
check "the applied session is gone" test ! -e "$RINGFENCE_HOME/sessions/$id4"

# Sessions left are discarded: overlayfs leaves its work directory mode
# 000, which an unprivileged user's rm -rf of the scratch directory cannot
# enter (discard can).
for s in $("$RINGFENCE" changes list --json 2>/dev/null | jq -r '.[].id' 2>/dev/null); do
    "$RINGFENCE" changes discard "$s" >/dev/null 2>&1
done
