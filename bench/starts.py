#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Wall time of K sandboxed starts in a row, one line of percentiles.

  bench/starts.py LABEL K COMMAND...

Runs COMMAND K times one after another (posix_spawn, stdio on /dev/null,
as bench/interleave.py does) and prints LABEL with the p50, p90, p99 and
largest wall time in ms, the median CPU time (user + system, from wait4:
the tree below COMMAND that was waited for; for `run --via`, the client's
alone), and how many runs failed. bench/thousand.sh and
bench/serve-inflight.sh use it for a start's time on an idle machine and
while many sandboxes live. Timings are for notes, never for pass/fail.
"""
import math
import os
import sys
import time


def main():
    label, k, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    null = os.open(os.devnull, os.O_RDWR)
    fa = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    walls, cpus, failed = [], [], 0
    for _ in range(k):
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=fa)
        _, status, ru = os.wait4(pid, 0)
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((ru.ru_utime + ru.ru_stime) * 1000)
        failed += status != 0
    walls.sort()

    def pct(p):  # nearest rank
        return walls[max(0, math.ceil(p / 100 * len(walls)) - 1)]

    print(f"{label}: {k} starts, p50 {pct(50):.1f} ms, p90 {pct(90):.1f}, p99 {pct(99):.1f}, "
          f"max {walls[-1]:.1f}; CPU p50 {sorted(cpus)[len(cpus) // 2]:.1f} ms; {failed} failed "
          f"(load {os.getloadavg()[0]:.1f})")


main()
