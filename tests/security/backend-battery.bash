# SPDX-License-Identifier: LGPL-2.1-or-later
# The security battery against another backend (not a test itself: the
# runner only picks up *.sh). battery BACKEND [SCRIPT...] runs every boundary script of
# this directory with RF_TEST_BACKEND=BACKEND and passes a script when each
# of its failures is listed in backend-BACKEND.expected AND the entry's
# `cannot` text is in the plan's cannot list for this caller; any other
# failure fails it. One TAP line per script.
#
# backend-NAME.expected, tab-separated:
#   SCRIPT  TEST (a prefix of its description, * for all)  CANNOT (a part of the entry)  WHO (any|root|user)

# The boundary scripts; left out, with why:
#   landlock-backend, container: another backend's own battery
#   oci-export: the export, not a run;  pool: the warm pool is native's only
#   network-allowlist: only for backends that reach the proxy (bwrap): `battery bwrap network-allowlist`
#   backend-*: the batteries themselves
#   deny-paths: runs every backend itself
BATTERY_SCRIPTS=(devices_proc environment filesystem instances layers lifecycle limits network_ipc
                 privileges processes protected-absent self-protection sensitive-workspace stdio)

battery_expected() { # SCRIPT DESC WHO → the cannot part, or nothing
    local script=$1 desc=$2 who=$3 s t c w
    while IFS=$'\t' read -r s t c w; do
        [[ -z $s || $s == \#* ]] && continue
        [ "$s" = "$script" ] || continue
        [ "$w" = any ] || [ "$w" = "$who" ] || continue
        [[ $t == '*' || $desc == "$t"* ]] && { printf '%s' "$c"; return 0; }
    done <"$BATTERY_EXPECTED"
    return 1
}

battery() {
    local backend=$1 here
    shift
    local scripts=("${BATTERY_SCRIPTS[@]}" "$@")
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    BATTERY_EXPECTED="$here/backend-$backend.expected"
    hand_workspace "$backend"
    if ! rf plan --backend "$backend" -- true >"$SCRATCH/plan.json" 2>"$SCRATCH/err"; then
        skip "security battery against --backend $backend" "not usable here: $(head -1 "$SCRATCH/err")"
        return 0
    fi
    local cannot who script
    cannot=$(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["cannot"]))' \
        "$SCRATCH/plan.json")
    who=$(is_root && echo root || echo user)
    for script in "${scripts[@]}"; do
        local out line desc part n_ok=0 n_exp=0 bad=() last=
        out=$(RF_TEST_BACKEND=$backend bash "$here/$script.sh" 2>&1 </dev/null) || true
        while IFS= read -r line; do
            case $line in
                "ok "*) n_ok=$((n_ok + 1)) ;;
                "not ok "*)
                    desc=${line#not ok }; desc=${desc#* - }
                    if part=$(battery_expected "$script" "$desc" "$who") && [[ $cannot == *"$part"* ]]; then
                        n_exp=$((n_exp + 1))
                    else
                        bad+=("$desc"); last=bad
                        continue
                    fi ;;
                "#"*) [ "$last" = bad ] && bad[${#bad[@]}-1]+=" ${line#\#}"; continue ;;
            esac
            last=
        done <<<"$out"
        if [ ${#bad[@]} = 0 ] && [ $n_ok -gt 0 ]; then
            pass "$backend: $script: $n_ok passed, $n_exp failed as the plan's cannot list says"
        else
            fail "$backend: $script: $n_ok passed, $n_exp expected failures, ${#bad[@]} unexpected"
            diag "${bad[@]:-the script printed no passing test}"
            [ ${#bad[@]} = 0 ] && diag "${out: -600}"
        fi
    done
}
