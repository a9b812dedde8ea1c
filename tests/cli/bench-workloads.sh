# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/workloads.sh works: its QUICK mode, one round of two workloads,
# prints a table with a ratio for every mode (docs/performance.md). Only
# that it runs and reports: timings never decide a test.
. "$(dirname "$0")/../lib.sh"
src=${RF_SOURCE_DIR:-}
if [ ! -r "$src/bench/workloads.sh" ]; then
    skip "bench/workloads.sh runs" "RF_SOURCE_DIR is not readable here"
    exit 0
fi
# Once per user, with the normal build: under ASan the timings mean
# nothing and the script's work would only be repeated.
if ldd "$RINGFENCE" 2>/dev/null | grep -q libasan; then
    skip "bench/workloads.sh runs" "a sanitizer build: the normal build's run covers it"
    exit 0
fi
# A failing mode is reported, not dropped (a tar workload once vanished
# from the table: git's background gc removed objects under it). Cheap:
# `false` as one of interleave.py's commands, and a table with no samples.
expect_exit 1 "interleave.py exits 1 when one command fails" \
    python3 "$src/bench/interleave.py" --runs 1 --warmup 0 --base ok ok=true broken="sh:echo why-it-failed >&2; exit 3"
contains "it names the failing command" "$ERR" "FAILED: broken exited with status 3"
contains "it shows the failing command's stderr" "$ERR" "stderr: why-it-failed"
none=$SCRATCH/no-samples; mkdir -p "$none"
expect_exit 0 "workload-table.py runs with a workload that has no samples" python3 "$src/bench/workload-table.py" "$none" tar
rmdir "$none"
contains "that workload has a FAILED row" "$OUT" "| tar | FAILED"
for tool in git bwrap python3 unshare hyperfine; do
    command -v "$tool" >/dev/null || { skip "bench/workloads.sh runs" "no $tool"; exit 0; }
done
expect_exit 0 "QUICK=1 bench/workloads.sh runs every mode and exits 0" \
    env QUICK=1 bash "$src/bench/workloads.sh" "$(dirname "$RINGFENCE")" 1 git-once make
contains "it prints the closing table's header" "$OUT" "| workload | bare | ringfence | no-landlock | overlay | ovl-floor | allowlist | learn | bwrap |"
for w in git-once make; do
    row=$(grep "^| $w |" <<<"$OUT")
    check "the $w row has a ratio for each of the 7 modes" test "$(grep -o '×' <<<"$row" | wc -l)" -eq 14
done
