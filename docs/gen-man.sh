#!/bin/sh
# Build the man page: the option list comes from the binary's own option
# table (the same one getopt_long and --help use), the rest from the .scd.in.
# usage: gen-man.sh RINGFENCE INPUT.scd.in OUTPUT.1
set -eu
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$1" --help-options-scdoc > "$tmp"
awk -v opts="$tmp" '/^@OPTIONS@$/ { while ((getline l < opts) > 0) print l; next } { print }' "$2" | scdoc > "$3"
