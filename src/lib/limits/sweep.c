/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sweeping leftovers: cgroups named ringfence-<pid>-<n> below our own
 * cgroup whose owner is gone. They only exist when both the caller and its
 * keeper were killed (or no keeper was started), so this is the backstop
 * that runs once at start, not the main cleanup path. */
#include "limits/cgmanager.h"
#include "limits/cgroup.h"
#include "limits/cgroupfs.h"
#include "limits/hierarchy.h"

#include "util/cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "ringfence-"

/* The owner pid from a name, or 0 if the name is not ours. */
static pid_t owner_of(const char *name)
{
    if (strncmp(name, PREFIX, strlen(PREFIX)) != 0)
        return 0;
    const char *p = name + strlen(PREFIX);
    long pid = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        pid = pid * 10 + (*p - '0');
        if (pid > 1L << 30)
            return 0;
    }
    return *p == '-' ? (pid_t)pid : 0;
}

static bool owner_alive(pid_t pid)
{
    return pid == getpid() || kill(pid, 0) == 0 || errno == EPERM;
}

static int sweep_dir(const char *dir, unsigned min_age_s)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int it = dup(fd);
    _cleanup_closedir_ DIR *d = it >= 0 ? fdopendir(it) : NULL;
    if (!d) {
        if (it >= 0)
            close(it);
        return 0;
    }
    time_t now = time(NULL);
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        pid_t owner = owner_of(e->d_name);
        struct stat st;
        if (owner <= 0 || owner_alive(owner) ||
            fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
            now - st.st_mtime < (time_t)min_age_s)
            continue;
        /* rmdir of a populated cgroup fails (EBUSY): those are left alone. */
        if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0)
            removed++;
    }
    return removed;
}

/* Without systemd, root's sandboxes live in TOP/ringfence (limits/cgmanager.h),
 * outside our own cgroup: sweep there too. */
static int sweep_shared(const char *own_v2, unsigned min_age_s)
{
    if (!own_v2)
        return 0;
    _cleanup_free_ char *top = rf_cgmanager_top(own_v2);
    _cleanup_free_ char *shared = NULL;
    if (!top || asprintf(&shared, "%s/" RF_CGMANAGER_SHARED, top) < 0)
        return 0;
    return sweep_dir(shared, min_age_s); /* 0 when there is none */
}

int rf_cgroup_sweep_stale(unsigned min_age_s)
{
    rf_hierarchies h;
    if (rf_hierarchy_discover(&h, NULL) < 0)
        return 0;
    const char *dirs[1 + RF_CTRL_N] = { h.v2.dir };
    size_t n = 1;
    for (int c = 0; c < RF_CTRL_N; c++) {
        bool seen = false;
        for (size_t k = 0; k < n; k++)
            seen |= dirs[k] && h.v1[c].dir && strcmp(dirs[k], h.v1[c].dir) == 0;
        if (!seen)
            dirs[n++] = h.v1[c].dir;
    }
    int removed = 0;
    for (size_t k = 0; k < n; k++)
        if (dirs[k])
            removed += sweep_dir(dirs[k], min_age_s);
    removed += sweep_shared(h.v2.dir, min_age_s);
    rf_hierarchy_clear(&h);
    return removed;
}
