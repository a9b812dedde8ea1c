# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by examples/*/run: which ringfence to use, a scratch directory, and
# the claim checker. Each claim of an example's README is one `claim` line;
# the run exits 0 only when every claim held, 1 when one failed, 77 when
# something it needs is missing (skip).
#
#   RINGFENCE=path   the binary (default: the repo's build/ringfence, else
#                    `ringfence` on PATH)
#   KEEP=1           keep the scratch directory for a look afterwards
ex_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ex_top=$(dirname "$ex_here")

if [ -n "${RINGFENCE:-}" ]; then rf=$RINGFENCE
elif [ -x "$ex_top/build/ringfence" ]; then rf=$ex_top/build/ringfence
else rf=$(command -v ringfence) || { echo "SKIP: no ringfence: build it (meson setup build && ninja -C build), put it on PATH or set RINGFENCE"; exit 77; }
fi
case $rf in /*) ;; *) rf=$(cd "$(dirname "$rf")" && pwd)/$(basename "$rf") ;; esac
export RINGFENCE=$rf

ex_failed=0 ex_n=0
# claim TEXT CMD...: CMD succeeding means the claim held.
claim() {
    local what=$1; shift
    ex_n=$((ex_n + 1))
    if "$@"; then echo "ok $ex_n - $what"
    else echo "not ok $ex_n - $what"; ex_failed=1; fi
}
# skip REASON: exit 77 with the reason.
skip() { echo "SKIP: $*"; exit 77; }
# finish: the verdict and the exit status.
finish() {
    echo "1..$ex_n"
    [ $ex_failed = 0 ] && echo "# every claim held" || echo "# a claim failed"
    exit $ex_failed
}
# scratch: a world-traversable temporary directory, removed at exit.
scratch() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/rf-example.XXXXXX") || skip "cannot create a temporary directory"
    chmod 755 "$T"
    trap ex_exit EXIT
}
ex_atexit=()
# at_exit CMD: run CMD (a string) at exit, before the scratch goes.
at_exit() { ex_atexit+=("$1"); }
ex_exit() {
    local c
    for c in "${ex_atexit[@]}"; do eval "$c"; done
    if [ -n "${KEEP:-}" ]; then echo "# kept $T"; else rm -rf "$T"; fi
}
# has TEXT FILE: FILE contains TEXT (fixed string).
has() { grep -qF -- "$1" "$2"; }
