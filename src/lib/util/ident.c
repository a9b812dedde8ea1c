/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/ident.h"
#include "util/cleanup.h"

#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

bool rf_ident_initial_userns(void)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
    unsigned long inside = 1, outside = 1, count = 0;
    int n = f ? fscanf(f, "%lu %lu %lu", &inside, &outside, &count) : 0;
    return n == 3 && inside == 0 && outside == 0 && count == 4294967295UL;
}

uid_t rf_ident_outer_uid(uid_t id)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
    unsigned long inside, outside, count;
    while (f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
        if (id >= inside && id - inside < count)
            return (uid_t)(outside + (id - inside));
    return (uid_t)-1;
}

/* capget(2) directly: libcap would be a dependency of every program that
 * links the library for one bit. */
bool rf_ident_has_cap(int cap)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
    if (cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3 || syscall(SYS_capget, &hdr, data) < 0)
        return false;
    return (data[cap / 32].effective >> (cap % 32)) & 1u;
}
