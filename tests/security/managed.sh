#!/usr/bin/env bash
# The managed boundary (docs/managed.md): no flag, environment variable,
# --config file, trusted workspace file or profile gets a policy past it;
# each refusal (exit 125) names the setting and the boundary, and nothing
# runs. A boundary someone other than its owner may write is refused, so
# every run is. Limits the policy leaves unset are the boundary's.
# The boundary's path comes from RINGFENCE_TEST_MANAGED, honoured only by
# test-hook builds (-Dtest_hooks=true): the tests never write /etc.
. "$(dirname "$0")/common.bash"

bdir="$SCRATCH/managed"
mkdir -p "$bdir"
chmod 755 "$bdir"
boundary="$bdir/managed.yaml"
cat >"$boundary" <<'YAML'
network:
  mode: allowlist
  allow_domains: ["*.example.com"]
accept_weaker: false
landlock: best-effort
seccomp: {profile: default}
backend: landlock
limits:
  memory: 512M
  timeout: 300
YAML
chmod 644 "$boundary"
export RINGFENCE_TEST_MANAGED="$boundary"
marker="$WS/ran-$TOKEN"

if rf config --network host >/dev/null 2>&1; then
    skip "the managed boundary" "this ringfence is not a test-hook build (RINGFENCE_TEST_MANAGED is ignored)"
    exit 0
fi

refused() { # DESC SETTING CMD...: exit 125 naming SETTING and the boundary; nothing ran
    local desc=$1 setting=$2; shift 2
    rm -f "$marker"
    expect_exit 125 "$desc" "$@"
    contains "...names $setting" "$ERR" "$setting"
    contains "...and the boundary" "$ERR" "beyond the managed boundary $boundary"
    check "...and nothing ran" test ! -e "$marker"
}
run_marker=(-- sh -c 'touch "$1"' sh "$marker")

refused "--network host" "network.mode" rf run --network host "${run_marker[@]}"
refused "--allow-domain beyond the boundary's names" "network.allow_domains[0]" \
    rf run --allow-domain evil.test "${run_marker[@]}"
refused "a domain that only ends like the boundary's" "network.allow_domains[0]" \
    rf run --allow-domain evilexample.com "${run_marker[@]}"
refused "RINGFENCE_NETWORK=host in the environment" "network.mode" \
    env RINGFENCE_NETWORK=host "$RINGFENCE" run "${run_marker[@]}"
printf 'network: host\n' >"$SCRATCH/wide.yaml"
refused "a --config file that opens the network" "network.mode (from $SCRATCH/wide.yaml)" \
    rf run --config "$SCRATCH/wide.yaml" "${run_marker[@]}"
printf '{"network": {"mode": "host"}}\n' >"$WS/.ringfence.json"
refused "a trusted workspace file that opens the network" "network.mode" \
    rf run --trust-workspace-config "${run_marker[@]}"
rm -f "$WS/.ringfence.json"
refused "--accept-weaker" "accept_weaker" rf run --accept-weaker "${run_marker[@]}"
refused "--landlock off" "landlock" rf run --landlock off "${run_marker[@]}"
refused "--seccomp off" "seccomp.profile" rf run --seccomp off "${run_marker[@]}"
refused "--backend none" "backend" rf run --backend none "${run_marker[@]}"
refused "--memory above the boundary's" "limits.memory" rf run --memory 1G "${run_marker[@]}"
refused "--timeout above the boundary's" "limits.timeout" rf run --timeout 301 "${run_marker[@]}"
expect_exit 125 "exec is bound the same way" rf exec --network host -- true
contains "...naming the setting" "$ERR" "network.mode"

# Within it: runs, and gets the boundary's limits.
expect_exit 0 "control: a run within the boundary runs" \
    rf run --allow-domain api.example.com --status-json "$SCRATCH/st.json" "${run_marker[@]}"
check "...and ran" test -e "$marker"
check "...with the boundary's memory limit, unset by the run" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["limits"]["memory"]["limit"] == 512 << 20 and s["limits"]["timeout_seconds"] == 300' "$SCRATCH/st.json"
expect_exit 0 "config --explain shows the boundary" rf config --explain
check "...its path and rules" python3 -c '
import json, sys
m = json.loads(sys.argv[1])["managed"]
assert m["path"] == sys.argv[2] and m["boundary"]["network"]["mode"] == "allowlist"' "$OUT" "$boundary"

# A boundary others may write bounds nothing: refused, and so is every run.
chmod 664 "$boundary"
expect_exit 125 "a group-writable boundary: the run is refused" rf run "${run_marker[@]}"
contains "...naming why" "$ERR" "may write it"
chmod 644 "$boundary"
chmod 775 "$bdir"
expect_exit 125 "a boundary in a group-writable directory: refused" rf run "${run_marker[@]}"
chmod 755 "$bdir"
ln -s "$boundary" "$bdir/link.yaml"
expect_exit 125 "a boundary that is a symlink: refused" \
    env RINGFENCE_TEST_MANAGED="$bdir/link.yaml" "$RINGFENCE" run "${run_marker[@]}"
printf 'network: {mode: sideways}\n' >"$bdir/bad.yaml"
expect_exit 125 "a boundary that is not valid: refused" \
    env RINGFENCE_TEST_MANAGED="$bdir/bad.yaml" "$RINGFENCE" run "${run_marker[@]}"

# The command inside cannot reach the boundary to widen it.
expect_exit 0 "a command tries to rewrite the boundary" \
    rf run --allow-domain api.example.com -- sh -c '(printf "network: host\n" > "$1") 2>/dev/null && echo WROTE; true' \
    sh "$boundary"
lacks "...and cannot" "$OUT" WROTE
check "...the boundary is unchanged" grep -q allowlist "$boundary"

# policy check: without running anything.
unset RINGFENCE_TEST_MANAGED
printf 'network:\n  allow_domains: [api.example.com]\n' >"$SCRATCH/ok.yaml"
expect_exit 0 "policy check: a policy within" rf policy check "$SCRATCH/ok.yaml" --within "$boundary"
contains "...prints within" "$OUT" "within"
printf 'network:\n  allow_domains: [api.example.com, evil.test]\n' >"$SCRATCH/beyond.yaml"
expect_exit 1 "policy check: a policy beyond" rf policy check "$SCRATCH/beyond.yaml" --within "$boundary"
contains "...prints the first excess" "$OUT" "network.allow_domains[1]: evil.test"
printf 'expose:\n  - {source: /etc, mode: ro}\n' >"$SCRATCH/path.yaml"
printf 'expose:\n  - {source: /usr, mode: ro}\n' >"$bdir/paths.yaml"
expect_exit 1 "policy check: a path outside the boundary's exposes" \
    rf policy check "$SCRATCH/path.yaml" --within "$bdir/paths.yaml"
contains "...names it" "$OUT" "expose[0]: /etc"

# doctor's own real start (run -- true, kept out of the trail, 30 s at
# most) under a boundary that requires the trail and a shorter timeout: it
# is tried under the boundary's settings instead of refused, so doctor
# still judges the native backend by a real start.
printf 'audit: true\nlimits: { timeout: 10 }\n' >"$bdir/doctor.yaml"
chmod 644 "$bdir/doctor.yaml"
RINGFENCE_TEST_MANAGED="$bdir/doctor.yaml" "$RINGFENCE" doctor --json >"$SCRATCH/doctor.json" 2>/dev/null
check "doctor under a boundary requiring the trail and timeout 10: its real start is tried, not refused" \
    python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['native_start']
assert s['tried'] and 'managed boundary' not in (s['error'] or ''), s" "$SCRATCH/doctor.json"
