# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by tests/hosts/checks/*.sh (not a test itself): tests/lib.sh's TAP
# helpers, plus reading a JSON document with python3 (the guest has no jq).
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"

# jget EXPR: evaluate the python expression EXPR with the JSON in $OUT bound
# to j; prints the value (lists one item a line), or "ERROR: ..." when $OUT
# is not JSON or the path is missing.
jget() {
    python3 -c 'import json, sys
try:
    j = json.loads(sys.stdin.read()); v = eval(sys.argv[1])
except Exception as e:
    print("ERROR:", repr(e)); sys.exit(0)
print("\n".join(map(str, v)) if isinstance(v, list) else json.dumps(v) if isinstance(v, (bool, type(None))) else v)' "$1" <<<"$OUT"
}

# is DESC GOT WANT
is() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1"; diag "got '${2:0:400}', want '$3'"; fi
}
