#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""System calls by kind where modes differ: reads the `strace -c -f -o`
summaries of bare and of each sandboxed mode (the sandbox's own calls
included) and prints the calls whose count differs from bare's by more than
5% and 20 calls, most different first.

  bench/strace-diff.py BARE.strace OTHER.strace...   (mode = the last suffix)
"""
import os
import sys


def counts(path):
    c = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return c
    for line in lines:
        f = line.split()
        # "% time seconds usecs/call calls [errors] syscall"
        if len(f) >= 5 and f[0][0].isdigit() and f[3].isdigit() and f[-1] != "total":
            c[f[-1]] = int(f[3])
    return c


def main():
    bare = counts(sys.argv[1])
    others = [(os.path.splitext(p)[1][1:], counts(p)) for p in sys.argv[2:]]
    names = sorted(set(bare).union(*[set(o) for _, o in others]))
    rows = []
    for n in names:
        b = bare.get(n, 0)
        diffs = [o.get(n, 0) - b for _, o in others]
        if any(abs(x) > max(20, 0.05 * b) for x in diffs):
            rows.append((max(abs(x) for x in diffs), n, b, [o.get(n, 0) for _, o in others]))
    print("strace -c -f: calls whose count differs from bare's (>5% and >20)")
    print("%-18s %9s" % ("syscall", "bare") + "".join(" %11s" % m for m, _ in others))
    for _, n, b, row in sorted(rows, reverse=True)[:12]:
        print("%-18s %9d" % (n, b) + "".join(" %11d" % x for x in row))
    if not rows:
        print("(none)")


if __name__ == "__main__":
    main()
