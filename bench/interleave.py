#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Start-up timings that survive a busy machine.

hyperfine runs one command's batch after another's, so a burst of load from
another process lands on one command and skews the ratio. This runs the
commands round-robin, in a new random order each round, and reports for each
the median and the 10th/90th percentiles of wall time, the median CPU time
of the whole tree (user + system, from wait4), and ratios of medians against
a base command. Ratios of medians taken in the same rounds are what the
notes and docs/performance.md quote.

  bench/interleave.py [--runs N] [--warmup N] [--base NAME] [--json FILE]
                      NAME=COMMAND ...

COMMAND is split on blanks (no shell); "sh:LINE" runs LINE with /bin/sh -c
(the same shell start for every command that uses it). CPU time comes from
wait4. A tool that exits before its children (bubblewrap's parent returns as
soon as its pid 1 reports the status, and never reaps it) would look cheaper
than it is, so this process is a child subreaper: such orphans come back to
it, are reaped after the command and their CPU is added to the command's.
The wall time still ends when the command itself has ended. Timings are for
notes, never for pass/fail.
"""
import argparse
import ctypes
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Orphaned descendants of the commands are re-parented here (see above)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("interleave: prctl(PR_SET_CHILD_SUBREAPER): %s" % os.strerror(ctypes.get_errno()))


def reap_orphans():
    """CPU seconds of the descendants the command left behind, once they end."""
    cpu = 0.0
    while True:
        try:
            _, _, ru = os.wait4(-1, 0)
        except ChildProcessError:
            return cpu
        cpu += ru.ru_utime + ru.ru_stime


def run_once(name, argv):
    """Wall and CPU seconds of one run (the whole tree); stdin and stdout
    /dev/null, stderr kept aside: a failing command ends the benchmark with
    its name, status and the end of what it said, never a silent gap."""
    null = os.open(os.devnull, os.O_RDWR)
    err = tempfile.TemporaryFile()
    try:
        fa = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
              (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=fa)
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        orphans = reap_orphans()
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            # What a sandboxed command wrote, shown with its controls escaped.
            said = "".join(c if c.isprintable() or c == "\n" else "\\x%02x" % ord(c)
                           for c in err.read()[-2000:].decode(errors="replace").rstrip("\n"))
            sys.exit("interleave: FAILED: %s exited with status %d: %s\n%s" % (
                name, os.waitstatus_to_exitcode(status), " ".join(argv),
                "\n".join("  stderr: " + line for line in said.split("\n")) if said else "  (nothing on stderr)"))
    finally:
        os.close(null)
        err.close()
    return wall, ru.ru_utime + ru.ru_stime + orphans


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--base", help="the command the ratios are against (default: the first)")
    ap.add_argument("--json", help="write every sample to this file")
    ap.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    cmds = {}
    for c in a.commands:
        name, sep, line = c.partition("=")
        if not sep or not line.split():
            ap.error("%r is not NAME=COMMAND" % c)
        argv = ["/bin/sh", "-c", line[3:]] if line.startswith("sh:") else line.split()
        if not argv[0].startswith("/"):
            argv[0] = next((os.path.join(d, argv[0]) for d in os.environ["PATH"].split(":")
                            if os.access(os.path.join(d, argv[0]), os.X_OK)), argv[0])
        cmds[name] = argv
    base = a.base or next(iter(cmds))
    if base not in cmds:
        ap.error("--base %s is not one of the commands" % base)
    names = list(cmds)
    become_subreaper()
    for _ in range(a.warmup):
        for n in names:
            run_once(n, cmds[n])
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for _ in range(a.runs):
        random.shuffle(names)
        for n in names:
            w, c = run_once(n, cmds[n])
            wall[n].append(w)
            cpu[n].append(c)
    load = os.getloadavg()[0]
    print("interleave: %d rounds, uid %d, kernel %s, load %.2f at the end" % (a.runs, os.getuid(), os.uname().release, load))
    print("%-16s %9s %9s %9s %9s %9s %9s %13s" % ("command", "median", "p10", "p90", "cpu", "vs " + base[:6], "cpu vs",
                                                   "round p10-p90"))
    bw, bc = statistics.median(wall[base]), statistics.median(cpu[base])
    for n in cmds:
        mw, mc = statistics.median(wall[n]), statistics.median(cpu[n])
        # The spread of the ratio taken within each round (both commands
        # ran within moments of each other): what the load did to it.
        r = [x / b for x, b in zip(wall[n], wall[base])]
        print("%-16s %7.3fms %7.3fms %7.3fms %7.3fms %8.2fx %8.2fx %6.2f-%.2fx" % (
            n, mw * 1e3, percentile(wall[n], 0.1) * 1e3, percentile(wall[n], 0.9) * 1e3, mc * 1e3,
            mw / bw, mc / bc if bc else float("nan"), percentile(r, 0.1), percentile(r, 0.9)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"wall": wall, "cpu": cpu, "load": load}, f)


if __name__ == "__main__":
    main()
