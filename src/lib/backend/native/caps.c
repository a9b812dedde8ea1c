/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Raw prctl/capset rather than libcap: this runs after clone in a child of a
 * possibly multi-threaded caller, where libcap's allocations are unsafe. */
#include "backend/native/sandbox.h"
#include "limits/limits.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int rf_caps_clear(rf_setup_fail *f)
{
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return rf_fail(f, "clear ambient capabilities", NULL);
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct data[2] = { { 0 } };
    if (syscall(SYS_capset, &hdr, data) < 0)
        return rf_fail(f, "drop capabilities", NULL);
    return 0;
}

int rf_limits_apply(const rf_limits *limits, const rf_limits_report *how, rf_setup_fail *f)
{
    int rc = rf_limits_apply_rlimits(limits, how);
    if (rc < 0) {
        errno = -rc;
        return rf_fail(f, "resource limits", NULL);
    }
    return 0;
}

int rf_caps_drop_all(rf_setup_fail *f)
{
    /* Lock root out of capabilities: with these bits, uid 0 inside gains
     * nothing from execve, and the lock keeps the command from undoing it.
     * Needs CAP_SETPCAP, so it comes before the bounding set is emptied. */
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                         SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                         SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
        return rf_fail(f, "lock securebits", NULL);
    /* Up to the first capability this kernel does not know (EINVAL). */
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
            if (errno == EINVAL)
                break;
            return rf_fail(f, "drop bounding capabilities", NULL);
        }
    if (rf_caps_clear(f) < 0)
        return -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return rf_fail(f, "set no_new_privs", NULL);
    return 0;
}
