#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Credential routes from the user's side: flags and the policy file give
# the same routes, plan and config --explain show where a secret comes
# from and never its value, presets set their CLI's variables, and bad
# input is refused with a message that says how to fix it.
. "$(dirname "$0")/../lib.sh"

export RF_TEST_SECRET="sk-cli-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
py() { python3 -c "import json,sys; p=json.loads(sys.stdin.read()); $1"; }

# ── --help and the man page source list the options ──
expect_exit 0 "run --help" rf run --help
for o in --route --route-header --route-ca --route-allow --route-allow-http; do
    contains "--help lists $o" "$OUT" "$o "
done

# ── plan: routes shown, values never ──
expect_exit 0 "plan with a route" rf plan --route "api=https://api.example.com/v2" \
    --route-header "api:x-api-key=env:RF_TEST_SECRET" --route-ca "api:ca.pem" --route-allow "api:POST /v1/*" \
    --keep-env RF_TEST_SECRET -- true
PLAN=$OUT
check "network allowlist implied" py 'assert p["network"] == "allowlist"' <<<"$PLAN"
check "the route, its source and rules are shown" py '
r = p["egress"]["routes"][0]
assert r["name"] == "api" and r["url"] == "https://api.example.com/v2", r
assert r["headers"] == {"x-api-key": "env:RF_TEST_SECRET"} and r["allow"] == ["POST /v1/*"], r
assert r["ca"].endswith("/ca.pem") and r["ca"].startswith("/"), r' <<<"$PLAN"
check "RINGFENCE_ROUTE_API_URL is in the environment" \
    py 'assert "RINGFENCE_ROUTE_API_URL=http://127.0.0.1:3128/route/api" in p["env"]' <<<"$PLAN"
check "the key's variable is dropped even with --keep-env" \
    py 'assert not any(e.startswith("RF_TEST_SECRET=") for e in p["env"])' <<<"$PLAN"
lacks "plan never shows the key" "$PLAN" "$RF_TEST_SECRET"
expect_exit 0 "config --explain with a route" rf config --explain --route "api=https://api.example.com" \
    --route-header "api:x-api-key=env:RF_TEST_SECRET"
contains "explain shows the route" "$OUT" "routes"
lacks "explain never shows the key" "$OUT$ERR" "$RF_TEST_SECRET"

# ── Presets: a documented layer, and their CLIs' variables ──
expect_exit 0 "plan with every preset" rf plan --route anthropic --route openai --route gemini --route github -- true
PLAN=$OUT
for kv in "ANTHROPIC_BASE_URL=http://127.0.0.1:3128/route/anthropic" \
    "ANTHROPIC_API_KEY=ringfence-route-placeholder" "OPENAI_BASE_URL=http://127.0.0.1:3128/route/openai/v1" \
    "OPENAI_API_KEY=ringfence-route-placeholder" "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:3128/route/gemini" \
    "GEMINI_API_KEY=ringfence-route-placeholder" "GIT_CONFIG_KEY_0=url.http://127.0.0.1:3128/route/github/.insteadOf" \
    "GIT_CONFIG_VALUE_0=https://github.com/" "RINGFENCE_ROUTE_GITHUB_URL=http://127.0.0.1:3128/route/github"; do
    check "preset sets $kv" py "assert '$kv' in p['env']" <<<"$PLAN"
done
check "the anthropic preset: its URL, header source and rules" py '
r = [r for r in p["egress"]["routes"] if r["name"] == "anthropic"][0]
assert r["url"] == "https://api.anthropic.com" and r["headers"] == {"x-api-key": "env:ANTHROPIC_API_KEY"}, r
assert "POST /v1/messages*" in r["allow"], r' <<<"$PLAN"
expect_exit 0 "a preset with the user's own header source" rf plan --route openai \
    --route-header "openai:Authorization=bearer:file:/run/keys/openai" -- true
check "the user's header replaces the preset's" py '
r = p["egress"]["routes"][0]; assert r["headers"] == {"Authorization": "bearer:file:/run/keys/openai"}, r' <<<"$OUT"

# ── The policy file form: network.routes ──
cat >"$SCRATCH/routes.yaml" <<'EOF'
network:
  routes:
    claude: {preset: anthropic}
    internal:
      url: https://llm.internal.example/api
      headers: {Authorization: "bearer:env:RF_TEST_SECRET"}
      allow: ["POST /v1/*"]
EOF
expect_exit 0 "plan from a policy file" rf plan --config "$SCRATCH/routes.yaml" -- true
check "both routes, the preset under its own name" py '
rs = {r["name"]: r for r in p["egress"]["routes"]}
assert rs["claude"]["preset"] == "anthropic" and rs["internal"]["url"] == "https://llm.internal.example/api", rs
assert "RINGFENCE_ROUTE_CLAUDE_URL=http://127.0.0.1:3128/route/claude" in p["env"]
assert "ANTHROPIC_BASE_URL=http://127.0.0.1:3128/route/claude" in p["env"]' <<<"$OUT"
printf 'network:\n  routes:\n    x: {url: https://x.example, header: {a: "env:B"}}\n' >"$SCRATCH/typo.yaml"
expect_exit 125 "a misspelt route key" rf plan --config "$SCRATCH/typo.yaml" -- true
contains "is named, with a suggestion" "$ERR" "headers"

# A workspace's .ringfence file can never add a route: it could send a key
# anywhere, or run a command on the host (cmd:).
printf '{"network": {"routes": {"evil": {"url": "https://evil.example", "headers": {"x": "cmd:id"}}}}}\n' \
    >"$WS/.ringfence.json"
printf 'network: {mode: allowlist}\n' >"$SCRATCH/allowlist.yaml"
expect_exit 125 "a workspace file that adds a route" rf plan --config "$SCRATCH/allowlist.yaml" -- true
contains "is refused" "$ERR" "network.routes"
rm -f "$WS/.ringfence.json"

# ── Bad input ──
expect_exit 125 "an unknown preset" rf plan --route antropic -- true
contains "did you mean" "$ERR" "did you mean 'anthropic'"
expect_exit 125 "an http:// upstream" rf plan --route "api=http://api.example.com" -- true
contains "is refused, saying why" "$ERR" "clear text"
contains "and how to allow it" "$ERR" "--route-allow-http"
expect_exit 0 "an http:// upstream, explicitly allowed" rf plan --route "api=http://api.example.com" \
    --route-allow-http api -- true
expect_exit 125 "two routes with one name" rf plan --route "a=https://x.example" --route "a=https://y.example" -- true
contains "are refused" "$ERR" "a route named 'a' was given already"
expect_exit 125 "CR LF in a header name" rf plan --route "a=https://x.example" --route-header $'a:x-a\r\nb=env:V' -- true
contains "is refused" "$ERR" "header name"
expect_exit 125 "a literal value as a source" rf plan --route "a=https://x.example" \
    --route-header "a:x-api-key=sk-literal" -- true
contains "is refused (it would sit in the policy)" "$ERR" "env:VAR, file:PATH or cmd:COMMAND"
expect_exit 125 "a header for a route without a URL" rf plan --route-header "nourl:x=env:V" -- true
contains "says the route needs a URL" "$ERR" "network.routes.nourl"
expect_exit 125 "a route with network host" rf plan --network host --route anthropic -- true
contains "is refused" "$ERR" "network.routes"
expect_exit 125 "a bad rule" rf plan --route "a=https://x.example" --route-allow "a:post v1" -- true
contains "is refused with an example" "$ERR" "POST /v1/messages*"
echo key >"$WS/key.txt"
chmod 600 "$WS/key.txt"
expect_exit 125 "a key file inside the workspace" rf plan --route "a=https://x.example" \
    --route-header "a:x-api-key=file:$WS/key.txt" -- true
contains "is refused: the command could read it" "$ERR" "is visible inside the sandbox"
expect_exit 125 "a route-ca that does not load" rf run --route "a=https://x.example" --route-ca "a:$SCRATCH/none.pem" -- true
contains "fails before the command runs, naming the file" "$ERR" "none.pem"
