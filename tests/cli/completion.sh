#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Shell completions come from the option table (`ringfence --completion
# SHELL`, installed by meson): they parse in each shell, complete what the
# commands accept, and list every option --help lists (no drift).
. "$(dirname "$0")/../lib.sh"

for sh in bash zsh fish; do
    expect_exit 0 "--completion $sh" rf --completion "$sh"
    printf '%s\n' "$OUT" >"$SCRATCH/$sh"
done
expect_exit 125 "--completion of an unknown shell is refused" rf --completion tcsh
contains "…naming the choices" "$ERR" "expected bash, zsh or fish"

check "the bash script parses" bash -n "$SCRATCH/bash"
complete_bash() { # WORD... : what bash offers for the last word
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ringfence; printf "%s\n" "${COMPREPLY[@]}"' \
        sh "$SCRATCH/bash" "$@"
}
contains "bash: subcommands" "$(complete_bash ringfence ex)" "export"
contains "bash: run's options" "$(complete_bash ringfence run --work)" "--workspace"
contains "bash: fs verbs" "$(complete_bash ringfence fs ap)" "append"
contains "bash: export kinds" "$(complete_bash ringfence export o)" "oci"
contains "bash: plan's own --format" "$(complete_bash ringfence plan --for)" "--format"
lacks "bash: but not for run (getopt refuses it there)" "$(complete_bash ringfence run --for)" "--format"
contains "bash: learn has run's options" "$(complete_bash ringfence learn --expo)" "--expose"
contains "bash: and its own --write" "$(complete_bash ringfence learn --wri)" "--write"
contains "bash: profile verbs" "$(complete_bash ringfence profile s)" "show"
rfdir=$(dirname "$RINGFENCE")
contains "bash: profile names after --profile" \
    "$(PATH="$rfdir:$PATH" complete_bash ringfence run --profile pyt)" "python"
mkdir -p "$SCRATCH/dir-x"
contains "bash: a value of --workspace completes as a path" \
    "$(cd "$SCRATCH" && complete_bash ringfence run --workspace dir-)" "dir-x"

# No drift: every option run --help shows is in run's completion.
missing=""
for opt in $(rf run --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    [ "$opt" = --help ] && continue
    complete_bash ringfence run "$opt" | grep -qx -- "$opt" || missing="$missing $opt"
done
check "bash: every option of 'run --help' completes${missing:+ (missing:$missing)}" test -z "$missing"

if command -v zsh >/dev/null; then
    check "the zsh script parses" zsh -n "$SCRATCH/zsh"
    contains "zsh: run's options with their help" "$(cat "$SCRATCH/zsh")" "'*--workspace[the directory"
else
    skip "the zsh script parses" "zsh is not installed"
fi
if command -v fish >/dev/null; then
    check "the fish script parses" fish -n "$SCRATCH/fish"
    contains "fish: run's options" "$(fish -c "source $SCRATCH/fish; complete -C 'ringfence run --work'")" \
        "--workspace"
    contains "fish: subcommands with their summary" "$(fish -c "source $SCRATCH/fish; complete -C 'ringfence ex'")" \
        "guard"
else
    skip "the fish script parses" "fish is not installed"
fi
