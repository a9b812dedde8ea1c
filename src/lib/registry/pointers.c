/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Root's `ringfence ps` lists each account's default registry
 * (~/.ringfence/run); a user who runs with another RINGFENCE_HOME leaves a
 * pointer to theirs in /run/ringfence/homes (registry.h), a root-owned
 * sticky directory anyone may add to but nobody list or rename in but
 * root: one file per registry, "<uid>.<16 hex digits of the path's
 * hash>", owned by that user, holding the path.
 *
 * What root believes of a pointer: that the file is named for its owner,
 * and that the directory it names is owned by that same user (not a
 * link). Its entries are then listed as any user's are (each one checked
 * against its processes), only those owned by that user, and nothing in
 * it is removed: root tidies only its own registry. A pointer can only
 * add its owner's own sandboxes to root's list, which their own `ps`
 * shows anyway; a squatter's file under another uid's name is ignored. */
#include "registry/registry.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rf_registry_pointers_dir(void)
{
#ifdef RF_TEST_HOOKS
    const char *t = getenv("RINGFENCE_TEST_REGISTRY_POINTERS"); /* tests/security/audit.sh */
    if (t && *t)
        return t;
#endif
    return RF_REGISTRY_POINTERS;
}

/* Only a directory root owns, sticky, that others can write but not list. */
static bool pointers_dir_sound(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & S_ISVTX) &&
           !(st.st_mode & (S_IRGRP | S_IROTH));
}

void rf_registry_point(const char *dir)
{
    if (getuid() == 0)
        return; /* root's ps reads root's own registry */
    /* O_PATH: others may not read (list) the directory, only add to it. */
    _cleanup_close_ int pd = open(rf_registry_pointers_dir(), O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (pd < 0 || !pointers_dir_sound(pd))
        return; /* not set up on this machine: root's ps lists default homes only */
    _cleanup_free_ char *real = realpath(dir, NULL);
    if (!real)
        return;
    char hash[65], name[64];
    rf_sha256_hex(real, strlen(real), hash);
    snprintf(name, sizeof name, "%u.%.16s", (unsigned)getuid(), hash);
    /* Already there and ours: nothing to do (a run per start, no rewrite). */
    struct stat st;
    if (fstatat(pd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == getuid())
        return;
    _cleanup_close_ int fd = openat(pd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 && write(fd, real, strlen(real)) < 0) {
        /* best effort: only root's listing misses it */
    }
}

/* The registry a pointer names, when root may believe it: malloc'd. */
static char *pointed(int pd, const char *name)
{
    char *end;
    unsigned long uid = strtoul(name, &end, 10);
    struct stat st;
    if (end == name || *end != '.' || fstatat(pd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != uid || uid == 0)
        return NULL;
    _cleanup_close_ int fd = openat(pd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    char path[PATH_MAX];
    ssize_t n = fd < 0 ? -1 : read(fd, path, sizeof path - 1);
    if (n <= 1 || path[0] != '/')
        return NULL;
    path[n] = '\0';
    _cleanup_close_ int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != uid)
        return NULL;
    return strdup(path);
}

int rf_registry_list_pointed(char **seen, size_t n_seen, json_t *out)
{
    _cleanup_close_ int pd = open(rf_registry_pointers_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (pd < 0 || !pointers_dir_sound(pd))
        return 0;
    int dup_fd = dup(pd);
    _cleanup_closedir_ DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return 0;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        _cleanup_free_ char *path = pointed(pd, e->d_name);
        _cleanup_free_ char *real = path ? realpath(path, NULL) : NULL;
        bool dup_path = !real;
        for (size_t i = 0; real && i < n_seen; i++)
            dup_path = dup_path || (seen[i] && !strcmp(seen[i], real));
        if (!dup_path)
            (void)rf_registry_list_of(real, (uid_t)strtoul(e->d_name, NULL, 10), out);
    }
    return 0;
}
