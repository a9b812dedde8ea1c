# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared set-up of the bench/*.sh scripts: a scratch workspace, the instance
# root outside it (as by default: inside, the sandbox could write the filter
# cache, so ringfence would rightly not use it), hyperfine present.
#   . bench/lib.sh   (with $build set); then $rf, $ws, $out are ready.
rf="$build/ringfence"
command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
top_tmp=$(mktemp -d /tmp/rf-bench.XXXXXX)
ws="$top_tmp/ws"
mkdir "$ws"
chmod 755 "$top_tmp" "$ws"
export RINGFENCE_HOME="$top_tmp/rfhome"
out="$top_tmp/result.json"
trap 'rm -rf "$top_tmp"' EXIT
cd "$ws" || exit 1
