#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A workspace that would put the user's credentials in reach is refused
# (issue 13 item 5, seed 002): the home directory, a parent of it, /, /etc,
# /usr, /root. The refusal runs nothing; --allow-sensitive-workspace is the
# explicit way through; a workspace config cannot grant it to itself.
. "$(dirname "$0")/common.bash"

fake_home="$SCRATCH/home"
mkdir -p "$fake_home/project" "$fake_home/.aws"
echo "aws_secret_access_key=$TOKEN" >"$fake_home/.aws/credentials"
as_home() { HOME="$fake_home" "$@"; }

# The attack: `cd ~ && ringfence run` with a command that reads a token.
cd "$fake_home" || exit 1
expect_exit 125 "run in the home directory is refused" as_home rf run -- cat .aws/credentials
lacks "…and the command did not run" "$OUT" "$TOKEN"
contains "…the error names the path and why" "$ERR" "$fake_home is your home directory"
contains "…and the way out" "$ERR" "--workspace DIR"
expect_exit 125 "exec in the home directory is refused" as_home rf exec -- 'cat .aws/credentials'
lacks "…nothing ran" "$OUT" "$TOKEN"
expect_exit 125 "plan in the home directory says it would refuse" as_home rf plan -- true
expect_exit 125 "--workspace ~ is refused" as_home rf run --workspace "$fake_home" -- true
contains "…naming the setting" "$ERR" "workspace"
expect_exit 125 "a parent of the home directory is refused" as_home rf run --workspace "$SCRATCH" -- true
contains "…as a parent" "$ERR" "a parent of your home directory"
for dir in / /etc /usr; do
    expect_exit 125 "workspace $dir is refused" rf run --workspace "$dir" -- true
done
(cd / && expect_exit 125 "run with / as the current directory is refused" rf run -- true)
expect_exit 125 "a symlink to the home directory is refused too" \
    sh -c 'ln -s "$1" "$2" && HOME="$1" "$3" run --workspace "$2" -- true' sh "$fake_home" "$SCRATCH/link" "$RINGFENCE"

# Controls: a project inside the home is fine, and so is the explicit flag.
cd "$fake_home/project" || exit 1
expect_exit 0 "control: a project directory inside the home works" as_home rf run -- true
cd "$fake_home" || exit 1
expect_exit 0 "--allow-sensitive-workspace accepts the home" as_home rf run --allow-sensitive-workspace -- \
    cat .aws/credentials
contains "…and then it is in reach, as asked" "$OUT" "$TOKEN"

# A workspace's own .ringfence.json cannot allow itself.
echo '{"allow_sensitive_workspace": true}' >"$fake_home/.ringfence.json"
expect_exit 125 "the workspace config cannot grant allow_sensitive_workspace" as_home rf run -- true
rm -f "$fake_home/.ringfence.json"
echo '{"allow_sensitive_workspace": true}' >"$SCRATCH/allow.json"
expect_exit 0 "a config file given by the user can" as_home rf run --config "$SCRATCH/allow.json" -- true
