/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What this process is, in the user namespace it runs in: whether that is
 * the host's (initial) one, which host uid its uid 0 is, and whether it
 * holds a capability. A root caller in a container is often not the host's
 * root, or lacks the capabilities host root has (docs/containers.md). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

/* True when this process runs in the initial user namespace: its uid_map
 * maps all 2^32 - 1 ids from 0 to 0. */
bool rf_ident_initial_userns(void);

/* The id of the parent user namespace that `id` here stands for (from
 * /proc/self/uid_map or gid_map), or (uid_t)-1 when it is not mapped. */
uid_t rf_ident_outer_uid(uid_t id);

/* True when this process runs under a seccomp filter (Seccomp: 2). */
bool rf_ident_seccomp_filtered(void);

/* True when this process has capability `cap` in its effective set. */
bool rf_ident_has_cap(int cap);

/* True when AppArmor takes capabilities away in user namespaces this
 * process makes: kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu
 * 23.10+) and this process runs unconfined, not under a profile that
 * grants userns (the package's /etc/apparmor.d/ringfence). */
bool rf_ident_apparmor_restricts_userns(void);

#define RF_APPARMOR_HINT                                                                                      \
    "AppArmor takes capabilities away in new user namespaces here (kernel."                                   \
    "apparmor_restrict_unprivileged_userns = 1) and ringfence runs unconfined: load the profile the package " \
    "ships (sudo apparmor_parser -r /etc/apparmor.d/ringfence; it grants userns to /usr/bin/ringfence only), " \
    "use --backend landlock, or set the sysctl to 0 (docs/containers.md)"
