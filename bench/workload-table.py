#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The closing table of bench/workloads.sh, in Markdown for
docs/performance.md: per workload, bare's median wall time, then each mode's
ratio of medians to bare, the 10th-90th percentiles of the ratios taken
within each round (their spread), and the ratio of the whole tree's CPU. A workload without samples (a mode's command
failed) gets a FAILED row.

  bench/workload-table.py DIR WORKLOAD...   (reads DIR/WORKLOAD.json from interleave.py)
"""
import json
import os
import statistics
import sys


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def cell(wall, cpu, mode):
    if mode not in wall:
        return "-"
    r = [x / b for x, b in zip(wall[mode], wall["bare"])]
    mw = statistics.median(wall[mode]) / statistics.median(wall["bare"])
    bc = statistics.median(cpu["bare"])
    mc = statistics.median(cpu[mode]) / bc if bc else float("nan")
    return "%.2f× (%.2f–%.2f) / %.2f×" % (mw, pct(r, 0.1), pct(r, 0.9), mc)


def main():
    d, works = sys.argv[1], sys.argv[2:]
    modes = ["ringfence", "no-landlock", "overlay", "ovl-floor", "allowlist", "learn", "bwrap"]
    print("| workload | bare | " + " | ".join(modes) + " |")
    print("| --- | --- |" + " --- |" * len(modes))
    for w in works:
        path = os.path.join(d, w + ".json")
        if not os.path.exists(path):
            # interleave.py writes no samples when a mode's command failed:
            # the row says so rather than vanish.
            print("| %s | FAILED (a mode's command exited non-zero: see the run's output) |%s" % (w, " |" * len(modes)))
            continue
        data = json.load(open(path))
        wall, cpu = data["wall"], data["cpu"]
        bare = "%.0f ms" % (statistics.median(wall["bare"]) * 1e3)
        print("| %s | %s | %s |" % (w, bare, " | ".join(cell(wall, cpu, m) for m in modes)))


if __name__ == "__main__":
    main()
