/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The native backend's kernel floor (floor.h). Linux 5.12 today: the host
 * matrix's Debian 11 guest (5.10) has no mount_setattr, and every mount the
 * native backend makes is set up with it (read-only, nosuid, private
 * propagation on detached trees, which the classic mount(2) cannot reach). */
#include "backend/native/floor.h"

#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

static const rf_kernel_call calls[] = {
    { "openat2", SYS_openat2, 5, 6, "resolves every path inside the new root" },
    { "close_range", SYS_close_range, 5, 9, "closes the caller's descriptors in the sandbox" },
    { "mount_setattr", SYS_mount_setattr, 5, 12, "makes the sandbox's mounts read-only and private" },
};

const rf_kernel_call *rf_native_floor_missing(rf_kernel_probe_fn probe)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (!probe(&calls[i]))
            return &calls[i];
    return NULL;
}

static bool release_at_least(const char *release, unsigned major, unsigned minor)
{
    unsigned ma = 0, mi = 0;
    if (!release || sscanf(release, "%u.%u", &ma, &mi) != 2)
        return false;
    return ma > major || (ma == major && mi >= minor);
}

int rf_native_floor_error(const rf_kernel_call *call, const char *release, rf_error **err)
{
    if (release_at_least(release, call->major, call->minor)) {
        rf_error_set(err, ENOSYS,
                     "native backend: %s(2) answers ENOSYS, though this kernel (Linux %s) has it: a seccomp "
                     "filter around ringfence refuses it",
                     call->name, release);
        rf_error_hint_set(err, "run ringfence outside that filter (a container's: --security-opt "
                               "seccomp=PROFILE allowing %s), or use --backend bwrap (docs/containers.md)",
                          call->name);
        return -1;
    }
    rf_error_set(err, ENOSYS,
                 "native backend: this kernel (Linux %s) has no %s(2), which %s; it came in Linux %u.%u, "
                 "the oldest kernel the native backend runs on",
                 release ? release : "?", call->name, call->why, call->major, call->minor);
    rf_error_hint_set(err, "boot a kernel of %u.%u or later (Debian 12, Ubuntu 22.04 and RHEL 9 have one), or "
                           "use --backend bwrap, which mounts with the older calls; 'ringfence doctor' shows what "
                           "runs here",
                      call->major, call->minor);
    return -1;
}

/* Each call with arguments it refuses before doing anything: a kernel that
 * has the call answers EINVAL or EBADF, one that lacks it ENOSYS. */
static bool kernel_has(const rf_kernel_call *call)
{
    long r = call->nr == SYS_close_range ? syscall(call->nr, 1U, 0U, 0U)
                                         : syscall(call->nr, -1, NULL, 0, NULL, 0);
    return r == 0 || errno != ENOSYS;
}

int rf_native_floor_check(rf_error **err)
{
    const rf_kernel_call *missing = rf_native_floor_missing(kernel_has);
    if (!missing)
        return 0;
    struct utsname u;
    return rf_native_floor_error(missing, uname(&u) == 0 ? u.release : NULL, err);
}
