#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Each layer of the native backend proves itself alone (issue 4):
#  - with Landlock off, the read-only mount still denies a write to /usr
#    (EROFS: the mount answers, not permissions); Landlock alone under an
#    over-broad mount is tests/unit/test-layers.c;
#  - every syscall the default seccomp profile blocks returns its errno
#    inside the sandbox, where the same call with --seccomp off does not;
#  - TIOCSTI on a pty fails inside; a nested `unshare -U` fails inside.
. "$(dirname "$0")/../lib.sh"

if ! rf run -- true 2>/dev/null; then
    skip "native layers" "the native backend cannot run here (see ringfence doctor)"
    exit 0
fi

# ── the mount alone ──
expect_exit 1 "landlock off: the read-only /usr mount denies a write" rf run --landlock off -- "$PROBE" write /usr/rf-layers-probe
contains "  ... with EROFS (the mount, not permissions)" "$OUT" "EROFS"
rf plan --landlock off -- true >"$SCRATCH/plan.json"
check "  ... and the plan says Landlock is off" python3 -c "import json; p=json.load(open('$SCRATCH/plan.json')); assert p['landlock']['mode']=='off'"
expect_exit 0 "landlock off: the workspace stays writable" rf run --landlock off -- "$PROBE" write "$WS/f"
expect_exit 1 "landlock off: the private root hides the host's files" rf run --landlock off -- "$PROBE" read /etc/fstab
contains "  ... they do not exist there (ENOENT)" "$OUT" "ENOENT"

# ── seccomp: each blocked syscall, with its errno ──
# name:errno, as docs/seccomp.md lists them for the default profile.
cases="unshare:EPERM clone:EPERM clone3:ENOSYS mount:EPERM umount2:EPERM pivot_root:EPERM
fsopen:EPERM fsconfig:EPERM fsmount:EPERM fspick:EPERM move_mount:EPERM open_tree:EPERM
mount_setattr:EPERM keyctl:EPERM add_key:EPERM request_key:EPERM bpf:EPERM
perf_event_open:EPERM userfaultfd:EPERM io_uring_setup:EPERM io_uring_enter:EPERM
io_uring_register:EPERM kexec_load:EPERM kexec_file_load:EPERM init_module:EPERM
finit_module:EPERM delete_module:EPERM reboot:EPERM swapon:EPERM swapoff:EPERM acct:EPERM
quotactl:EPERM quotactl_fd:EPERM syslog:EPERM process_vm_readv:EPERM process_vm_writev:EPERM
open_by_handle_at:EPERM name_to_handle_at:EPERM personality:EPERM personality-high:EPERM
ioctl-tiocsti:EPERM ioctl-tiocsti-high:EPERM ioctl-tioclinux:EPERM
socket-packet:EAFNOSUPPORT socket-packet-high:EAFNOSUPPORT socket-netlink-audit:EPROTONOSUPPORT
socket-bluetooth:EAFNOSUPPORT socket-key:EAFNOSUPPORT socket-alg:EAFNOSUPPORT socket-vsock:EAFNOSUPPORT"
for c in $cases; do
    name=${c%%:*} want=${c#*:}
    ctl=$(rf run --seccomp off -- "$PROBE" syscall "$name" 2>/dev/null | head -1)
    got=$(rf run -- "$PROBE" syscall "$name" 2>/dev/null | head -1)
    if [[ $ctl == "denied: $want "* ]]; then
        skip "inside: $name -> $want" "the sandbox answers the same without the filter"
    elif [[ $got == "denied: $want "* ]]; then
        pass "inside: $name -> $want (without the filter: ${ctl:-nothing})"
    else
        fail "inside: $name -> $want"; diag "got '$got', without the filter '$ctl'"
    fi
done
out=$(rf run -- "$PROBE" syscall getcwd 2>/dev/null)
[ "$out" = ok ] && pass "inside: an ordinary syscall works" || fail "inside: getcwd ($out)"

# ── TIOCSTI on a pty, nested user namespaces ──
expect_exit 1 "TIOCSTI on the sandbox's own pty fails" rf run -- "$PROBE" syscall ioctl-tiocsti
if command -v unshare >/dev/null; then
    if rf run --seccomp off -- unshare -U true 2>/dev/null; then
        expect_exit 1 "a nested unshare -U fails inside" rf run -- unshare -U true
        contains "  ... with EPERM" "$ERR" "Operation not permitted"
    else
        skip "nested unshare -U" "it fails here even without the filter"
    fi
else
    skip "nested unshare -U" "unshare(1) is not installed"
fi
