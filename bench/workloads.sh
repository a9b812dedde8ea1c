#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Real workloads, not `true`: what agents run in large trees, each bare,
# under ringfence (default; --changes overlay; the allowlist proxy on;
# learn), under bubblewrap with the same mounts, and under the kernel's
# overlayfs alone (the overlay mode's floor), interleaved round by round
# (bench/interleave.py), with each one's ratio to bare and its spread.
#
#   bench/workloads.sh [BUILD_DIR] [ROUNDS] [WORKLOAD...]   (default: build, 6, all)
#   QUICK=1 bench/workloads.sh          small fixtures, 2 rounds, no warm-up, no npm: < 2 min
#
# Workloads (fixtures made here, in a scratch directory):
#   git-status   `git status` x8 in a 20,000-file repository
#   tar          `tar -cf /dev/null .` x8 of the same tree (GNU tar reads no
#                file when the archive is /dev/null: a walk of lstat and getdents)
#   grep         `grep -r` x2 of the same tree: every file opened and read
#   compileall   `python3 -m compileall -f -q` of 1,000 modules
#   make         `make -j2` of 60 C files (from clean)
#   git-once     one `git status`: the start's cost included
#   unittest     `python3 -m unittest` of 300 tests that write and read files
#   npm          `npm ci --offline` of express (72 packages) from a cache
#                primed here once through the registry (skipped without it)
#
# Modes: bare; ringfence (`run`); no-landlock (`run --landlock off`: what
# Landlock's rules cost inside the sandbox, beside its floor); overlay (`run --changes overlay`, the
# session discarded inside the timed span); allowlist (`run --allow-domain`:
# the proxy started); learn; bwrap (the default plan's mounts); ovl-floor
# (`unshare` + an overlayfs mount of the workspace with the session's
# options, fresh upper each run, removed inside the timed span: what
# overlayfs alone costs). Each mode runs the workload's line through one
# /bin/sh -c, bare included. Per workload interleave.py prints medians,
# percentiles and the per-round ratio's spread; the closing table has each
# mode's median ratio to bare (wall, p10-p90 of the per-round ratios) and of
# CPU (user+sys of the whole tree). STRACE=1 adds `strace -c -f` per mode
# (calls by kind, ringfence's own included) where the counts differ.
# Timings are for notes, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
quick=${QUICK:-}
rounds=${2:-$([ -n "$quick" ] && echo 2 || echo 6)}
warmup=$([ -n "$quick" ] && echo 0 || echo 1)
shift $(($# > 2 ? 2 : $#))
wanted=${*:-git-status tar grep compileall make git-once unittest npm}
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "bench: needs git" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "bench: needs bwrap (apt-get install bubblewrap)" >&2; exit 1; }
[ -n "$quick" ] && wanted=${wanted/npm/}
# Every mode starts from the environment a sandboxed command gets (its
# PATH, a home of its own, C.UTF-8): the caller's own (a pyenv shim before
# python3, PYTHON* settings) would make bare run other programs.
mkdir -p "$top_tmp/home"
clean=(env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME="$top_tmp/home"
       LANG=C.UTF-8 TERM=dumb RINGFENCE_HOME="$RINGFENCE_HOME")

# ── fixtures ──
# QUICK=1: a tenth of each tree, enough to show every mode works.
scale=$([ -n "$quick" ] && echo 10 || echo 1)
echo "bench: fixtures in $ws (kernel $(uname -r), uid $(id -u), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$ws" "$scale" $wanted <<'PY'
import os, sys
ws, scale, wanted = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
# Only the trees the wanted workloads use (the floors need the git tree).
# 20,000 files in 200 directories: the git tree.
for d in range(200 // scale):
    for f in range(100):
        write(f"{ws}/repo/src/d{d:03}/f{f:03}.txt", f"file {d} {f}\n" * 8)
# 1,000 Python modules in 20 packages.
for p in range(20 // scale if "compileall" in wanted else 0):
    write(f"{ws}/py/pkg{p}/__init__.py", "")
    for m in range(50):
        write(f"{ws}/py/pkg{p}/m{m}.py",
              "".join(f"def f{i}(x):\n    return [x * {i} for _ in range(3)]\n\n" for i in range(40)))
# 60 C files and a Makefile.
for c in range(60 // scale if "make" in wanted else 0):
    write(f"{ws}/cproj/c{c}.c",
          "#include <stdio.h>\n#include <string.h>\n" +
          "".join(f"int g{c}_{i}(int x) {{ char b[64]; snprintf(b, sizeof b, \"%d\", x * {i}); return (int)strlen(b); }}\n"
                  for i in range(60)))
write(f"{ws}/cproj/Makefile",
      "SRC := $(wildcard *.c)\nOBJ := $(SRC:.c=.o)\nall: $(OBJ)\n%.o: %.c\n\t$(CC) -O1 -c $< -o $@\n"
      "clean:\n\trm -f *.o\n")
# 300 tests that each write, read and remove a file.
write(f"{ws}/ut/test_files.py",
      "import os, tempfile, unittest\nclass T(unittest.TestCase):\n    pass\n" +
      "".join(f"def t{i}(self):\n    p = os.path.join(os.getcwd(), 'ut-{i}.tmp')\n"
              f"    open(p, 'w').write('x' * 4096)\n    self.assertEqual(len(open(p).read()), 4096)\n"
              f"    os.unlink(p)\nsetattr(T, 'test_{i}', t{i})\n" for i in range(300 // scale if "unittest" in wanted else 0)))
PY
# The commit's 20,000 loose objects start `git gc --auto` in the background
# (detached): it packs them and removes .git/objects/?? while the first
# workload walks the tree (tar: "File removed before we read it", exit 1).
# Packed here once, before any timing, and never again during the run: a
# repository at rest, as a clone is.
(cd "$ws/repo" && git init -q && git config gc.auto 0 && git add -A &&
    git -c user.name=b -c user.email=b@b commit -qm fixture && git gc -q && git status >/dev/null)

# The npm project: express's tree, its cache in the workspace (the sandbox
# has no network and does not see ~/.npm). The lock names each tarball
# (resolved), so `npm ci --offline` needs no registry document.
npm_fixture() {
    command -v npm >/dev/null || return 1
    mkdir -p "$ws/npm"
    echo '{"name":"rf-bench","version":"1.0.0","private":true,"dependencies":{"express":"4.21.2"}}' >"$ws/npm/package.json"
    (cd "$ws/npm" && timeout 120 "${clean[@]}" npm install --cache .cache --omit-lockfile-registry-resolved=false \
        --no-audit --no-fund --loglevel=error >/dev/null 2>&1) || return 1
    (cd "$ws/npm" && npm ci --offline --cache .cache --no-audit --no-fund --loglevel=error >/dev/null 2>&1)
}
if [[ " $wanted " == *" npm "* ]] && ! npm_fixture; then
    echo "bench: SKIP npm: no npm, or the registry did not answer to prime the cache"
    wanted=${wanted/npm/}
fi

script() { # WORKLOAD: the shell line the modes run, from the workspace
    case $1 in
    git-status) echo 'cd repo && for i in 1 2 3 4 5 6 7 8; do git status --porcelain >/dev/null; done' ;;
    tar) echo 'cd repo && for i in 1 2 3 4 5 6 7 8; do tar -cf /dev/null .; done' ;;
    grep) echo 'cd repo && for i in 1 2; do grep -r -l nomatch src; done; true' ;;
    compileall) echo 'python3 -m compileall -f -q py >/dev/null' ;;
    make) echo 'cd cproj && make -s clean && make -s -j2' ;;
    git-once) echo 'cd repo && git status --porcelain >/dev/null' ;;
    unittest) echo 'cd ut && python3 -m unittest -q test_files 2>/dev/null' ;;
    npm) echo 'cd npm && rm -rf node_modules && npm ci --offline --cache .cache --no-audit --no-fund --loglevel=error >/dev/null' ;;
    *) echo "bench: no workload $1" >&2; exit 2 ;;
    esac
}

# bubblewrap with the mounts ringfence's default plan makes: the system
# read-only, the workspace read-write at its path, fresh /proc, /dev, /tmp,
# every namespace.
bw_line() {
    local d args="--ro-bind /usr /usr --ro-bind /etc /etc"
    for d in /bin /sbin /lib /lib64; do
        if [ -L "$d" ]; then args="$args --symlink $(readlink "$d") $d"; elif [ -d "$d" ]; then args="$args --ro-bind $d $d"; fi
    done
    # /tmp first: the workspace lies below it here.
    echo "bwrap $args --proc /proc --dev /dev --tmpfs /tmp --bind $ws $ws --unshare-all --die-with-parent --chdir $ws"
}

# The overlay mode leaves a session per run: discarded by the wrapper
# itself, so inside the timed span (one `changes discard`).
cat >"$top_tmp/overlay" <<EOF
#!/bin/sh
"$rf" run --changes overlay --status-json "$top_tmp/ov.json" -- sh -c "\$1" || exit
exec "$rf" changes discard "\$(sed -n 's/.*"session":"\([^"]*\)".*/\1/p' "$top_tmp/ov.json")" >/dev/null
EOF
# The overlay's floor: the kernel's overlayfs alone over the workspace,
# with the options the session's mount uses (backend/native/mount.c), its
# upper beside the sessions' (same filesystem), made and removed per run.
# Unprivileged, as ringfence then does, in a user namespace with userxattr.
userns=""; xattr=",redirect_dir=off,metacopy=off"
[ "$(id -u)" = 0 ] || { userns="-Ur"; xattr=",userxattr"; }
cat >"$top_tmp/ovl-floor" <<EOF
#!/bin/sh
d=\$(mktemp -d "$top_tmp/floor.XXXXXX") && mkdir "\$d/u" "\$d/w" || exit
unshare $userns -m sh -c 'mount -t overlay overlay -o "lowerdir=$ws,upperdir=\$1/u,workdir=\$1/w,index=off$xattr" "$ws" && cd "$ws" && sh -c "\$2"' - "\$d" "\$1"
rc=\$?
chmod -R u+rwx "\$d" 2>/dev/null; rm -rf "\$d"
exit \$rc
EOF
chmod +x "$top_tmp/overlay" "$top_tmp/ovl-floor"

# A workload whose command fails in any mode is reported, never dropped:
# interleave.py names the mode and shows its stderr, the closing table has
# a FAILED row and the script exits 1.
failed=""
for w in $wanted; do
    line=$(script "$w")
    echo
    echo "== $w: $line (load $(cut -d' ' -f1-3 /proc/loadavg))"
    set -o pipefail
    "${clean[@]}" python3 "$top/bench/interleave.py" --runs "$rounds" --warmup "$warmup" --base bare --json "$top_tmp/$w.json" \
        bare="sh:$line" \
        ringfence="sh:$rf run -- sh -c '$line'" \
        no-landlock="sh:$rf run --landlock off -- sh -c '$line'" \
        overlay="sh:$top_tmp/overlay '$line'" \
        ovl-floor="sh:$top_tmp/ovl-floor '$line'" \
        allowlist="sh:$rf run --allow-domain example.invalid -- sh -c '$line'" \
        learn="sh:$rf learn -- sh -c '$line'" \
        bwrap="sh:$(bw_line) sh -c '$line'" 2>&1 | sed 's/^/   /' ||
        { failed="$failed $w"; echo "bench: FAILED: $w (above: the mode, its status and its stderr)" >&2; }
    set +o pipefail
    [ "$w" != make ] || (cd "$ws/cproj" && make -s clean)
    if [ "${STRACE:-}" = 1 ] && command -v strace >/dev/null; then
        for mode in bare ringfence overlay; do
            case $mode in
            bare) cmd=(sh -c "$line") ;;
            ringfence) cmd=("$rf" run -- sh -c "$line") ;;
            overlay) cmd=("$top_tmp/overlay" "$line") ;;
            esac
            "${clean[@]}" strace -c -f -o "$top_tmp/strace.$w.$mode" "${cmd[@]}" >/dev/null 2>&1 || true
        done
        python3 "$top/bench/strace-diff.py" "$top_tmp/strace.$w".{bare,ringfence,overlay} | sed 's/^/   /'
    fi
done

# The floors, in the same run: what each kernel feature alone adds to
# the calls these workloads make (bench/seccomp-cost.c, landlock-cost.c;
# a repository file, with a writable Landlock rule at the workspace as a
# sandbox has: Landlock walks from the file up to it on every open).
echo
echo "floors (kernel features alone, this run):"
if [ -x "$build/bench/seccomp-cost" ] && [ -x "$build/bench/landlock-cost" ]; then
    "$build/bench/seccomp-cost" 20 | grep -E '^getppid' | sed 's/^/   seccomp: /'
    "$build/bench/landlock-cost" 20 "$ws/repo/src/d000/f000.txt" "$ws" | grep -E '^open' | sed 's/^/   landlock: /'
else
    echo "   (not measured: $build/bench has no seccomp-cost or landlock-cost)"
fi

echo
echo "summary: ratio to bare, wall median (p10-p90 of the per-round ratios) / CPU of the whole tree;"
echo "$rounds rounds, uid $(id -u), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
python3 "$top/bench/workload-table.py" "$top_tmp" $wanted
if [ -n "$failed" ]; then
    echo "bench: FAILED workloads:$failed (see each one's section above)" >&2
    exit 1
fi
