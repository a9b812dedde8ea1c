# SPDX-License-Identifier: LGPL-2.1-or-later
# Profiles (docs/profiles.md): listed and shown, applied with --profile
# (repeatable, later wins, flags win over profiles), a typo answered with
# did-you-mean, a bad profile file named with its line and setting, a
# user's profile replacing a shipped one, and the toolchain profiles doing
# their job: python finds a pyenv-style interpreter under a fake home.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
export XDG_CONFIG_HOME="$SCRATCH/xdg" # no profiles of whoever runs the test
unset RINGFENCE_PROFILE_PATH PYENV_ROOT PYENV_VERSION

expect_exit 0 "profile list" rf profile list
for p in node python rust go java git claude-code codex gemini-cli opencode chat; do
    contains "profile list names $p" "$OUT" "$p "
done
expect_exit 0 "profile show node" rf profile show node
contains "node's profile allows the npm registry" "$OUT" registry.npmjs.org
contains "node's profile exposes nvm's interpreters read-only" "$OUT" "~/.nvm"

expect_exit 125 "an unknown profile is refused" rf run --profile pyhton -- true
contains "with did-you-mean" "$ERR" "did you mean 'python'"
expect_exit 125 "profile show of an unknown one too" rf profile show nodee
contains "profile show: did-you-mean" "$ERR" "did you mean 'node'"
expect_exit 125 "a profile name with a slash is refused" rf run --profile ../x -- true

# A bad profile: the file, the line and the setting.
mkdir -p "$SCRATCH/prof"
printf '# broken: on purpose\nenv:\n  keep: [LANG]\nlimits:\n  pids: 10\n  nosuch: 1\n' >"$SCRATCH/prof/broken.yaml"
expect_exit 125 "a profile with an unknown setting is refused" \
    env RINGFENCE_PROFILE_PATH="$SCRATCH/prof" "$RINGFENCE" run --profile broken -- true
contains "its error names file, line and setting" "$ERR" "broken.yaml:6: unknown setting 'limits.nosuch'"

# Later wins; config --explain names where each value came from.
printf 'limits: { pids: 111, memory: 300M }\n' >"$SCRATCH/prof/a.yaml"
printf 'limits: { pids: 222 }\n' >"$SCRATCH/prof/b.yaml"
expect_exit 0 "two contradicting profiles" \
    env RINGFENCE_PROFILE_PATH="$SCRATCH/prof" "$RINGFENCE" config --explain --profile a --profile b
check "the later profile wins" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["policy"]["limits"]["pids"] == 222, d["policy"]["limits"]
s = d["sources"]
assert s["limits.pids"].endswith("/b.yaml"), s["limits.pids"]
assert s["limits.memory"].endswith("/a.yaml"), s["limits.memory"]' "$OUT"
expect_exit 0 "a flag wins over a profile" \
    env RINGFENCE_PROFILE_PATH="$SCRATCH/prof" "$RINGFENCE" config --explain --profile b --pids 7
check "--pids 7 over the profile's 222" python3 -c '
import json, sys
d = json.loads(sys.argv[1]); assert d["policy"]["limits"]["pids"] == 7' "$OUT"

# A user's profile replaces the shipped one of the same name.
mkdir -p "$XDG_CONFIG_HOME/ringfence/profiles"
printf '# chat: mine\nlimits: { pids: 33 }\n' >"$XDG_CONFIG_HOME/ringfence/profiles/chat.yaml"
expect_exit 0 "profile list with a user profile" rf profile list
contains "the user's summary is shown" "$OUT" "chat         mine"
expect_exit 0 "config with the user's chat" rf config --profile chat
check "the user's chat applies" python3 -c 'import json,sys; assert json.loads(sys.argv[1])["limits"]["pids"] == 33' "$OUT"
rm "$XDG_CONFIG_HOME/ringfence/profiles/chat.yaml"

# chat: the instance profile of before, now a file; its limits in the plan.
expect_exit 0 "plan --profile chat" rf plan --profile chat -- true
check "chat: 256 MiB, 200 processes, a quarter CPU" python3 -c '
import json, sys
l = json.loads(sys.argv[1])["limits"]
assert l["memory_bytes"] == 256 << 20 and l["pids"] == 200 and abs(l["cpu"] - 0.25) < 1e-9, l' "$OUT"
expect_exit 0 "plan --profile node --profile claude-code" rf plan --profile node --profile claude-code -- true
check "both profiles' names allowed, through the proxy" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
s = json.dumps(p)
assert p["network"] == "allowlist" and "registry.npmjs.org" in s and "api.anthropic.com" in s, s' "$OUT"

# python: a pyenv-style interpreter under a fake home is the one that runs.
fake="$SCRATCH/home"
mkdir -p "$fake/.pyenv/shims" "$fake/.pyenv/versions/3.99/bin"
printf '#!/bin/sh\nexec "%s/.pyenv/versions/3.99/bin/python3" "$@"\n' "$fake" >"$fake/.pyenv/shims/python3"
printf '#!/bin/sh\necho "pyenv python 3.99 $*"\n' >"$fake/.pyenv/versions/3.99/bin/python3"
chmod -R a+rX "$fake"
chmod 755 "$fake/.pyenv/shims/python3" "$fake/.pyenv/versions/3.99/bin/python3"
ppath="$fake/.pyenv/shims:/usr/bin:/bin"
expect_exit 0 "without a profile the pyenv interpreter is hidden" \
    env HOME="$fake" PATH="$ppath" "$RINGFENCE" run --keep-env PATH -- sh -c 'python3 -c "print(1)" 2>&1; true'
lacks "so python3 is not pyenv's" "$OUT" "pyenv python"
expect_exit 0 "--profile python" env HOME="$fake" PATH="$ppath" "$RINGFENCE" run --profile python -- sh -c 'python3 -V'
contains "finds pyenv's interpreter, read-only" "$OUT" "pyenv python 3.99 -V"
expect_exit 0 "the exposed interpreter is read-only" env HOME="$fake" PATH="$ppath" \
    "$RINGFENCE" run --profile python -- sh -c 'echo x >> "$0" 2>/dev/null && echo WROTE; true' "$fake/.pyenv/shims/python3"
lacks "no write into ~/.pyenv" "$OUT" WROTE

# The agent CLIs' --version under their profiles and `npm ci` from the
# registry under --profile node: tests/ecosystem/profiles.sh, once per
# suite, where the npm install is cached and the registry reachable.
