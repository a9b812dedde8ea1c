#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped profiles against the real thing (TAP; docs/profiles.md):
# `npm ci` of a small real project from npm's registry under `--profile
# node` alone (its allowlist is what lets npm through: without the profile
# the same command fails, the control), then each agent CLI's --version
# under `--profile node --profile <its profile>`, from lib.sh's cached
# install. Once per suite, in the ecosystem layer, where the registry is
# reachable; skipped with the reason where it is not.
#   RINGFENCE=build/ringfence tests/ecosystem/profiles.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rf=${RINGFENCE:?set RINGFENCE to the ringfence binary}
case $rf in /*) ;; *) rf=$PWD/$rf ;; esac
N=12
eco_install || { eco_skip $N "$ECO_WHY"; exit 0; }
T=$(mktemp -d /tmp/rf-eco-profiles.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
skip_n() { local i; for ((i = 0; i < $1; i++)); do n=$((n + 1)); echo "ok $n - $2 # SKIP $3"; done; }

# ── npm ci from the registry under --profile node alone ──
mkdir -p "$T/proj" "$T/home"
cp "$here/profile-node/package.json" "$here/profile-node/package-lock.json" "$T/proj/"
if timeout 30 npm ping >/dev/null 2>&1; then
    rc=0
    (cd "$T/proj" && RINGFENCE_HOME=$T/home-control "$rf" run -- npm ci --no-audit --no-fund) \
        >"$T/control.out" 2>&1 || rc=$?
    check "control: without a profile, npm ci cannot reach the registry (exit $rc)" test "$rc" != 0
    check "and installed nothing" test ! -e "$T/proj/node_modules/is-number"
    rc=0
    (cd "$T/proj" && RINGFENCE_HOME=$T/home "$rf" run --profile node --status-json "$T/st.json" -- \
        sh -c 'npm ci --no-audit --no-fund && node -e "process.exit(require(\"is-number\")(5) ? 0 : 1)"') \
        >"$T/ci.out" 2>&1 || rc=$?
    check "npm ci under --profile node alone (exit $rc)" test "$rc" = 0
    [ "$rc" = 0 ] || sed 's/^/# /' "$T/ci.out" | tail -15
    check "the package is in the workspace" test -f "$T/proj/node_modules/is-number/package.json"
    check "the registry was reached through the allowlist (status record)" \
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["network"]
sys.exit(0 if any(a["host"] == "registry.npmjs.org" for a in d["allowed"]) else 1)' "$T/st.json"
    check "npm's cache went to the sandbox's home, not the workspace" test ! -e "$T/proj/.npm"
else
    skip_n 6 "npm ci under --profile node" "the npm registry cannot be reached (npm ping)"
fi

# ── the agent CLIs under their profiles ──
for pair in claude:claude-code codex:codex gemini:gemini-cli opencode:opencode; do
    bin=${pair%%:*} prof=${pair#*:}
    out=$(cd "$T/proj" && RINGFENCE_HOME=$T/home timeout 120 "$rf" run --profile node --profile "$prof" \
        --expose "$ECO" --timeout 60 -- "$ECO/node_modules/.bin/$bin" --version 2>&1)
    rc=$?
    if [ "$rc" = 0 ] && grep -Eq '[0-9]+\.[0-9]+\.[0-9]+' <<<"$out"; then
        ok "$prof: $bin --version under --profile node --profile $prof ($(grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' <<<"$out" | head -1))"
    else
        nok "$prof: $bin --version under --profile node --profile $prof"
        echo "# exit $rc: ${out:0:300}"
    fi
done
check "profile list names the shipped profiles" sh -c "'$rf' profile list | grep -q '^node' && '$rf' profile list | grep -q '^claude-code'"
check "profile show prints a profile's layer" sh -c "'$rf' profile show node | grep -q registry.npmjs.org"
echo "1..$n"
