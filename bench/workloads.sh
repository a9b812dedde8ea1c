#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Real workloads, not `true`: what agents run in large trees, each bare,
# under ringfence (default; --changes overlay; the allowlist proxy on) and
# under bubblewrap with the same mounts, interleaved round by round
# (bench/interleave.py), with each one's ratio to bare and its spread.
#
#   bench/workloads.sh [BUILD_DIR] [ROUNDS] [WORKLOAD...]   (default: build, 8, all)
#
# Workloads (fixtures made here, in a scratch directory):
#   git-status   `git status` x8 in a 20,000-file repository
#   tar          `tar -cf /dev/null .` x8 of the same tree
#   compileall   `python3 -m compileall -f -q` of 1,000 modules
#   make         `make -j2` of 60 C files (from clean)
#   git-once     one `git status`: the start's cost included
#   unittest     `python3 -m unittest` of 300 tests that write and read files
#
# Each mode runs the workload's script in the workspace (every mode through
# one /bin/sh -c, bare included); the overlay mode discards its session
# after each run, inside its timed span. interleave.py prints each mode's
# median wall time with its 10th and 90th percentiles, the median CPU of the
# whole tree, and the ratio of medians to bare. Timings are for notes, never
# for pass/fail. STRACE=1 adds `strace -c -f` per mode (system calls by
# kind), once, after the timed rounds.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-8}
shift $(($# > 2 ? 2 : $#))
wanted=${*:-git-status tar compileall make git-once unittest}
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "bench: needs git" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "bench: needs bwrap (apt-get install bubblewrap)" >&2; exit 1; }

# ── fixtures ──
echo "bench: fixtures in $ws (kernel $(uname -r), uid $(id -u), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$ws" <<'PY'
import os, sys
ws = sys.argv[1]
def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
# 20,000 files in 200 directories: the git tree.
for d in range(200):
    for f in range(100):
        write(f"{ws}/repo/src/d{d:03}/f{f:03}.txt", f"file {d} {f}\n" * 8)
# 1,000 Python modules in 20 packages.
for p in range(20):
    write(f"{ws}/py/pkg{p}/__init__.py", "")
    for m in range(50):
        write(f"{ws}/py/pkg{p}/m{m}.py",
              "".join(f"def f{i}(x):\n    return [x * {i} for _ in range(3)]\n\n" for i in range(40)))
# 60 C files and a Makefile.
for c in range(60):
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
              f"    os.unlink(p)\nsetattr(T, 'test_{i}', t{i})\n" for i in range(300)))
PY
(cd "$ws/repo" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm fixture && git status >/dev/null)

script() { # WORKLOAD: the shell line the modes run, from the workspace
    case $1 in
    git-status) echo 'cd repo && for i in 1 2 3 4 5 6 7 8; do git status --porcelain >/dev/null; done' ;;
    tar) echo 'cd repo && for i in 1 2 3 4 5 6 7 8; do tar -cf /dev/null .; done' ;;
    compileall) echo 'python3 -m compileall -f -q py >/dev/null' ;;
    make) echo 'cd cproj && make -s clean && make -s -j2' ;;
    git-once) echo 'cd repo && git status --porcelain >/dev/null' ;;
    unittest) echo 'cd ut && python3 -m unittest -q test_files 2>/dev/null' ;;
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

# The overlay mode leaves a session per run: discarded between rounds by
# the wrapper itself (outside the timed span is not possible with
# interleave.py, so it is counted in that mode; one `changes discard`).
cat >"$top_tmp/overlay" <<EOF
#!/bin/sh
"$rf" run --changes overlay --status-json "$top_tmp/ov.json" -- sh -c "\$1" || exit
exec "$rf" changes discard "\$(sed -n 's/.*"session":"\([^"]*\)".*/\1/p' "$top_tmp/ov.json")" >/dev/null
EOF
chmod +x "$top_tmp/overlay"

for w in $wanted; do
    line=$(script "$w")
    echo
    echo "== $w: $line"
    python3 "$top/bench/interleave.py" --runs "$rounds" --warmup 1 --base bare --json "$top_tmp/$w.json" \
        bare="sh:$line" \
        ringfence="sh:$rf run -- sh -c '$line'" \
        overlay="sh:$top_tmp/overlay '$line'" \
        allowlist="sh:$rf run --allow-domain example.invalid -- sh -c '$line'" \
        bwrap="sh:$(bw_line) sh -c '$line'" | sed 's/^/   /'
    (cd "$ws/cproj" && make -s clean)
    if [ "${STRACE:-}" = 1 ] && command -v strace >/dev/null; then
        for mode in bare ringfence overlay; do
            case $mode in
            bare) cmd=(sh -c "$line") ;;
            ringfence) cmd=("$rf" run -- sh -c "$line") ;;
            overlay) cmd=("$top_tmp/overlay" "$line") ;;
            esac
            echo "   strace -c -f, $mode (the 8 most frequent calls):"
            strace -c -f -o "$top_tmp/strace" "${cmd[@]}" >/dev/null 2>&1 || true
            sed -n '3,10p' "$top_tmp/strace" | sed 's/^/     /'
        done
    fi
done
