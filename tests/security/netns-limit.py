#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# netns-limit.py BASE PROGRAM [ARG...]: run PROGRAM as root of a fresh user
# namespace (its ids 0-65535 are the host's BASE-BASE+65535) in which no
# network namespace may be made (user.max_net_namespaces = 0), as on a host
# or container that forbids them. Needs root (to map the range). Used by
# network_ipc.sh: ringfence must refuse there, never run in the host's
# network.
import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main():
    base = int(sys.argv[1])
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWUSER) != 0:
            os.write(2, b"netns-limit: unshare(CLONE_NEWUSER) failed\n")
            os._exit(120)
        os.write(ready_w, b"x")
        os.read(go_r, 1)  # the maps are written
        # Still without exec: the capabilities of the namespace's creator.
        os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        with open("/proc/sys/user/max_net_namespaces", "w") as f:
            f.write("0")
        os.execvp(sys.argv[2], sys.argv[2:])
    os.read(ready_r, 1)
    for name in ("uid_map", "gid_map"):
        with open("/proc/%d/%s" % (pid, name), "w") as f:
            f.write("0 %d 65536" % base)
    os.write(go_w, b"x")
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
