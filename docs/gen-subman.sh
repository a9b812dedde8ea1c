#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build ringfence-SUB(1) from the binary itself: the summary from
# 'ringfence --help', synopsis and description from 'ringfence SUB --help',
# and the options from the option table ('--help-options-scdoc SUB', the
# same table getopt_long and --help use) for the subcommands that take it;
# doctor and fs print their own short option lists, taken from their --help.
# usage: gen-subman.sh RINGFENCE SUB OUTPUT.1
set -eu
rf=$1 sub=$2 out=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rf" --help | awk -v s="$sub" '$1 == s { $1 = ""; sub(/^ +/, ""); print; exit }' > "$tmp/summary"
"$rf" "$sub" --help > "$tmp/help"
case $sub in
    doctor|fs|profile|changes|audit|ps|top|stop|policy) table=0 ;;
    *) table=1; "$rf" --help-options-scdoc "$sub" > "$tmp/options" ;;
esac
{
    printf 'ringfence-%s(1)\n\n# NAME\n\nringfence-%s - %s\n\n' "$sub" "$sub" "$(cat "$tmp/summary")"
    # --help's text: before "Options:" the synopsis and description, after
    # the option list the notes (exit status, ...); kept as written.
    printf '# DESCRIPTION\n\n```\n'
    awk '/^Options:$/ { exit } { print }' "$tmp/help"
    printf '```\n\n# OPTIONS\n\n'
    if [ $table = 1 ]; then
        cat "$tmp/options"
    else
        printf '```\n'
        awk '/^Options:$/ { on = 1; next } on && /^$/ { exit } on { print }' "$tmp/help"
        printf '```\n\n'
    fi
    if awk '/^Options:$/ { on = 1; next } on && /^$/ { rest = 1; next } rest { found = 1 } END { exit !found }' "$tmp/help"; then
        printf '# NOTES\n\n```\n'
        awk '/^Options:$/ { on = 1; next } on && /^$/ { rest = 1; next } rest { print }' "$tmp/help"
        printf '```\n\n'
    fi
    printf '# SEE ALSO\n\n*ringfence*(1)\n'
} > "$tmp/page.scd"
scdoc < "$tmp/page.scd" > "$out"
