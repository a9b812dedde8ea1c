/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/ident.h"
#include "util/cleanup.h"

#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

bool rf_ident_seccomp_filtered(void)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Seccomp:", 8))
            return atoi(line + 8) == 2;
    return false;
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

static bool read_first_line(const char *path, char *buf, size_t size)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f || !fgets(buf, (int)size, f))
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

/* Test builds only (-Dtest_hooks=true, docs/testing.md): RF_TEST_APPARMOR
 * = "SYSCTL LABEL" stands for the sysctl's value and this process's label,
 * so the suite can walk the detection on a kernel without AppArmor. */
static bool apparmor_facts(char *v, size_t vsize, char *label, size_t lsize)
{
#ifdef RF_TEST_HOOKS
    const char *fake = getenv("RF_TEST_APPARMOR");
    if (fake && *fake) {
        int n = sscanf(fake, "%15s %255s", v, label);
        if (n < 2)
            label[0] = '\0';
        return n >= 1 && vsize >= 16 && lsize >= 256;
    }
#endif
    if (!read_first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, vsize))
        return false;
    if (!read_first_line("/proc/self/attr/apparmor/current", label, lsize) &&
        !read_first_line("/proc/self/attr/current", label, lsize))
        label[0] = '\0';
    return true;
}

bool rf_ident_apparmor_restricts_userns(void)
{
    char v[16], label[256];
    if (!apparmor_facts(v, sizeof v, label, sizeof label) || strcmp(v, "1"))
        return false;
    return !label[0] || !strcmp(label, "unconfined");
}
