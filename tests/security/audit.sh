#!/usr/bin/env bash
# The audit trail (docs/audit.md) is outside every sandbox: the command it
# records cannot see, read, write or truncate it, even with a home
# directory (the instance root inside it) as its workspace. Tampering with
# it afterwards is found: an edited, removed, reordered or cut-off record
# is named by `ringfence audit verify`. What a command chose (its argv)
# reaches a terminal through `audit show` only with control bytes made
# visible. The running-sandbox registry (`ringfence ps`, `stop`) is
# checked at the end: a forged entry is not listed nor stopped, and an
# ordinary user cannot stop another's sandbox.
. "$(dirname "$0")/common.bash"

log() { rf audit path; }
status_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")' "$@"; }

# A run is recorded, start and end, under the id its status record names.
expect_exit 0 "a run with auditing on" rf run --status-json "$SCRATCH/st.json" -- true
id=$(status_field "$SCRATCH/st.json" sandbox)
head=$(status_field "$SCRATCH/st.json" audit_head)
check "the status record names the sandbox and the trail's head" test -n "$id" -a ${#head} = 64
expect_exit 0 "audit show --json" rf audit show --json --sandbox "$id"
contains "...its run.start" "$OUT" '"event":"run.start"'
contains "...its run.end" "$OUT" '"event":"run.end"'
check "the head file holds the status record's head" grep -q "$head" "$(dirname "$(log)")/head"
check "control: the log is a file on the host" test -s "$(log)"

# From inside: not even visible. The workspace holds the instance root
# (as a home directory would), the hardest case: the mask over it, plan.c.
RH=$RINGFENCE_HOME
cp "$(log)" "$SCRATCH/log-before"
expect_exit 0 "a command tries to list, read, append to, truncate the log, from a workspace that holds it" \
    rf run --workspace "$SCRATCH" -- sh -c '
        ls -A "$1"; ls -A "$1/audit" 2>/dev/null && echo LISTED
        (cat "$1/audit/audit.log") 2>/dev/null && echo READ
        (printf x >> "$1/audit/audit.log") 2>/dev/null && echo APPENDED
        (: > "$1/audit/audit.log") 2>/dev/null && echo TRUNCATED; true' sh "$RH"
lacks "...it does not see the audit directory" "$OUT" "audit"
lacks "...nor list it" "$OUT" LISTED
lacks "...nor read a record" "$OUT" READ
lacks "...nor append" "$OUT" APPENDED
lacks "...nor truncate" "$OUT" TRUNCATED
expect_exit 0 "the log still verifies after it" rf audit verify
check "...and begins with every record written before (it only grew)" \
    cmp -s -n "$(stat -c %s "$SCRATCH/log-before")" "$SCRATCH/log-before" "$(log)"
check "control: the host sees the audit directory" test -d "$RH/audit"

# Tampering afterwards, one kind at a time, each on a copy of a good log.
for i in 1 2 3; do rf run -- sh -c "exit $i" || true; done
cp -a "$(dirname "$(log)")" "$SCRATCH/good"
restore() { rm -rf "$(dirname "$(log)")"; cp -a "$SCRATCH/good" "$(dirname "$(log)")"; }
tamper() { # DESC SED-SCRIPT WANT
    restore
    sed -i "$2" "$(log)"
    expect_exit 1 "$1" rf audit verify
    contains "...named: $3" "$ERR" "$3"
}
n=$(wc -l <"$(log)")
edited=$(grep -n '"exit_code":[1-9]' "$(log)" | head -n 1 | cut -d: -f1)
tamper "an edited exit code is found" "${edited}s/\"exit_code\":[1-9]/\"exit_code\":0/" \
    "record $edited: its hash does not match"
tamper "a removed record is found" '3d' "record 3: is missing"
tamper "two swapped records are found" '2{h;d};3G' "record 2: is missing (removed, or moved: record 3 comes next)"
tamper "a cut-off tail is found (the head)" '$d' "record $n: is missing"
restore
# Rewriting the whole chain from a record on (hashes recomputed) and the
# head with it passes verify, by design: the owner of the log can. The
# status record's head, kept elsewhere, catches it.
python3 - "$(log)" "$(dirname "$(log)")/head" <<'PYEOF'
import hashlib, json, sys
lines = open(sys.argv[1]).read().splitlines()
out, prev = [], None
for l in lines:
    rec = json.loads(l)
    if prev is None and rec["seq"] == 1:
        rec["command"] = ["forged"] if rec["event"] == "run.start" else rec.get("command")
    if prev is not None:
        rec["prev"] = prev
    rec.pop("hash")
    body = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
    h = hashlib.sha256(body.encode()).hexdigest()
    out.append(body[:-1] + ',"hash":"%s"}' % h)
    prev = h
open(sys.argv[1], "w").write("\n".join(out) + "\n")
open(sys.argv[2], "w").write("%d %s\n" % (len(out), prev))
PYEOF
expect_exit 0 "a chain rewritten whole, head and all, verifies alone (the owner can)" rf audit verify
expect_exit 1 "...but not against the head a status record kept" rf audit verify --head "$head"
contains "...which names that hash" "$ERR" "$head"
restore
expect_exit 0 "control: the untouched log verifies against that head" rf audit verify --head "$head"

# What a command chose, on a terminal: no escape byte gets through.
esc=$'\e]0;pwned\a\e[2J'
expect_exit 0 "a command named with escape sequences" rf run -- sh -c 'true' "$esc"
expect_exit 0 "audit show prints its run" rf audit show --event run.start
lacks "...without an escape byte" "$OUT" $'\e'
lacks "...or a bell" "$OUT" $'\a'
contains "...shown as \\x1b" "$OUT" '\x1b]0;pwned\x07'
expect_exit 0 "audit export --format ocsf" rf audit export --format ocsf --event run.start
check "...one JSON object a line, each an OCSF process activity" \
    python3 -c 'import json,sys; r=[json.loads(l) for l in sys.stdin]; assert r and all(o["class_uid"]==1007 for o in r)' <<<"$OUT"

# A refused name is recorded with its host and port.
expect_exit 0 "a command asks the proxy for a name the allowlist lacks" \
    rf run --allow-domain allowed.example -- python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT blocked.example:443 HTTP/1.1\r\nHost: blocked.example:443\r\n\r\n")
s.recv(100)'
expect_exit 0 "audit show --event net.refused" rf audit show --json --event net.refused
contains "...names the refused host" "$OUT" '"host":"blocked.example","port":443'

# Off: nothing recorded (and the status record has no head).
lines=$(wc -l <"$(log)")
expect_exit 0 "a run with audit: false" env RINGFENCE_AUDIT=false "$RINGFENCE" run --status-json "$SCRATCH/off.json" -- true
check "...adds no record" test "$(wc -l <"$(log)")" = "$lines"
check "...and its status record has no head" test -z "$(status_field "$SCRATCH/off.json" audit_head)"
