/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `ringfence export oci DIR`: an OCI bundle, DIR/config.json and DIR/rootfs.
 *
 * The rootfs is what the native backend builds on its tmpfs root, made on
 * disk once: an empty skeleton of mount points, the copied /etc files (a
 * snapshot taken now, as ringfence run takes one at every start) and the
 * symlinks (/bin → usr/bin, ...). Everything else comes from mounts the
 * runtime makes, listed in config.json; the root is read-only. Every path is
 * created beneath the rootfs descriptor without following a symlink, so a
 * link the plan itself puts there (/bin) cannot send a later entry outside. */
#include "backend/backend.h"
#include "export/export.h"
#include "ringfence.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rf_export_write_file(int dirfd, const char *dir, const char *name, const char *text, mode_t mode,
                         rf_error **err)
{
    char tmp[NAME_MAX + 1];
    snprintf(tmp, sizeof tmp, ".%s.tmp", name);
    _cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return rf_error_set(err, errno, "%s/%s", dir, tmp);
    size_t len = strlen(text);
    for (size_t done = 0; done < len;) {
        ssize_t k = write(fd, text + done, len - done);
        if (k < 0) {
            int e = errno;
            unlinkat(dirfd, tmp, 0);
            return rf_error_set(err, e, "%s/%s", dir, name);
        }
        done += (size_t)k;
    }
    if (fsync(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
        int e = errno;
        unlinkat(dirfd, tmp, 0);
        return rf_error_set(err, e, "%s/%s", dir, name);
    }
    return 0;
}

/* Open (creating as directories) every component of the parent of `path`
 * beneath rootfd; *leaf points at the last component. No symlink is
 * followed. Returns a directory fd or -errno. */
static int open_parent(int rootfd, const char *path, char *buf, size_t size, const char **leaf)
{
    if (snprintf(buf, size, "%s", path) >= (int)size)
        return -ENAMETOOLONG;
    int dfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
    if (dfd < 0)
        return -errno;
    char *p = buf;
    while (*p == '/')
        p++;
    for (char *slash; (slash = strchr(p, '/'));) {
        *slash = '\0';
        if (*p && mkdirat(dfd, p, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            close(dfd);
            return -e;
        }
        int next = *p ? openat(dfd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : dup(dfd);
        int e = errno;
        close(dfd);
        if (next < 0)
            return -e;
        dfd = next;
        for (p = slash + 1; *p == '/'; p++)
            ;
    }
    *leaf = p;
    return dfd;
}

static int copy_host_file(const char *source, int dfd, const char *leaf)
{
    _cleanup_close_ int in = open(source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (in < 0)
        return -errno;
    _cleanup_close_ int out = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0)
        return -errno;
    char buf[65536];
    size_t total = 0;
    for (ssize_t n; (n = read(in, buf, sizeof buf)) != 0;) {
        if (n < 0 || (total += (size_t)n) > RF_COPY_MAX)
            return n < 0 ? -errno : -EFBIG;
        for (ssize_t done = 0; done < n;) {
            ssize_t k = write(out, buf + done, (size_t)(n - done));
            if (k < 0)
                return -errno;
            done += k;
        }
    }
    return 0;
}

/* Is mounts[i]'s target beneath an earlier mount (the runtime creates or
 * the source already holds what lies there)? */
static bool beneath_earlier_mount(const rf_plan *plan, size_t i)
{
    const char *t = plan->mounts[i].target;
    for (size_t j = 0; j < i; j++) {
        const rf_mount *m = &plan->mounts[j];
        if (m->type == RF_MOUNT_SYMLINK || m->type == RF_MOUNT_COPY || m->type == RF_MOUNT_RO_SELF)
            continue;
        size_t n = strlen(m->target);
        if (strncmp(t, m->target, n) == 0 && t[n] == '/')
            return true;
    }
    return false;
}

static int make_entry(int rootfd, const rf_mount *m)
{
    char buf[PATH_MAX];
    const char *leaf = "";
    _cleanup_close_ int dfd = open_parent(rootfd, m->target, buf, sizeof buf, &leaf);
    if (dfd < 0)
        return dfd;
    int r = 0;
    switch (m->type) {
    case RF_MOUNT_COPY:
        return copy_host_file(m->source, dfd, leaf);
    case RF_MOUNT_SYMLINK:
        r = symlinkat(m->source, dfd, leaf);
        break;
    case RF_MOUNT_BIND:
        if (!m->source_dir) {
            int fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
            r = fd < 0 ? -1 : close(fd);
            break;
        }
        __attribute__((fallthrough)); /* a directory mount point */
    case RF_MOUNT_TMPFS:
    case RF_MOUNT_PROC:
    case RF_MOUNT_DEVPTS:
        r = *leaf ? mkdirat(dfd, leaf, 0755) : 0;
        if (r < 0 && errno == EEXIST)
            r = 0;
        break;
    case RF_MOUNT_RO_SELF:
    case RF_MOUNT_MASK_FILE: /* over a file a bind shows: nothing to make */
        break;
    }
    return r < 0 ? -errno : 0;
}

/* Remove what this file made below dfd: directories, files, symlinks. */
static void remove_tree_at(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        unlinkat(dfd, name, 0);
        return;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            remove_tree_at(dirfd(d), e->d_name);
    closedir(d);
    unlinkat(dfd, name, AT_REMOVEDIR);
}

/* DIR must not exist, or be an empty directory: never write into a
 * directory of something else. */
static int check_target(const char *dir, rf_error **err)
{
    _cleanup_closedir_ DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : rf_error_set(err, errno, "export oci: %s", dir);
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            rf_error_set(err, 0, "export oci: %s: the directory is not empty", dir);
            return rf_error_hint_set(err, "give a new or empty directory for the bundle");
        }
    return 0;
}

static int fill_bundle(const rf_plan *plan, int dfd, const char *dir, const char *config, rf_error **err)
{
    if (mkdirat(dfd, "rootfs", 0755) < 0)
        return rf_error_set(err, errno, "export oci: %s/rootfs", dir);
    _cleanup_close_ int rootfd = openat(dfd, "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rootfd < 0)
        return rf_error_set(err, errno, "export oci: %s/rootfs", dir);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        if (beneath_earlier_mount(plan, i))
            continue;
        int r = make_entry(rootfd, &plan->mounts[i]);
        if (r < 0)
            return rf_error_set(err, -r, "export oci: rootfs%s", plan->mounts[i].target);
    }
    /* The working directory must exist for the runtime to chdir into it. */
    rf_mount cwd = { .type = RF_MOUNT_TMPFS, .target = plan->cwd };
    int r = plan->cwd && !rf_plan_mount_covering(plan, plan->cwd) ? make_entry(rootfd, &cwd) : 0;
    if (r < 0)
        return rf_error_set(err, -r, "export oci: rootfs%s", plan->cwd);
    return rf_export_write_file(dfd, dir, "config.json", config, 0644, err);
}

/* The bundle is built in a temporary sibling and renamed into place, so a
 * failure leaves nothing and a reader never sees half a bundle. */
RF_EXPORT int rf_export_oci_bundle(const rf_plan *plan, const char *dir, bool accept_weaker, rf_error **err)
{
    json_t *config = rf_export_oci_config(plan, "rootfs", accept_weaker, err);
    if (!config)
        return -1;
    _cleanup_free_ char *text = json_dumps(config, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(config);
    /* "DIR/" names DIR: the temporary sibling must sit beside it, not in it. */
    _cleanup_free_ char *path = strdup(dir), *tmp = NULL;
    for (size_t n = path ? strlen(path) : 0; n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    if (!text || !path || asprintf(&tmp, "%s.rf-tmp-%d", path, (int)getpid()) < 0)
        return rf_error_set(err, ENOMEM, "export oci");
    dir = path;
    /* The instance directories (HOME, TMPDIR, XDG_*) are bound from the host,
     * as at every ringfence start: make them now, owned as run makes them. */
    if (check_target(dir, err) < 0 || rf_backend_make_instance_dirs(plan, err) < 0)
        return -1;
    if (mkdir(tmp, 0755) < 0) {
        rf_error_set(err, errno, "export oci: %s: cannot build the bundle beside it", dir);
        return rf_error_hint_set(err, "the bundle's parent directory must exist and be writable");
    }
    _cleanup_close_ int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int r = dfd < 0 ? rf_error_set(err, errno, "export oci: %s", tmp) : fill_bundle(plan, dfd, dir, text, err);
    if (r == 0 && rename(tmp, dir) < 0)
        r = rf_error_set(err, errno, "export oci: %s", dir);
    if (r < 0)
        remove_tree_at(AT_FDCWD, tmp);
    return r;
}
