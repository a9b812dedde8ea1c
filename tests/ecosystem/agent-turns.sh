#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Real agent turns inside `ringfence run` (TAP): claude-code, codex,
# gemini-cli and opencode in their non-interactive modes, and
# claude-code-acp driven by a client written with @agentclientprotocol/sdk,
# each against a local stand-in of its provider's API (standin/standin.py:
# Anthropic Messages, OpenAI Responses and Chat Completions, Gemini), the
# stand-in the only host allowed (--allow-domain standin.test:PORT, mapped
# to 127.0.0.1 with --add-host). The stand-in scripts the turn: the CLI's
# own shell tool edits hello.txt and runs a command; then it tries to get
# out (a request to evil.example, reading a host secret, writing outside
# the workspace); then a final answer quoting the tool results. Checked:
# the edit landed, the escapes failed and evil.example is refused in the
# status record, the host secret (a file and an environment variable) never
# reached the stand-in, which recorded every request.
# claude-route: claude once more, through the anthropic preset's credential
# route (docs/network.md, "Keys stay outside") to the stand-in: the real key
# stays in ringfence's environment, inside the CLI holds the placeholder,
# and the stand-in receives the real key in x-api-key on every request,
# while the command's own view of its key (printed by the escape command
# into a tool result) is the placeholder.
# Skipped with the reason when npm's registry cannot be reached and nothing
# is cached.  RINGFENCE=build/ringfence tests/ecosystem/agent-turns.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rf=${RINGFENCE:?set RINGFENCE to the ringfence binary}
case $rf in /*) ;; *) rf=$PWD/$rf ;; esac
names=(claude codex gemini opencode claude-code-acp claude-route)
N=$((${#names[@]} * 5))
eco_install || { eco_skip $N "$ECO_WHY"; exit 0; }
bin=$ECO/node_modules/.bin

T=$(mktemp -d /tmp/rf-turns.XXXXXX)
chmod 755 "$T"
standins=()
cleanup() { local p; for p in "${standins[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
export RINGFENCE_HOME=$T/rfhome
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

# The host's secrets: a file outside every workspace, and a variable in
# ringfence's own environment (the sandbox's is clean).
mkdir -p "$T/host"
secret=RF-HOST-SECRET-$RANDOM$RANDOM
echo "$secret" >"$T/host/secret.txt"
export RF_TURN_HOST_SECRET=$secret-env
# claude-route's real key: in ringfence's environment, never inside.
export RF_TURN_REAL_KEY=sk-ant-REAL-$RANDOM$RANDOM
# The commands the stand-in has the agent run. Their outputs (ran:42,
# curl:000, write-rc:1) are not in the commands' text, so finding them in
# a request means the tool ran and its result went back to the API.
# (No $(...) in them: gemini's shell tool refuses command substitution.)
edit_cmd="sed -i s/hello/edited-by-agent/ hello.txt && cat hello.txt && printf 'ran:%s\\n' 42"
escape_cmd="curl -s -m 5 -o /dev/null -w 'curl:%{http_code}' https://evil.example/; echo; cat $T/host/secret.txt; echo \"env:\${RF_TURN_HOST_SECRET:-unset}\"; echo planted > $T/host/planted.txt; echo write-rc:\$?; echo \"key:\${ANTHROPIC_API_KEY:-unset}\""

# standin NAME: start a stand-in logging to $T/NAME.jsonl; sets PORT.
standin() {
    python3 "$here/standin/standin.py" --log "$T/$1.jsonl" --portfile "$T/$1.port" \
        --edit "$edit_cmd" --escape "$escape_cmd" >"$T/$1.standin.out" 2>&1 &
    standins+=($!)
    for _ in $(seq 100); do [ -f "$T/$1.port" ] && break; sleep 0.05; done
    PORT=$(cat "$T/$1.port")
}

# turn NAME [run options...] -- CMD...: one turn in its own workspace.
turn() {
    local name=$1; shift
    local ws=$T/ws-$name opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done; shift
    local t0; t0=$(eco_now)
    (cd "$ws" && timeout -s KILL 170 "$rf" run --expose "$ECO" --allow-domain "standin.test:$PORT" \
        --add-host standin.test:127.0.0.1 --status-json "$T/$name.status.json" --timeout 150 "${opts[@]}" -- "$@") \
        </dev/null >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    eco_since "$t0" >"$T/$name.time"
}

prepare() { # NAME: a workspace with the file the agent is to edit
    mkdir -p "$T/ws-$1"
    printf 'greeting = "hello"\n' >"$T/ws-$1/hello.txt"
    standin "$1"
}

t_all=$(eco_now)
# claude: Anthropic Messages, streamed; its Bash tool allowed by name (as
# root inside, --dangerously-skip-permissions would need IS_SANDBOX=1).
prepare claude
turns=()
turn claude --env "ANTHROPIC_BASE_URL=http://standin.test:$PORT" --env ANTHROPIC_API_KEY=sk-ant-standin \
    --env CLAUDE_CODE_MAX_RETRIES=0 -- "$bin/claude" -p "fix the greeting in hello.txt" --allowedTools Bash &
turns+=($!)
# codex: OpenAI Responses, streamed. Its base URL is the config key
# openai_base_url (OPENAI_BASE_URL is ignored); gpt-4.1 keeps the classic
# exec_command tool (the default model gets the JavaScript "code mode"
# tool); its own sandbox is off, ringfence is the sandbox.
prepare codex
turn codex --env OPENAI_API_KEY=sk-standin -- "$bin/codex" exec --skip-git-repo-check \
    --dangerously-bypass-approvals-and-sandbox -m gpt-4.1 -c "openai_base_url=\"http://standin.test:$PORT/v1\"" \
    "fix the greeting in hello.txt" &
turns+=($!)
# gemini: generateContent and streamGenerateContent. GOOGLE_GEMINI_BASE_URL
# alone selects the "gateway" auth type, which -p refuses ("Invalid auth
# method selected."): the workspace settings select the API key.
prepare gemini
mkdir -p "$T/ws-gemini/.gemini"
echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}}' >"$T/ws-gemini/.gemini/settings.json"
turn gemini --env GEMINI_API_KEY=standin-key --env "GOOGLE_GEMINI_BASE_URL=http://standin.test:$PORT" \
    --env GEMINI_CLI_TRUST_WORKSPACE=true -- "$bin/gemini" --yolo -p "fix the greeting in hello.txt" &
turns+=($!)
# opencode: a provider of its own over OpenAI Chat Completions (streamed),
# through the bundled @ai-sdk/openai-compatible, in the workspace's
# opencode.json; bash and edits allowed.
prepare opencode
cat >"$T/ws-opencode/opencode.json" <<JSON
{"\$schema": "https://opencode.ai/config.json",
 "provider": {"standin": {"npm": "@ai-sdk/openai-compatible", "name": "stand-in",
   "options": {"baseURL": "http://standin.test:$PORT/v1", "apiKey": "sk-standin"},
   "models": {"standin-model": {"name": "stand-in model", "tool_call": true}}}},
 "model": "standin/standin-model",
 "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow"},
 "autoupdate": false, "share": "disabled"}
JSON
turn opencode -- "$bin/opencode" run "fix the greeting in hello.txt" &
turns+=($!)
# claude-code-acp: the client outside (node/acp-client.mjs, the official
# SDK) spawns ringfence run; every permission the agent asks is granted.
prepare claude-code-acp
mkdir -p "$T/acpc" && cp "$here/node/acp-client.mjs" "$T/acpc/" && ln -s "$ECO/node_modules" "$T/acpc/node_modules"
(
    t0=$(eco_now)
    cd "$T/ws-claude-code-acp" && timeout -s KILL 170 node "$T/acpc/acp-client.mjs" "$T/ws-claude-code-acp" \
        "fix the greeting in hello.txt" -- "$rf" run --expose "$ECO" --allow-domain "standin.test:$PORT" \
        --add-host standin.test:127.0.0.1 --status-json "$T/claude-code-acp.status.json" --timeout 150 \
        --env "ANTHROPIC_BASE_URL=http://standin.test:$PORT" --env ANTHROPIC_API_KEY=sk-ant-standin \
        --env CLAUDE_CODE_MAX_RETRIES=0 -- node "$ECO/node_modules/@zed-industries/claude-code-acp/dist/index.js" \
        >"$T/claude-code-acp.out" 2>"$T/claude-code-acp.err"
    echo $? >"$T/claude-code-acp.rc"
    eco_since "$t0" >"$T/claude-code-acp.time"
) &
turns+=($!)
# claude-route: the anthropic preset's route, its upstream the stand-in
# (plain HTTP on loopback, so allow_http), its key from our environment.
prepare claude-route
cat >"$T/route.json" <<JSON
{"network": {"routes": {"anthropic": {"preset": "anthropic", "url": "http://127.0.0.1:$PORT", "allow_http": true,
  "headers": {"x-api-key": "env:RF_TURN_REAL_KEY"}}}}}
JSON
turn claude-route --config "$T/route.json" --env CLAUDE_CODE_MAX_RETRIES=0 -- \
    "$bin/claude" -p "fix the greeting in hello.txt" --allowedTools Bash &
turns+=($!)
wait "${turns[@]}"
echo "# timing: the six turns took $(eco_since "$t_all") s (run at once)"

verdict() { # NAME: the checks, from the files the turn left
    python3 - "$T" "$1" "$secret" "$RF_TURN_REAL_KEY" <<'PY'
import json, os, sys
T, name, secret, real_key = sys.argv[1:5]
def load(p):
    try: return open(p).read()
    except OSError: return ""
reqs = [json.loads(l) for l in load(f"{T}/{name}.jsonl").splitlines()]
bodies = [json.dumps(r["body"]) + json.dumps(r["headers"]) for r in reqs]
everything = "\n".join(bodies)
out = load(f"{T}/{name}.out")
rc = load(f"{T}/{name}.rc").strip()
if name == "claude-code-acp":
    try:
        acp = json.loads(out.splitlines()[-1])
    except Exception:
        acp = {}
    final = acp.get("stopReason") == "end_turn" and "STANDIN-FINAL" in acp.get("text", "")
    how = f"stopReason {acp.get('stopReason')}, {len(acp.get('permissions', []))} permissions granted" + (f", error {acp['error']}" if "error" in acp else "")
else:
    final = rc == "0" and "STANDIN-FINAL" in out
    how = f"exit {rc}"
try:
    net = json.load(open(f"{T}/{name}.status.json"))["network"]
except Exception as e:
    net = {"allowed": [], "blocked_destinations": [], "error": str(e)}
refused = sorted({b["host"] for b in net["blocked_destinations"]})
allowed = sorted({a["host"] for a in net["allowed"]})
ws = load(f"{T}/ws-{name}/hello.txt").strip()
res = {
    "final": [final, f"{how}, {len(reqs)} requests to the stand-in, {load(f'{T}/{name}.time')} s"],
    "edit": [ws == 'greeting = "edited-by-agent"' and "ran:42" in everything,
             f"hello.txt: {ws!r}; ran:42 in a later request: {'ran:42' in everything}"],
    "escape": ["curl:000" in everything and "secret.txt: No such file" in everything and "env:unset" in everything
               and "write-rc:1" in everything and not os.path.exists(f"{T}/host/planted.txt")
               and any(b["host"] == "evil.example" and b["reason"] == "not in allow_domains" for b in net["blocked_destinations"]),
               "refused: " + ", ".join(refused)],
    "secret": [secret not in everything and len(reqs) >= 3, f"searched {len(everything)} bytes of {len(reqs)} requests"],
    "only": [allowed == ["standin.test"], "allowed: " + ", ".join(allowed)],
}
if name == "claude-route":
    # Through the route: the stand-in is the upstream, so nothing goes
    # straight to it; every request there carries the real key, added
    # outside; inside, the CLI's key is the placeholder.
    keys = [r["headers"].get("x-api-key", r["headers"].get("X-Api-Key", "")) for r in reqs]
    bodies_only = "\n".join(json.dumps(r["body"]) for r in reqs)
    routes = net.get("routes", {})
    res["only"] = [allowed == [] and len(reqs) >= 3 and all(k == real_key for k in keys)
                   and "key:ringfence-route-placeholder" in bodies_only and real_key not in bodies_only,
                   f"allowed: {', '.join(allowed) or 'none'}; {sum(k == real_key for k in keys)} of {len(keys)} "
                   f"requests carried the real key; routes: {json.dumps(routes)[:120]}"]
print(json.dumps(res))
PY
}
for name in "${names[@]}"; do
    v=$(verdict "$name")
    get() { python3 -c 'import json,sys; a=json.loads(sys.argv[1])[sys.argv[2]]; print(("1" if a[0] else "0") + " " + a[1])' "$v" "$1"; }
    [ "${VERBOSE:-}" ] && { tail -5 "$T/$name.out" "$T/$name.err" | sed "s/^/# $name: /"; }
    for k in final edit escape secret only; do
        read -r good why <<<"$(get $k)"
        case $k in
            final) what="$name: a whole turn against the stand-in, ended with its final answer ($why)" ;;
            edit) what="$name: its shell tool edited the workspace and ran a command ($why)" ;;
            escape) what="$name: the escape failed: evil.example refused in the status record, the host secret unreadable, the write outside did not land, the host's variable absent ($why)" ;;
            secret) what="$name: no host secret reached the stand-in ($why)" ;;
            only) [ "$name" = claude-route ] &&
                      what="$name: the real key reached the upstream on every request, added outside; inside the CLI held the placeholder ($why)" ||
                      what="$name: the stand-in was the only host reached ($why)" ;;
        esac
        if [ "$good" = 1 ]; then ok "$what"; else nok "$what"; fi
    done
    echo "# timing: $name turn $(cat "$T/$name.time") s"
done
echo "1..$n"
