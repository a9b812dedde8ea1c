# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence learn and run --explain-denials (docs/learn.md), with a fake
# HOME: a pyenv-style interpreter, git needing ~/.gitconfig, a refused
# name; the layer learn writes makes the second run pass; --explain-denials
# names the hidden path of a failing `cat ~/.npmrc`; other backends refuse.
. "$(dirname "$0")/../lib.sh"
fake="$SCRATCH/home"
mkdir -p "$fake/.pyenv/shims" "$fake/.pyenv/versions/3.99/bin"
printf '#!/bin/sh\nexec "%s/.pyenv/versions/3.99/bin/python3" "$@"\n' "$fake" >"$fake/.pyenv/shims/python3"
printf '#!/bin/sh\necho "pyenv python 3.99"\n' >"$fake/.pyenv/versions/3.99/bin/python3"
printf '[alias]\n\tlg = log --format=LOGGED:%%s\n[user]\n\tname = Fake\n\temail = fake@example.test\n' >"$fake/.gitconfig"
echo "//registry.example.test/:_authToken=secret" >"$fake/.npmrc"
chmod -R a+rX "$fake"
chmod 755 "$fake/.pyenv/shims/python3" "$fake/.pyenv/versions/3.99/bin/python3"
export HOME="$fake"
unset PYENV_ROOT PYENV_VERSION
ppath="$fake/.pyenv/shims:/usr/bin:/bin"
layer="$SCRATCH/learned.yaml"

# ── pyenv: learned, written, and the second run finds the interpreter ──
expect_exit 0 "learn a pyenv-style interpreter" \
    env PATH="$ppath" "$RINGFENCE" learn --write "$layer" --keep-env PATH -- sh -c 'python3; true'
lacks "while learning, the policy is unchanged: pyenv's python stays hidden" "$OUT" "pyenv python"
contains "the report names ~/.pyenv" "$ERR" "~/.pyenv (ro)"
contains "with the flag that would expose it" "$ERR" "--expose ~/.pyenv"
check "the layer is written" test -s "$layer"
contains "the layer exposes ~/.pyenv read-only" "$(cat "$layer")" 'source: "~/.pyenv", mode: ro'

contains "each rule says why" "$(cat "$layer")" "# looked for, hidden inside"
expect_exit 0 "the written layer is a valid --config" rf config --config "$layer"
expect_exit 0 "the second run, with the layer" \
    env PATH="$ppath" "$RINGFENCE" run --config "$layer" --keep-env PATH -- sh -c 'python3'
contains "finds pyenv's interpreter" "$OUT" "pyenv python 3.99"

# ── a path with a '$' in it is written so that the loader reads it back ──
mkdir -p "$fake/we\$ird"
chmod 755 "$fake/we\$ird"
expect_exit 0 "learn a directory named with a \$" rf learn --write "$layer" -- sh -c 'ls "$0" >/dev/null 2>&1; true' "$fake/we\$ird"
expect_exit 0 "the layer exposes it" rf run --config "$layer" -- ls -d "$fake/we\$ird"

# ── git: an alias from ~/.gitconfig, which lives in the caller's home ──
if command -v git >/dev/null 2>&1; then
    git -C "$WS" init -q && git -C "$WS" -c user.name=t -c user.email=t@t commit -q --allow-empty -m first
    expect_exit 1 "without ~/.gitconfig, 'git lg' fails inside" rf run -- git lg
    expect_exit 1 "learn 'git lg'" rf learn --write "$layer" -- git lg
    contains "the report names ~/.gitconfig, looked for in the sandbox's own home" "$ERR" "~/.gitconfig (ro): looked for in the sandbox's own home"
    expect_exit 0 "the second run, with the layer" rf run --config "$layer" -- git lg
    contains "git read the alias" "$OUT" "LOGGED:first"
else
    skip "learn git's ~/.gitconfig" "git is not installed"
fi

# ── --explain-denials: the hidden path of a failing cat ~/.npmrc ──
expect_exit 1 "cat ~/.npmrc fails inside" rf run -- sh -c 'cat ~/.npmrc'
lacks "without --explain-denials, no report (off by default)" "$ERR" "denials:"
expect_exit 1 "the same with --explain-denials" rf run --explain-denials -- sh -c 'cat ~/.npmrc'
contains "names the hidden path" "$ERR" "~/.npmrc"
contains "with the flag that would expose it" "$ERR" "--expose ~/.npmrc:"
contains "and flags it: it may hold a token" "$ERR" "flagged: may hold a registry token"
expect_exit 0 "the exit status is the command's" rf run --explain-denials -- sh -c "ls $fake/.pyenv >/dev/null 2>&1; true"
contains "a hidden directory is named too" "$ERR" "~/.pyenv"
mkdir -p "$fake/many"
for i in $(seq 1 15); do mkdir -p "$fake/many/d$i"; done
chmod -R a+rX "$fake/many"
# Outside HOME's own dot-directories, each top-level directory is one rule.
expect_exit 0 "many hidden places" rf run --explain-denials -- sh -c "for i in \$(seq 1 15); do ls $fake/d\$i $fake/many/d\$i >/dev/null 2>&1; done; for d in $fake/many/*; do :; done; true"
n=$(printf '%s\n' "$ERR" | grep -c '^  ')
check "at most 10 lines of denials (got $n)" test "$n" -le 11

# ── a refused name: the proxy's report ──
if command -v curl >/dev/null 2>&1; then
    expect_exit 0 "learn a refused name" rf learn --write "$layer" --allow-domain allowed.example.test -- \
        sh -c 'curl -s -m 5 http://refused.example.test/ >/dev/null 2>&1; true'
    contains "the report names the refused name" "$ERR" "allow_domain refused.example.test"
    contains "the layer allows it, with why" "$(cat "$layer")" "- \"refused.example.test\""
else
    skip "learn a refused name" "curl is not installed"
fi

# ── the narrowest rule: never /home, nor a directory holding the workspace ──
mkdir -p "$SCRATCH/hostdata"
echo data >"$SCRATCH/hostdata/config.txt"
chmod -R a+rX "$SCRATCH/hostdata"
expect_exit 0 "learn: ls /home, and a file beside the workspace" rf learn --write "$layer" -- \
    sh -c 'ls /home >/dev/null 2>&1; cat "$0" >/dev/null 2>&1; true' "$SCRATCH/hostdata/config.txt"
rules=$(grep -v '^ *#' "$layer")
lacks "/home is not written" "$rules" 'source: "/home"'
contains "/home is flagged, with why" "$(cat "$layer")" "#   /home: too broad: a top-level directory as a whole"
contains "the file's own directory is written" "$rules" "source: \"$SCRATCH/hostdata\", mode: ro"
lacks "the directory holding the workspace is not written" "$rules" "source: \"$SCRATCH\","
contains "it is flagged, with why" "$(cat "$layer")" "#   $SCRATCH: too broad: it holds"
contains "the report says so too" "$ERR" "FLAGGED, not suggested: $SCRATCH (ro): too broad: it holds"
expect_exit 0 "the narrower rule is enough" rf run --config "$layer" -- cat "$SCRATCH/hostdata/config.txt"
contains "... the file is read" "$OUT" data
if is_root && id rftest >/dev/null 2>&1; then
    mkdir -p "$SCRATCH/theirs/d"
    echo x >"$SCRATCH/theirs/d/f"
    chown -R rftest "$SCRATCH/theirs"
    chmod -R a+rX "$SCRATCH/theirs"
    expect_exit 0 "learn: a file another user owns" rf learn --write "$layer" -- \
        sh -c 'cat "$0" >/dev/null 2>&1; true' "$SCRATCH/theirs/d/f"
    lacks "it is not written" "$(grep -v '^ *#' "$layer")" "theirs"
    contains "it is flagged: another user's" "$(cat "$layer")" "belongs to another user"
else
    skip "learn: a file another user owns" "needs root and the user rftest to make one"
fi

# ── bad input and other backends ──
expect_exit 125 "--write into a missing directory fails" rf learn --write "$SCRATCH/no/such/dir/f.yaml" -- true
contains "and says so" "$ERR" "cannot write"
check "no temporary file left behind" test -z "$(ls -A "$SCRATCH" | grep rf- || true)"
expect_exit 125 "the landlock backend refuses learn" rf learn --backend landlock --accept-weaker -- true
contains "with a clear message" "$ERR" "cannot observe the command"
expect_exit 125 "--write is learn's option" rf run --write "$layer" -- true
expect_exit 125 "a warm pool's sandbox cannot be observed" rf run --via "$SCRATCH/no.sock" --explain-denials -- true
contains "and says so" "$ERR" "cannot be observed"
expect_exit 0 "learn --help" rf learn --help
contains "learn --help lists run's options" "$OUT" "--expose"
skip "learn a real npm install from the registry" \
    "needs the npm registry; the test hosts have no network (tests/ecosystem covers registry installs)"
