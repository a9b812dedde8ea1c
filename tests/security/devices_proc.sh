# SPDX-License-Identifier: LGPL-2.1-or-later
# Devices, /proc, /sys and the secret files of /etc: a minimal /dev with no
# disk or kernel memory, /proc's host-wide knobs read-only, no shadow or
# sudoers.
. "$(dirname "$0")/common.bash"

# ── /dev ──
allowed=" fd full null ptmx pts random shm stderr stdin stdout tty urandom zero "
expect_exit 0 "list /dev inside" rf run -- ls -A /dev
extra=""
for e in $OUT; do
    [[ $allowed == *" $e "* ]] || extra="$extra $e"
done
check "/dev holds only the minimal set${extra:+ (extra:$extra)}" test -z "$extra" -a -n "$OUT"
expect_exit 0 "search /dev for block devices" rf run -- find /dev -type b
check "no block device anywhere under /dev" test -z "$OUT"
for dev in mem kmem port kmsg console; do
    in_denied "/dev/$dev is absent" stat "/dev/$dev"
done
disk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -1)
if [ -n "$disk" ]; then
    host_ok "control: the host's disk $disk exists on the host" stat "$disk"
    in_denied "the host's disk $disk is absent inside" stat "$disk"
else
    skip "the host's disks are absent inside" "no block device on this host"
fi
expect_exit 0 "list /dev/pts inside" rf run -- ls -A /dev/pts
pts=$(tr '\n' ' ' <<<"$OUT")
check "/dev/pts is a new instance: no host terminal in it (saw: $pts)" test "$pts" = "ptmx "
in_denied "/dev is read-only (create a file)" write /dev/rf-sec-file
in_ok "control: /dev/null is writable" write /dev/null

# ── /proc ──
for knob in /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/vm/drop_caches \
            /proc/sys/kernel/hostname /proc/sys/net/ipv4/ip_forward; do
    if [ -e "$knob" ]; then
        in_denied "$knob cannot be opened for writing" open-write "$knob"
    else
        skip "$knob cannot be opened for writing" "absent on this host"
    fi
done
if [ -e /proc/sysrq-trigger ]; then
    in_denied "/proc/sysrq-trigger cannot be opened for writing" open-write /proc/sysrq-trigger
else
    skip "/proc/sysrq-trigger cannot be opened for writing" "this kernel has no magic SysRq"
fi
expect_exit 0 "read the mount table inside" rf run -- cat /proc/self/mountinfo
check "/proc/sys is mounted read-only (the guard even for a uid that could write)" \
    awk '$5 == "/proc/sys" && $6 ~ /(^|,)ro(,|$)/ { found = 1 } END { exit !found }' <<<"$OUT"
in_denied "/proc/kmsg (the kernel log) is unreadable" read /proc/kmsg
in_denied "/sys is absent or unwritable" write /sys/kernel/uevent_helper

# ── Secret files of /etc ──
for f in /etc/shadow /etc/gshadow /etc/sudoers /etc/sudoers.d /etc/ssh /etc/subuid /etc/subgid \
         /etc/security/opasswd; do
    if [ -e "$f" ]; then
        host_ok "control: $f exists on the host" stat "$f"
        in_denied "$f is absent inside" stat "$f"
    else
        in_denied "$f is absent inside (absent on the host too)" stat "$f"
    fi
done
if is_root && [ -n "$(ls -A /etc/ssl/private 2>/dev/null)" ]; then
    key=$(find /etc/ssl/private -type f | head -1)
    in_denied "private TLS key $key is masked" stat "$key"
else
    expect_exit 0 "list /etc/ssl/private inside" rf run -- sh -c 'ls -A /etc/ssl/private 2>/dev/null; true'
    check "/etc/ssl/private is empty inside" test -z "$OUT"
fi
