/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/orphans.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

void rf_orphans_collect(const char *dir, const char *prefix, void (*undo)(const char *path, void *ud), void *ud)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t plen = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (plen ? strncmp(e->d_name, prefix, plen) != 0 : e->d_name[0] == '.')
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        char path[PATH_MAX];
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            undo(path, ud);
        close(fd); /* and the lock with it */
    }
    closedir(d);
}
