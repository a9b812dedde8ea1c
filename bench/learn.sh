#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What observing costs (docs/learn.md): the same command under `run`,
# `run --explain-denials` and `learn`, side by side in one hyperfine run:
#   start    /bin/true: the start-up cost (filter compile and install, the
#            supervisor thread)
#   files    20,000 absolute paths stat'ed (find | xargs stat), the
#            worst case: every call is a round trip to the supervisor
#   make     make -j2 of a small C project (24 files): a real build
# Prints mean times and the ratio to plain `run`.
#
#   bench/learn.sh [BUILD_DIR] [RUNS]     (default: build, 10)
#
# Timings are for notes and comparisons, never for pass/fail.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-10}
. "$(dirname "$0")/lib.sh"
command -v make >/dev/null && command -v cc >/dev/null || { echo "bench: needs make and cc" >&2; exit 1; }

# A small C project: 24 translation units, a header each includes.
mkdir -p "$ws/proj"
printf 'int shared(int);\n#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n' >"$ws/proj/common.h"
for i in $(seq 1 24); do
    printf '#include "common.h"\nint f%d(int x) { char b[64]; snprintf(b, sizeof b, "%%d", x); return (int)strlen(b) + %d; }\n' \
        "$i" "$i" >"$ws/proj/f$i.c"
done
printf '#include "common.h"\nint main(void) { return 0; }\n' >"$ws/proj/main.c"
printf 'SRC := $(wildcard *.c)\nOBJ := $(SRC:.c=.o)\nall: prog\nprog: $(OBJ)\n\t$(CC) -o $@ $^\nclean:\n\trm -f $(OBJ) prog\n' \
    >"$ws/proj/Makefile"
files='find /usr/share/doc /usr/share/man -maxdepth 4 -print0 2>/dev/null | head -z -n 20000 | xargs -0 -r stat -c %s >/dev/null 2>&1'
make_cmd='make -s -C proj clean >/dev/null; make -s -j2 -C proj'

cmds=()
for mode in run explain learn; do
    case $mode in
        run) pre="$rf run --" ;;
        explain) pre="$rf run --explain-denials --" ;;
        learn) pre="$rf learn --" ;;
    esac
    cmds+=(-n "start $mode" "$pre /bin/true"
           -n "files $mode" "$pre sh -c '$files'"
           -n "make $mode" "$pre sh -c '$make_cmd'")
done
echo "bench: $runs runs each, as uid $(id -u), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine --warmup 2 --runs "$runs" --export-json "$out" --output=null "${cmds[@]}" >/dev/null 2>&1
python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
print("%-14s %10s %10s %10s %10s" % ("command", "mean ms", "median ms", "stddev", "vs run"))
for name, x in r.items():
    base = r[name.split()[0] + " run"]
    print("%-14s %10.1f %10.1f %10.1f %9.2fx" % (name, x["mean"] * 1e3, x["median"] * 1e3,
                                                 x["stddev"] * 1e3, x["mean"] / base["mean"]))
PY
