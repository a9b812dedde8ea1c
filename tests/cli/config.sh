#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence config: layered files, formats, errors with positions, the
# workspace tightening rule, RINGFENCE_* variables, --explain.
. "$(dirname "$0")/../lib.sh"
# Keep the caller's own ~/.config/ringfence out of the test.
export XDG_CONFIG_HOME="$SCRATCH/xdg"
mkdir -p "$XDG_CONFIG_HOME"
ws_real=$(realpath "$WS")

expect_exit 0 "config with no files" rf config
contains "workspace is the cwd" "$OUT" "\"workspace\": \"$ws_real\""
contains "network none by default" "$OUT" '"mode": "none"'

expect_exit 0 "config --explain" rf config --explain
contains "explain has sources" "$OUT" '"sources"'
contains "defaults are named" "$OUT" '"landlock": "default"'

cat >"$SCRATCH/net.json" <<'J'
{ "network": "host", "limits": { "memory": "64M" } }
J
expect_exit 0 "--config FILE" rf config --config "$SCRATCH/net.json" --explain
contains "file value applies" "$OUT" '"mode": "host"'
contains "explain names the file" "$OUT" "\"network.mode\": \"$SCRATCH/net.json\""

expect_exit 0 "command line over --config" rf config --config "$SCRATCH/net.json" --network none
contains "flag wins" "$OUT" '"mode": "none"'

printf 'network: none\nexpose:\n  - source: /usr\n   mode: ro\n' >"$SCRATCH/bad.yaml"
expect_exit 125 "malformed YAML" rf config --config "$SCRATCH/bad.yaml"
contains "YAML error has file:line:column" "$ERR" "bad.yaml:4:"

printf '{\n  "network": "none",\n}\n' >"$SCRATCH/bad.json"
expect_exit 125 "malformed JSON" rf config --config "$SCRATCH/bad.json"
contains "JSON error has file:line:column" "$ERR" "bad.json:3:"

echo '{ "restrict_to_worksapce": false }' >"$SCRATCH/typo.json"
expect_exit 125 "unknown key" rf config --config "$SCRATCH/typo.json"
contains "did-you-mean" "$ERR" "did you mean 'restrict_to_workspace'"

echo '{ "expose": [ { "source": "/usr", "target": "/proc/x" } ] }' >"$SCRATCH/proc.json"
expect_exit 125 "target in /proc" rf config --config "$SCRATCH/proc.json"
contains "names the setting" "$ERR" "expose[0].target"

echo '{ "chdir": "$NOPE/x" }' >"$SCRATCH/var.json"
expect_exit 125 "unknown variable" rf config --config "$SCRATCH/var.json"
contains "names the variable" "$ERR" 'unknown variable $NOPE'

expect_exit 125 "missing workspace" rf config --workspace "$SCRATCH/nope"
contains "names workspace" "$ERR" "workspace"

# The workspace file is written by the confined agent: tighten only.
echo '{ "network": "host" }' >"$WS/.ringfence.json"
expect_exit 125 "workspace file may not turn the network on" rf config
contains "refusal names the key" "$ERR" "network"
contains "refusal names the fix" "$ERR" "--trust-workspace-config"
expect_exit 0 "--trust-workspace-config allows it" rf config --trust-workspace-config
contains "trusted value applies" "$OUT" '"mode": "host"'
echo '{ "limits": { "pids": 10 }, "tools": { "disabled": ["exec"] } }' >"$WS/.ringfence.json"
expect_exit 0 "workspace file may tighten" rf config
contains "tightened value applies" "$OUT" '"pids": 10'
rm -f "$WS/.ringfence.json"
echo '{ "network": "host" }' >"$SCRATCH/elsewhere.json"
ln -s "$SCRATCH/elsewhere.json" "$WS/.ringfence.json"
expect_exit 125 "a symlinked workspace file is refused" rf config
contains "says it is a link" "$ERR" "symbolic link"
rm -f "$WS/.ringfence.json"

expect_exit 0 "RINGFENCE_* variables" env RINGFENCE_NETWORK=host \
    RINGFENCE_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE=false "$RINGFENCE" config
contains "RINGFENCE_NETWORK" "$OUT" '"mode": "host"'
contains "RINGFENCE_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE" "$OUT" '"restrict_to_workspace": false'
expect_exit 125 "typo in a RINGFENCE_ variable" env RINGFENCE_NETWROK=host "$RINGFENCE" config
contains "names the variable" "$ERR" "RINGFENCE_NETWROK"
expect_exit 0 "RINGFENCE_BIN and RINGFENCE_LIB (the bindings' pointers at a build) are not settings" \
    env RINGFENCE_BIN=/x/ringfence RINGFENCE_LIB=/x/libringfence.so.0 "$RINGFENCE" config

echo '{ "isolation": { "enabled": false }, "providers": {} }' >"$SCRATCH/pico.json"
expect_exit 0 "picoclaw config" rf config --config "$SCRATCH/pico.json"
contains "isolation.enabled false → backend none" "$OUT" '"backend": "none"'
contains "warning on stderr" "$ERR" "WITHOUT a sandbox"

printf 'restricted_runner:\n  default_type: sandbox-exec\n' >"$SCRATCH/mitto.yaml"
expect_exit 125 "Mitto sandbox-exec on Linux" rf config --config "$SCRATCH/mitto.yaml"
contains "clear error" "$ERR" "macOS-only"
expect_exit 0 "--runner overrides the Mitto type" rf config --config "$SCRATCH/mitto.yaml" --runner firejail
contains "firejail backend" "$OUT" '"backend": "firejail"'

expect_exit 125 "bad --config-format" rf config --config-format yaml
contains "names the option" "$ERR" "config-format"
expect_exit 0 "forced format" rf config --config "$SCRATCH/net.json" --config-format ringfence

ex=${RF_SOURCE_DIR:-}/examples
if [ -r "$ex/ringfence.yaml" ]; then
    expect_exit 0 "examples/ringfence.yaml" rf config --config "$ex/ringfence.yaml" --agent reviewer
    contains "agent section applies" "$OUT" '"write_file"'
    mkdir -p "$SCRATCH/home/.picoclaw/workspace"
    expect_exit 0 "examples/picoclaw-config.json" env HOME="$SCRATCH/home" "$RINGFENCE" config \
        --config "$ex/picoclaw-config.json"
    contains "picoclaw workspace" "$OUT" "$SCRATCH/home/.picoclaw/workspace"
    expect_exit 0 "examples/mitto-settings.yaml" env HOME="$SCRATCH/home" "$RINGFENCE" config \
        --config "$ex/mitto-settings.yaml" --agent claude-code
    contains "Mitto agent networking" "$OUT" '"mode": "host"'
else
    skip "examples" "source tree not readable"
fi

# sandbox-runtime's settings file (network.allowedDomains ...), detected.
cat >"$SCRATCH/srt.json" <<'JSON'
{"network": {"allowedDomains": ["registry.npmjs.org", "*.github.com"], "deniedDomains": ["gist.github.com"],
             "allowLocalBinding": true},
 "filesystem": {"denyRead": ["~/.aws"], "allowWrite": ["."], "denyWrite": [".env"]}}
JSON
expect_exit 0 "sandbox-runtime settings are read" rf config --config "$SCRATCH/srt.json"
contains "allowedDomains become the allowlist" "$OUT" '"mode": "allowlist"'
contains "the names are kept" "$OUT" '"*.github.com"'
contains "deniedDomains become deny_domains" "$OUT" '"gist.github.com"'
contains "denyRead becomes deny_paths" "$OUT" "/.aws\""
contains "denyWrite becomes a protected path" "$OUT" '".env"'
contains "unused settings are named" "$ERR" "network.allowLocalBinding is not used"
echo '{"network": {"allowedDomains": "github.com"}}' >"$SCRATCH/srt-bad.json"
expect_exit 125 "a malformed sandbox-runtime list is an error" rf config --config "$SCRATCH/srt-bad.json"
contains "it names the key" "$ERR" "network.allowedDomains"
