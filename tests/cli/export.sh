#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `ringfence export k8s` and `ringfence plan --format sbpl` against golden
# files (tests/golden/), and the export command's errors. The OCI bundle is
# run under crun by tests/security/oci-export.sh.
#
# The outputs hold the caller's paths and identity; they are normalised to
# @SCRATCH@, @UID@, @GID@ and @USER@ before the comparison.
# RF_UPDATE_GOLDEN=1 rewrites the golden files instead (review the diff).
golden=$(cd "$(dirname "$0")/../golden" && pwd)
validator="$(cd "$(dirname "$0")" && pwd)/k8s-validate.py"
. "$(dirname "$0")/../lib.sh"

# A fixed environment and policy, so the output depends on nothing else.
fixed() {
    env -i PATH=/usr/bin:/bin LANG=C.UTF-8 TERM=dumb HOME="$SCRATCH/home" RINGFENCE_HOME="$SCRATCH/rfhome" \
        "$RINGFENCE" "$@"
}
normalise() {
    sed -e "s|$SCRATCH|@SCRATCH@|g" -e "s|\"$(id -un)\"|\"@USER@\"|g" \
        -e "s|\"runAsUser\": $(id -u)|\"runAsUser\": @UID@|" -e "s|\"runAsGroup\": $(id -g)|\"runAsGroup\": @GID@|" \
        -e 's#"runAsNonRoot": \(true\|false\)#"runAsNonRoot": @NONROOT@#'
}
compare() { # DESC GOLDEN FILE
    local desc=$1 want="$golden/$2" got=$3
    if [ "${RF_UPDATE_GOLDEN:-}" ]; then cp "$got" "$want"; pass "$desc (golden file rewritten)"; return; fi
    if diff -u "$want" "$got" >"$SCRATCH/diff"; then pass "$desc"; else
        fail "$desc"; diag "differs from tests/golden/$2:"; head -40 "$SCRATCH/diff" | sed 's/^/#   /'; fi
}
mkdir -p "$SCRATCH/home"

# Kubernetes: a worked example with every limit and the timeout.
expect_exit 0 "export k8s writes the objects" fixed export k8s "$SCRATCH/k8s" --no-config --workspace "$WS" \
    --memory 256M --cpu 0.25 --pids 200 --timeout 60 --image debian:bookworm-slim -- python3 -m http.server
contains "it says where" "$ERR" "wrote Kubernetes objects to $SCRATCH/k8s"
normalise <"$SCRATCH/k8s/ringfence.k8s.json" >"$SCRATCH/k8s.json"
compare "the manifest matches the golden file" k8s-manifest.json "$SCRATCH/k8s.json"
normalise <"$SCRATCH/k8s/seccomp/ringfence/ringfence-python3.json" >"$SCRATCH/seccomp.json"
compare "the Localhost seccomp profile matches the golden file" k8s-seccomp.json "$SCRATCH/seccomp.json"
check "the manifest is JSON kubectl reads (a List of 3 objects)" python3 -c '
import json,sys; m=json.load(open(sys.argv[1])); assert m["kind"]=="List"
assert [i["kind"] for i in m["items"]]==["RuntimeClass","NetworkPolicy","Pod"]' "$SCRATCH/k8s/ringfence.k8s.json"
check "the Pod drops every capability and escalation" python3 -c '
import json,sys; p=json.load(open(sys.argv[1]))["items"][2]; c=p["spec"]["containers"][0]["securityContext"]
assert c["capabilities"]["drop"]==["ALL"] and c["allowPrivilegeEscalation"] is False and c["readOnlyRootFilesystem"]
assert p["spec"]["hostUsers"] is False and p["spec"]["automountServiceAccountToken"] is False
assert p["spec"]["activeDeadlineSeconds"]==60' "$SCRATCH/k8s/ringfence.k8s.json"
# Against the Kubernetes API schema, where Debian's python3-kubernetes is
# installed (scripts/setup installs it): every field known, every type right.
vrc=0
vout=$(/usr/bin/python3 "$validator" "$SCRATCH/k8s/ringfence.k8s.json" 2>&1) || vrc=$?
if [ $vrc = 2 ]; then
    skip "the manifest fits the Kubernetes API schema" "$vout"
elif [ $vrc = 0 ]; then
    pass "the manifest fits the Kubernetes API schema (python3-kubernetes models)"
else
    fail "the manifest fits the Kubernetes API schema"; diag "$vout"
fi
printf '%s' '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","spec":{"hostNetwrok":true}}]}' \
    >"$SCRATCH/bad.json"
if [ $vrc != 2 ]; then
    expect_exit 1 "control: the validator rejects a misspelt field" /usr/bin/python3 "$validator" "$SCRATCH/bad.json"
fi
expect_exit 0 "network host: no NetworkPolicy" fixed export k8s "$SCRATCH/k8s-host" --no-config --network host -- true
check "…only the RuntimeClass and the Pod" python3 -c '
import json,sys; m=json.load(open(sys.argv[1])); assert [i["kind"] for i in m["items"]]==["RuntimeClass","Pod"]' \
    "$SCRATCH/k8s-host/ringfence.k8s.json"

# macOS Seatbelt.
expect_exit 0 "plan --format sbpl" fixed plan --no-config --format sbpl --workspace "$WS" \
    --expose /usr/share/zoneinfo -- make test
# The /etc entries are this host's (which of the curated names exist): kept
# out of the golden file, checked by name below.
normalise <<<"$OUT" | grep -v -e '^; etc: ' -e '"/private/etc/' >"$SCRATCH/profile.sb"
compare "the Seatbelt profile matches the golden file" sandbox.sb "$SCRATCH/profile.sb"
contains "deny by default" "$OUT" "(deny default)"
contains "/etc/passwd read-only, at its macOS place" "$OUT" '(allow file-read* (literal "/private/etc/passwd"))'
contains "/etc/ssl/private masked" "$OUT" '(deny file-read* file-write* (subpath "/private/etc/ssl/private"))'
contains "the workspace read-write" "$OUT" "(allow file-read* file-write* (subpath \"/private$WS\"))"
lacks "network none: no network rule" "$OUT" "(allow network"
expect_exit 0 "plan --format sbpl, network host" fixed plan --no-config --format sbpl --network host -- true
contains "network host allows the network" "$OUT" "(allow network*)"
expect_exit 125 "an unknown format is refused" rf plan --format yaml -- true
contains "…naming the choices" "$ERR" "expected json or sbpl"
expect_exit 125 "--format is plan's own option" rf run --format sbpl -- true

# The bundle directory as a user types it.
expect_exit 0 "export oci DIR/ (a trailing slash) writes DIR" rf export oci "$SCRATCH/slash/" -- true
check "…the bundle is DIR itself" test -f "$SCRATCH/slash/config.json"
check "…and nothing is left beside it" test -z "$(ls -d "$SCRATCH"/slash.rf-tmp-* 2>/dev/null)"
expect_exit 125 "export oci into a missing parent is refused" rf export oci "$SCRATCH/no/such/dir" -- true
contains "…naming the directory and the fix" "$ERR" "$SCRATCH/no/such/dir: cannot build the bundle beside it"

# Errors.
expect_exit 125 "export without a target" rf export
contains "…says what it expects" "$ERR" "expected 'oci DIR' or 'k8s DIR'"
expect_exit 125 "export of an unknown kind" rf export docker "$SCRATCH/x" -- true
expect_exit 125 "export of the landlock backend's plan is refused" rf export oci "$SCRATCH/ll" --backend landlock \
    --accept-weaker -- true
contains "…naming the backend" "$ERR" "backend landlock"
check "…and writes nothing" test ! -e "$SCRATCH/ll"
expect_exit 0 "export --help" rf export --help
contains "…explains both targets" "$OUT" "crun run --bundle"

# docs/containers.md's harness Deployment (a pod whose harness sandboxes its
# children with the native backend) is valid against the same API models.
doc=${RF_SOURCE_DIR:-}/docs/containers.md
if [ ! -r "$doc" ]; then
    skip "docs/containers.md's Deployment is valid" "RF_SOURCE_DIR is not readable here"
elif ! /usr/bin/python3 -c 'import kubernetes, yaml' 2>/dev/null; then
    skip "docs/containers.md's Deployment is valid" "python3-kubernetes is not installed"
else
    /usr/bin/python3 -c '
import json, re, sys, yaml
text = open(sys.argv[1]).read()
block = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
print(json.dumps({"kind": "List", "items": [yaml.safe_load(block)]}))' "$doc" >"$SCRATCH/deploy.json"
    expect_exit 0 "docs/containers.md's Deployment is valid" /usr/bin/python3 "$validator" "$SCRATCH/deploy.json"
    check "... with procMount Unmasked and hostUsers false" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["items"][0]["spec"]["template"]["spec"]
assert d["hostUsers"] is False and d["containers"][0]["securityContext"]["procMount"] == "Unmasked", d' "$SCRATCH/deploy.json"
fi
