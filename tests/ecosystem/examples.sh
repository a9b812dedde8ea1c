#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every examples/*/run (the seeds' scenarios, examples/README.md), as TAP:
# one test per example, exit 0 ok, 77 SKIP with the reason it printed,
# anything else not ok with its failing claims. As root, the examples run
# again as the unprivileged test user ($RF_TEST_USER, default rftest) from
# a world-readable copy (but those that need the npm install: once is enough
# for the most expensive ones). Each prints its own claims; they are passed on as
# comments, the failing ones always.
#   RINGFENCE=build/ringfence tests/ecosystem/examples.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rf=${RINGFENCE:?set RINGFENCE to the ringfence binary}
case $rf in /*) ;; *) rf=$PWD/$rf ;; esac
src=${RF_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
[ -d "$src/examples" ] || { echo "ok 1 - examples # SKIP no examples/ in $src"; echo "1..1"; exit 0; }

# A copy anyone can read: the binary, the library beside it (for the Python
# harness), the examples and the binding.
S=$(mktemp -d /tmp/rf-examples.XXXXXX)
trap 'rm -rf "$S"' EXIT
chmod 755 "$S"
cp "$rf" "$S/ringfence"
for lib in "$(dirname "$rf")/libringfence.so.0" "$src/build/libringfence.so.0"; do
    [ -f "$lib" ] && cp -L "$lib" "$S/libringfence.so.0" && break
done
cp -r "$src/examples" "$src/python" "$src/node" "$S/" 2>/dev/null
mkdir -p "$S/tests" && cp -r "$here" "$S/tests/ecosystem"
chmod -R a+rX "$S"

n=0
user=${RF_TEST_USER:-rftest}
runs=("")
[ "$(id -u)" = 0 ] && id "$user" >/dev/null 2>&1 && runs+=("$user")
for as in "${runs[@]}"; do
    for dir in "$S"/examples/*/; do
        name=$(basename "$dir")
        [ -x "$dir/run" ] || continue
        # The npm-based ones (they read lib.sh's install) once, as the caller.
        [ -n "$as" ] && grep -q eco_install "$dir/run" && continue
        t0=$(eco_now)
        if [ -n "$as" ]; then
            out=$(cd /tmp && runuser -u "$as" -- env RINGFENCE="$S/ringfence" HOME=/tmp "$dir/run" 2>&1)
        else
            out=$(cd /tmp && RINGFENCE="$S/ringfence" "$dir/run" 2>&1)
        fi
        rc=$?
        took=$(eco_since "$t0")
        label="examples/$name${as:+ as $as}"
        n=$((n + 1))
        claims=$(grep -c '^ok ' <<<"$out")
        case $rc in
            0) echo "ok $n - $label: every claim held ($claims claims, $took s)" ;;
            77) echo "ok $n - $label # SKIP $(grep -m1 '^SKIP: ' <<<"$out" | sed 's/^SKIP: //')" ;;
            *) echo "not ok $n - $label: exit $rc ($took s)"
               grep -E '^not ok' <<<"$out" | sed 's/^/#   /'
               grep -vE '^(ok|not ok|1\.\.)' <<<"$out" | tail -15 | sed 's/^/#   | /' ;;
        esac
        [ "${VERBOSE:-}" ] && sed 's/^/#   /' <<<"$out"
        echo "# timing: $label $took s"
    done
done
echo "1..$n"
