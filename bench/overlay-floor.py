#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The floor of an overlay start: what the kernel costs for the overlay alone.

The same syscalls ringfence's native backend makes for --changes overlay
(src/lib/backend/native/mount.c: fsopen, fsconfig with the same options,
fsmount, move_mount onto the workspace's place), in a mount namespace made
the way ringfence makes one for this caller: a root caller mounts in a new
mount namespace before it enters the sandbox's user namespace (trusted.*
xattrs); an ordinary user in a new user namespace of its own (userxattr).
Then the overlay's teardown (umount2 MNT_DETACH: the unmount itself, its
sync of the upper layer, runs in this thread before umount2 returns to user
space, as it does in the sandbox's last process when its namespace goes).
Fresh empty upper and work directories each round, made outside the clock.

CPU time is this thread's (CLOCK_THREAD_CPUTIME_ID: user + system), around
the syscalls only; ctypes adds a few microseconds per call, which this
reports as part of the floor (it is therefore a slight over-estimate).

  bench/overlay-floor.py [--runs N] [--dir DIR]   (DIR: on the disk the
      sessions live on; default /tmp)

Timings are for notes, never for pass/fail.
"""
import argparse
import ctypes
import os
import shutil
import statistics
import sys
import tempfile
import time

SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount = 429, 430, 431, 432
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
FSOPEN_CLOEXEC, FSMOUNT_CLOEXEC = 1, 1
FSCONFIG_SET_FLAG, FSCONFIG_SET_STRING, FSCONFIG_CMD_CREATE = 0, 1, 6
MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x2, 0x4
MOVE_MOUNT_F_EMPTY_PATH = 0x4
AT_FDCWD = -100
MS_REC, MS_PRIVATE = 0x4000, 0x40000
MNT_DETACH = 2

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def check(rc, what):
    if rc < 0:
        e = ctypes.get_errno()
        sys.exit("overlay-floor: %s: %s" % (what, os.strerror(e)))
    return rc


def sys_(*args):
    return libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])


def own_namespace():
    """A mount namespace as ringfence has it when it mounts the overlay."""
    root = os.geteuid() == 0
    uid, gid = os.geteuid(), os.getegid()
    check(libc.unshare(CLONE_NEWNS | (0 if root else CLONE_NEWUSER)), "unshare")
    if not root:
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write("%d %d 1" % (uid, uid))
        with open("/proc/self/gid_map", "w") as f:
            f.write("%d %d 1" % (gid, gid))
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    return root


def one(base, lower, target, root, i):
    """CPU seconds of the mount and of its teardown."""
    upper, work = "%s/u%d" % (base, i), "%s/w%d" % (base, i)
    os.mkdir(upper)
    os.mkdir(work)
    opts = [(b"lowerdir+", lower.encode()), (b"upperdir", upper.encode()), (b"workdir", work.encode()),
            (b"index", b"off")]
    if root:
        opts += [(b"redirect_dir", b"off"), (b"metacopy", b"off")]
    t0 = time.thread_time()
    fs = check(sys_(SYS_fsopen, b"overlay", FSOPEN_CLOEXEC), "fsopen")
    for k, v in opts:
        check(sys_(SYS_fsconfig, fs, FSCONFIG_SET_STRING, k, v, 0), "fsconfig " + k.decode())
    if not root:
        check(sys_(SYS_fsconfig, fs, FSCONFIG_SET_FLAG, b"userxattr", None, 0), "fsconfig userxattr")
    check(sys_(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, None, None, 0), "fsconfig create")
    m = check(sys_(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV), "fsmount")
    os.close(fs)
    check(sys_(SYS_move_mount, m, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH), "move_mount")
    os.close(m)
    t1 = time.thread_time()
    check(libc.umount2(target.encode(), MNT_DETACH), "umount2")
    t2 = time.thread_time()
    shutil.rmtree(upper)
    shutil.rmtree(work)
    return t1 - t0, t2 - t1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--dir", default="/tmp")
    a = ap.parse_args()
    base = tempfile.mkdtemp(prefix="rf-overlay-floor.", dir=a.dir)
    try:
        lower, target = base + "/lower", base + "/merged"
        os.mkdir(lower)
        os.mkdir(target)
        root = own_namespace()
        mnt, umnt = [], []
        for i in range(a.runs + 10):
            m, u = one(base, lower, target, root, i)
            if i >= 10:  # warm-up rounds left out
                mnt.append(m * 1e3)
                umnt.append(u * 1e3)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    tot = [m + u for m, u in zip(mnt, umnt)]
    q = lambda v, p: statistics.quantiles(v, n=10)[p]
    print("overlay floor: %d rounds, uid %d, %s, load %.2f" % (a.runs, os.getuid(),
          "mount namespace (trusted.* xattrs)" if root else "user + mount namespace (userxattr)", os.getloadavg()[0]))
    for name, v in (("mount", mnt), ("teardown", umnt), ("both", tot)):
        print("  %-9s CPU median %.3f ms  p10 %.3f  p90 %.3f" % (name, statistics.median(v), q(v, 0), q(v, 8)))


if __name__ == "__main__":
    main()
