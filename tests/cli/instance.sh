# SPDX-License-Identifier: LGPL-2.1-or-later
# ringfence instance: seed 002's verification list (directories created
# inside, the environment exactly as documented, credentials copied 0600
# and not linked, sensitive targets refused, no fd inherited, a planted
# symlink detected) and the lifecycle (list, show, rm refused while
# running, rm --force, ephemeral after exit, timeout and SIGKILL).
. "$(dirname "$0")/../lib.sh"
inst="$RINGFENCE_HOME/instances"
secret="token-$$-$RANDOM"
printf '{"token":"%s"}\n' "$secret" >"$SCRATCH/auth.json"
chmod 600 "$SCRATCH/auth.json"
mkdir -p "$SCRATCH/cfgdir/sub"
echo '{"model":"x"}' >"$SCRATCH/cfgdir/opencode.json"
echo tool >"$SCRATCH/cfgdir/sub/tool.sh"
chmod 4755 "$SCRATCH/cfgdir/sub/tool.sh" 2>/dev/null

expect_exit 0 "create an instance with a credential and a copied directory" \
    rf instance create oc --credential "$SCRATCH/auth.json:data/opencode/auth.json" --copy "$SCRATCH/cfgdir:config/opencode"
for d in config data state cache runtime home tmp; do
    check "$d/ exists, mode 0700" test "$(stat -c %a "$inst/oc/$d")" = 700
done
check "the tree itself is 0700" test "$(stat -c %a "$inst/oc")" = 700
check "metadata lives outside the tree" test -f "$inst/oc.json"
cred="$inst/oc/data/opencode/auth.json"
check "the credential is a copy, mode 0600" test "$(stat -c %a "$cred")" = 600
check "the credential is not a link" test ! -L "$cred"
check "...nor a hard link of the source" test "$(stat -c %i "$cred")" != "$(stat -c %i "$SCRATCH/auth.json")"
echo '{"token":"changed"}' >"$SCRATCH/auth.json"
check "changing the source later does not change the copy" grep -q "$secret" "$cred"
check "copied files keep their content" test -f "$inst/oc/config/opencode/opencode.json"
mode=$(stat -c %a "$inst/oc/config/opencode/sub/tool.sh")
check "copies drop the set-id bits ($mode)" test "$mode" = 755

expect_exit 0 "run in the instance" rf run --instance oc -- sh -c 'env; echo; ls -la /proc/self/fd'
for kv in "HOME=$inst/oc/home" "TMPDIR=$inst/oc/tmp" "XDG_CONFIG_HOME=$inst/oc/config" "XDG_DATA_HOME=$inst/oc/data" \
    "XDG_STATE_HOME=$inst/oc/state" "XDG_CACHE_HOME=$inst/oc/cache" "XDG_RUNTIME_DIR=$inst/oc/runtime"; do
    contains "environment: $kv" "$OUT" "$kv"
done
lacks "nothing of the parent's environment (RINGFENCE_HOME)" "$OUT" "RINGFENCE_HOME="
fds=$(sed -n '/^total/,$p' <<<"$OUT" | grep -cE ' [0-9]+ -> ')
check "no fd inherited beyond stdio ($fds listed, incl. ls's own)" test "$fds" -le 4
expect_exit 0 "the instance's home is writable inside and persists" rf run --instance oc -- sh -c 'echo kept > $HOME/note'
expect_exit 0 "a second run sees it" rf run --instance oc -- cat "$inst/oc/home/note"
contains "home persisted" "$OUT" kept
expect_exit 0 "the credential is readable inside at XDG_DATA_HOME" rf run --instance oc -- sh -c 'cat $XDG_DATA_HOME/opencode/auth.json'
contains "credential content" "$OUT" "$secret"

# ── Refusals ──
ln -s "$SCRATCH/auth.json" "$SCRATCH/auth-link.json"
expect_exit 125 "a credential that is a symlink is refused" rf instance create x1 --credential "$SCRATCH/auth-link.json"
contains "it says so" "$ERR" "symbolic link"
cp "$SCRATCH/auth.json" "$SCRATCH/open.json"; chmod 666 "$SCRATCH/open.json"
expect_exit 125 "a world-writable credential is refused" rf instance create x2 --credential "$SCRATCH/open.json"
contains "it names the mode" "$ERR" "writable by others"
expect_exit 125 "a credential that is a directory is refused" rf instance create x3 --credential "$SCRATCH/cfgdir"
check "nothing was left by the refused creates" test ! -e "$inst/x1.json" -a ! -e "$inst/x2" -a ! -e "$inst/x3"
home=${HOME:-/root}
for t in "$home" "$home/.ssh/inst" "$home/.config/x" "$home/.aws/i" "$home/.kube/i" "$home/.gnupg/i" \
    "$home/.local/share/x" / /etc/inst /usr/inst /root/inst "$RINGFENCE_HOME" "$RINGFENCE_HOME/cache"; do
    expect_exit 125 "target $t is refused" env HOME="$home" "$RINGFENCE" instance create tgt --target "$t"
    contains "the refusal names the target" "$ERR" "$t"
done
mkdir -p "$SCRATCH/real"; ln -s "$SCRATCH/real" "$SCRATCH/via-link"
expect_exit 125 "a target through a symlink is refused" rf instance create viaLink --target "$SCRATCH/via-link/t"
contains "it says why" "$ERR" "symbolic link"
expect_exit 0 "control: a plain target of its own works" rf instance create tgt --target "$SCRATCH/agents/tgt"
check "the tree is at the target" test -d "$SCRATCH/agents/tgt/home"
expect_exit 125 "creating an existing instance is refused" rf instance create tgt
expect_exit 125 "a bad name is refused" rf instance create '../evil'
expect_exit 125 "an unknown profile is refused" rf instance create p1 --profile nosuch

# A symlink planted inside the tree (by the sandbox, or anyone) that leads
# outside is found before the next run.
ln -s / "$inst/oc/home/escape"
expect_exit 125 "a planted symlink leading outside stops the next run" rf run --instance oc -- true
contains "the error names it" "$ERR" "home/escape"
rm "$inst/oc/home/escape"
ln -s ../config "$inst/oc/home/inside"
expect_exit 0 "control: a symlink that stays inside is fine" rf run --instance oc -- true

# ── Lifecycle ──
expect_exit 0 "list" rf instance list
contains "list names oc" "$OUT" oc
expect_exit 0 "list --json" rf instance list --json
check "list --json is JSON" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$OUT"
"$RINGFENCE" run --instance oc -- sleep 30 >/dev/null 2>&1 &
runner=$!
wait_for_running() { for _ in $(seq 100); do "$RINGFENCE" instance show oc --json 2>/dev/null | grep -q '"running": 1' && return 0; sleep 0.1; done; return 1; }
check "show reports the running sandbox" wait_for_running
expect_exit 125 "rm is refused while a sandbox runs" rf instance rm oc
contains "it says how many and how to force" "$ERR" "--force"
expect_exit 0 "rm --force stops it and removes" rf instance rm oc --force
wait "$runner" 2>/dev/null
check "the tree is gone" test ! -e "$inst/oc"
check "the metadata is gone" test ! -e "$inst/oc.json"

expect_exit 0 "an ephemeral run" rf run --ephemeral -- sh -c 'echo $HOME'
check "leaves nothing after a normal exit" test -z "$(ls "$inst" 2>/dev/null | grep ephemeral-)"
expect_exit 124 "an ephemeral run that times out" rf run --instance eph --ephemeral --timeout 1 -- sleep 30
check "leaves nothing after a timeout" test ! -e "$inst/eph" -a ! -e "$inst/eph.json"
"$RINGFENCE" run --instance killed --ephemeral -- sleep 30 >/dev/null 2>&1 &
k=$!
for _ in $(seq 100); do [ -e "$inst/killed.json" ] && break; sleep 0.1; done
sleep 0.5
kill -9 "$k"; wait "$k" 2>/dev/null
check "after SIGKILL of ringfence the instance is still there" test -e "$inst/killed.json"
expect_exit 0 "the next start collects it" rf instance list
check "...and it is gone" test ! -e "$inst/killed" -a ! -e "$inst/killed.json"
mkdir -p "$inst/.new-crashed-1/home" "$inst/orphan/home"
expect_exit 0 "gc" rf instance gc
check "gc removes an interrupted create and a tree without metadata" test ! -e "$inst/.new-crashed-1" -a ! -e "$inst/orphan"

# Profiles and two sandboxes of one instance at once.
expect_exit 0 "a chat-profile instance" rf run --instance c1 --profile chat --status-json "$SCRATCH/st.json" -- true
check "the chat profile's limits hold (256 MiB, 200 processes, 0.25 CPU)" python3 -c '
import json, sys; l = json.load(open(sys.argv[1]))["limits"]
assert l["memory"]["limit"] == 268435456 and l["pids"]["limit"] == 200 and l["cpu"]["limit"] == 0.25, l' "$SCRATCH/st.json"
# Each waits (bounded) for the other's file: both exit 0 only if they ran
# at once.
wait_file='i=0; while [ ! -e "$HOME/$1" ]; do i=$((i + 1)); [ $i -gt 300 ] && exit 1; sleep 0.1; done'
"$RINGFENCE" run --instance c1 -- sh -c "echo one > \$HOME/one; $wait_file" sh two &
a=$!
expect_exit 0 "two sandboxes of one instance run at once" rf run --instance c1 -- sh -c "$wait_file; echo two > \$HOME/two" sh one
rc=0; wait "$a" || rc=$?
check "... the first saw the second's file while it ran (exit $rc)" test "$rc" = 0
check "both wrote to the shared home" test -f "$inst/c1/home/one" -a -f "$inst/c1/home/two"

# ── Stored network settings, shown, applied, only narrowed ──
expect_exit 0 "create with network settings" \
    rf instance create web --allow-domain example.com --allow-domain api.example.org --publish 18080:8080
expect_exit 0 "show (text)" rf instance show web
contains "show names the stored allowlist" "$OUT" "allow_domains   example.com, api.example.org"
contains "...and the published port" "$OUT" "127.0.0.1:18080:8080"
contains "...and which identity model applies" "$OUT" "identity"
expect_exit 0 "show --json" rf instance show web --json
check "show --json has the network object" python3 -c '
import json, sys; n = json.loads(sys.argv[1])["network"]
assert n["mode"] == "allowlist" and n["allow_domains"] == ["example.com", "api.example.org"], n
assert n["publish"] == ["127.0.0.1:18080:8080"], n' "$OUT"
expect_exit 0 "a run that names no network settings gets the instance's" rf plan --instance web -- true
check "...(the plan's allowlist and published port)" python3 -c '
import json, sys; t = sys.argv[1]; assert "api.example.org" in t and "18080" in t, t[:300]' "$OUT"
expect_exit 125 "a run may not widen them (another domain)" rf run --instance web --allow-domain evil.example.net -- true
contains "...the refusal names the setting and the value" "$ERR" "network.allow_domains: evil.example.net"
expect_exit 125 "...nor the mode (host)" rf run --instance web --network host -- true
expect_exit 125 "...nor publish another port" rf run --instance web --publish 18081:8081 -- true
expect_exit 0 "a run may narrow them (one of the domains)" rf plan --instance web --allow-domain example.com -- true
check "...and then only that one is allowed" python3 -c '
import json, sys; t = sys.argv[1]; assert "example.com" in t and "api.example.org" not in t, t[:300]' "$OUT"
expect_exit 0 "...or to no network at all" rf plan --instance web --network none -- true
expect_exit 0 "an instance without stored settings" rf instance create oc2
expect_exit 0 "show of one without network settings" rf instance show oc2
contains "...says none is stored" "$OUT" "none stored"
if is_root; then
    contains "...and that a root caller's instance has an id of its own" "$OUT" "its own"
else
    contains "...and how to get an id of its own" "$OUT" "--own-identity"
fi
