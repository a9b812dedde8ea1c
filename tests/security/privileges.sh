# SPDX-License-Identifier: LGPL-2.1-or-later
# Privileges: no capabilities, no_new_privs, setuid binaries gain nothing,
# mounts fail, and a nested user namespace (possible while no seccomp
# filter forbids it) gains nothing either.
. "$(dirname "$0")/common.bash"

# ── Capabilities and no_new_privs ──
in_ok "probe status runs" status
status=$OUT
contains "NoNewPrivs is 1" "$status" $'NoNewPrivs:\t1'
for cap in CapEff CapPrm CapBnd CapAmb; do
    contains "$cap is empty" "$status" "$cap:"$'\t'"0000000000000000"
done
expect_exit 0 "read setgroups inside" rf run -- cat /proc/self/setgroups
contains "setgroups is denied (no dropping a group that guards a file)" "$OUT" deny

# ── setuid binaries gain nothing ──
# Three layers: the kernel ignores the bit when the owner is not mapped
# (host root never is), no_new_privs, and every mount is nosuid.
expect_exit 0 "read the mount table inside" rf run -- cat /proc/self/mountinfo
nosuid_missing=$(awk '$6 !~ /(^|,)nosuid(,|$)/ { print $5 }' <<<"$OUT")
check "every mount inside is nosuid${nosuid_missing:+ (not: $nosuid_missing)}" test -z "$nosuid_missing" -a -n "$OUT"

# A directory for a setuid copy: the scratch one unless its mount is nosuid
# (Debian 13 mounts /tmp as a nosuid tmpfs, so the control below failed
# there), else one in /var/tmp, else none.
suid_dir() {
    local d
    for d in "$SCRATCH" /var/tmp; do
        findmnt -no OPTIONS -T "$d" 2>/dev/null | tr , '\n' | grep -qx nosuid && continue
        [ "$d" = "$SCRATCH" ] && { echo "$d"; return; }
        d=$(mktemp -d /var/tmp/rf-suid.XXXXXX) && chmod 755 "$d" && echo "$d"
        return
    done
}
sdir=$(is_root && suid_dir)
if is_root && [ -z "$sdir" ]; then
    skip "control: the setuid-root copy gives euid 0 on the host" "$SCRATCH and /var/tmp are mounted nosuid"
    skip "inside, euid stays the caller's" "no mount here lets a setuid copy work"
elif is_root; then
    # A setuid-root copy of the probe: on the host it makes a nobody
    # process euid 0; inside it must leave euid alone.
    suid="$sdir/suid-probe"
    cp "$PROBE" "$suid"
    chown 0:0 "$suid"
    chmod 4755 "$suid"
    ctl=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$suid" ids 2>&1)
    contains "control: the setuid-root copy gives euid 0 on the host" "$ctl" "ruid=65534 euid=0"
    expect_exit 0 "run the setuid-root copy inside" rf run --expose "$suid" -- "$suid" ids
    ids=$OUT
    check "inside, euid stays the caller's ($ids)" \
        test "$(sed -n 's/.*ruid=\([0-9]*\) euid=\([0-9]*\).*/\1 \2/p' <<<"$ids" | awk '{print ($1 == $2)}')" = 1
    [ "$sdir" = "$SCRATCH" ] || rm -rf "$sdir"
else
    skip "control: the setuid-root copy gives euid 0 on the host" "needs root to make one"
    skip "inside, euid stays the caller's" "needs root to make a setuid-root copy"
fi
# A host setuid-root program that reports when it is not running as root.
helper=/usr/lib/polkit-1/polkit-agent-helper-1
if [ -u "$helper" ] && [ "$(stat -c %u "$helper")" = 0 ] && ! is_root; then
    expect_exit 1 "setuid-root $helper runs inside" rf run -- sh -c "echo | $helper $(id -un)"
    contains "it gains no root: it reports it is not setuid root" "$OUT$ERR" "needs to be setuid root"
    ctl=$(echo | timeout 10 "$helper" "$(id -un)" 2>&1)
    lacks "control: on the host it does run as root" "$ctl" "needs to be setuid root"
else
    skip "a host setuid-root program gains no root inside" "needs $helper and a non-root caller"
fi

# A root caller's workspace is idmapped: what the sandbox (an unprivileged
# host id) creates there belongs to host root on disk. A setuid or setgid
# bit on such a file would hand root to whoever runs it on the host.
if is_root; then
    cp /usr/bin/id "$WS/suid-cp"
    chmod 644 "$WS/suid-cp"
    inside chmod "$WS/suid-cp" 4755 >/dev/null 2>&1 </dev/null
    rf run -- sh -c "cp /usr/bin/id $WS/suid-new && chmod 4755 $WS/suid-new" >/dev/null 2>&1 </dev/null
    rf run -- sh -c "cp /usr/bin/id $WS/sgid-new && chmod 2755 $WS/sgid-new" >/dev/null 2>&1 </dev/null
    inside create-mode "$WS/suid-open" 6755 >/dev/null 2>&1 </dev/null
    minted=$(find "$WS" -type f -perm /6000 \( -user 0 -o -group 0 \) | tr '\n' ' ')
    check "root caller: the sandbox leaves no setuid/setgid-root file on the host${minted:+ (found: $minted)}" \
        test -z "$minted"
    rm -f "$WS"/suid-* "$WS"/sgid-*
else
    skip "root caller: the sandbox leaves no setuid/setgid-root file on the host" \
        "needs root: a non-root caller's files are its own"
fi

# ── Mounts ──
in_denied "mount a tmpfs on /tmp" mount-tmpfs /tmp
in_denied "mount a tmpfs on the workspace" mount-tmpfs "$WS"
in_denied "remount /usr read-write" remount-rw /usr
in_denied "unmount /proc/sys (to reach a writable /proc/sys)" umount /proc/sys
expect_exit 1 "mknod of a block device fails" rf run -- mknod "$WS/disk" b 7 0

# ── A nested user namespace gains nothing ──
secret="$SCRATCH/secret"
echo "rf-secret-content" >"$secret"
chmod 644 "$secret"
rc=0
out=$(inside unshare-user 2>&1 </dev/null) || rc=$?
if [ "$rc" = 0 ]; then
    diag "nested user namespaces can be created (no seccomp filter yet): checking they gain nothing"
else
    diag "nested user namespaces are refused: $out"
fi
in_denied "nested userns: the secret outside the workspace stays unreadable" nested read "$secret"
in_denied "nested userns: /usr stays read-only" nested write "/usr/rf-sec-$TOKEN"
in_denied "nested userns: /usr cannot be remounted read-write" nested remount-rw /usr
in_denied "nested userns: /etc/passwd cannot be opened for writing" nested open-write /etc/passwd
in_denied "nested userns: /proc/sys cannot be unmounted" nested umount /proc/sys
in_denied "nested userns: /proc/sys/kernel/core_pattern stays unwritable" nested open-write /proc/sys/kernel/core_pattern
in_denied "nested userns: the workspace mount cannot be unmounted" nested umount "$WS"
in_denied "nested user+pid namespace: no fresh /proc to get around the masks" nested-proc /tmp
check "nothing was created in the host's /usr" test ! -e "/usr/rf-sec-$TOKEN"
