/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The directory podman's --rootfs gets: nothing of the host's, only empty
 * directories and files where the plan mounts something (a runtime in a
 * user namespace may not create them itself) and the plan's symlinks (the
 * merged-/usr links, /etc/localtime). Made read-only by --read-only; it
 * lives in the instance root and is removed after the run.
 *
 * Each run's directory (INSTANCE/container/NAME) is locked (flock) from
 * its creation until its supervisor has removed it: the caller's
 * descriptor passes to the supervisor across the fork. A directory nobody
 * holds belongs to a run whose ringfence died before its supervisor
 * started, or whose supervisor was killed; the next run of the instance
 * removes it. Creation and that sweep take the parent's lock, so a
 * directory is never seen between its mkdir and its lock. */
#include "backend/container/container.h"
#include "util/error.h"
#include "util/orphans.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p below root (which exists); never through a symlink. */
static int mkdirs(const char *root, const char *rel)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", root, rel) >= (int)sizeof p)
        return -1;
    char *s = p + strlen(root) + 1;
    for (;;) {
        char *slash = strchr(s, '/');
        if (slash)
            *slash = 0;
        struct stat st;
        if (mkdir(p, 0755) < 0 && (errno != EEXIST || lstat(p, &st) < 0 || !S_ISDIR(st.st_mode)))
            return -1;
        if (!slash)
            break;
        *slash = '/';
        s = slash + 1;
    }
    return 0;
}

static int make_point(const char *root, const char *target, bool dir)
{
    const char *rel = target + strspn(target, "/");
    if (!*rel)
        return 0;
    if (dir)
        return mkdirs(root, rel);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", rel);
    char *slash = strrchr(parent, '/');
    if (slash && (*slash = 0, mkdirs(root, parent) < 0))
        return -1;
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s/%s", root, rel) >= (int)sizeof p)
        return -1;
    int fd = open(p, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno == EEXIST || errno == EISDIR ? 0 : -1;
    close(fd);
    return 0;
}

static int make_link(const char *root, const rf_mount *m)
{
    const char *rel = m->target + strspn(m->target, "/");
    char parent[PATH_MAX], p[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", rel);
    char *slash = strrchr(parent, '/');
    if (slash && (*slash = 0, mkdirs(root, parent) < 0))
        return -1;
    if (snprintf(p, sizeof p, "%s/%s", root, rel) >= (int)sizeof p)
        return -1;
    return symlink(m->source, p) < 0 && errno != EEXIST ? -1 : 0;
}

static bool is_dir_point(const rf_mount *m)
{
    struct stat st;
    switch (m->type) {
    case RF_MOUNT_TMPFS:
    case RF_MOUNT_PROC:
    case RF_MOUNT_DEVPTS:
        return true;
    case RF_MOUNT_BIND:
        return m->source_dir || (stat(m->source, &st) == 0 && S_ISDIR(st.st_mode));
    case RF_MOUNT_RO_SELF:
        return m->placeholder ? m->source_dir : stat(m->target, &st) == 0 && S_ISDIR(st.st_mode);
    default:
        return false;
    }
}

int rf_container_rootfs_make(const rf_plan *plan, const char *root, rf_error **err)
{
    static const char *const dirs[] = { "proc", "sys", "dev", "etc", "run", "tmp", "var/tmp" };
    static const char *const files[] = { "etc/hostname", "etc/hosts", "etc/resolv.conf", "run/.containerenv" };
    if (mkdir(root, 0755) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "backend container: create the root directory %s", root);
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (mkdirs(root, dirs[i]) < 0)
            return rf_error_set(err, errno, "backend container: create %s/%s", root, dirs[i]);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (make_point(root, files[i], false) < 0)
            return rf_error_set(err, errno, "backend container: create %s/%s", root, files[i]);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (!strncmp(m->target, "/dev/", 5) || !strncmp(m->target, "/proc/", 6))
            continue; /* the runtime's own */
        int r = m->type == RF_MOUNT_SYMLINK ? make_link(root, m) : make_point(root, m->target, is_dir_point(m));
        if (r < 0)
            return rf_error_set(err, errno, "backend container: mount point %s in %s", m->target, root);
    }
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void rf_container_dir_remove(const char *dir)
{
    if (!dir)
        return;
    char netns[4200];
    if (snprintf(netns, sizeof netns, "%s/netns", dir) < (int)sizeof netns)
        umount2(netns, MNT_DETACH | UMOUNT_NOFOLLOW); /* network: allowlist (run.c); else nothing there */
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static void remove_orphan(const char *path, void *ud)
{
    (void)ud;
    rf_container_dir_remove(path);
}

int rf_container_dir_make(const char *parent, const char *dir, rf_error **err)
{
    if (mkdir(parent, 0700) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "backend container: create %s", parent);
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (pfd < 0 || flock(pfd, LOCK_EX) < 0) {
        rf_error_set(err, errno, "backend container: lock %s", parent);
        if (pfd >= 0)
            close(pfd);
        return -1;
    }
    /* Run directories no run holds: left by a killed start (util/orphans.h). */
    rf_orphans_collect(parent, "ringfence-", remove_orphan, NULL);
    int fd = -1;
    if (mkdir(dir, 0700) < 0)
        rf_error_set(err, errno, "backend container: create %s", dir);
    else if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || flock(fd, LOCK_EX) < 0) {
        rf_error_set(err, errno, "backend container: lock %s", dir);
        if (fd >= 0)
            close(fd);
        fd = -1;
        rmdir(dir);
    }
    close(pfd);
    return fd;
}
