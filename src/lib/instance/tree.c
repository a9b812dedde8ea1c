/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An instance's tree: seed 002's layout, the copied credentials and
 * configuration, the check that nothing in it leads outside, removal.
 * Every file operation is relative to a directory descriptor and refuses
 * to follow symlinks: the tree is written by the sandbox, so a name in it
 * may be a link planted to redirect us. */
#include "instance/instance.h"
#include "instance/subid.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const subdirs[] = { "config", "data", "state", "cache", "runtime", "home", "tmp" };

int rf_instance_make_tree(const char *dir, uid_t uid, gid_t gid, rf_error **err)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "instance: create %s", dir);
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return rf_error_set(err, errno, "instance: open %s", dir);
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
        if (mkdirat(fd, subdirs[i], 0700) < 0 && errno != EEXIST)
            return rf_error_set(err, errno, "instance: create %s/%s", dir, subdirs[i]);
        if (fchownat(fd, subdirs[i], uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchmodat(fd, subdirs[i], 0700, 0) < 0)
            return rf_error_set(err, errno, "instance: own %s/%s", dir, subdirs[i]);
    }
    if (fchown(fd, uid, gid) < 0 || fchmod(fd, 0700) < 0)
        return rf_error_set(err, errno, "instance: own %s", dir);
    return 0;
}

/* Split "SRC[:DEST]"; DEST is relative to the tree, without "..". */
static int split_spec(const char *spec, const char *default_dir, char **src, char **dest, rf_error **err)
{
    const char *colon = strchr(spec, ':');
    *src = colon ? strndup(spec, (size_t)(colon - spec)) : strdup(spec);
    const char *base = strrchr(*src ? *src : "", '/');
    base = base ? base + 1 : *src;
    if (colon)
        *dest = strdup(colon + 1);
    else if (asprintf(dest, "%s/%s", default_dir, base ? base : "") < 0)
        *dest = NULL;
    if (!*src || !*dest)
        return rf_error_set(err, ENOMEM, "instance");
    if ((*dest)[0] == '/' || !strcmp(*dest, "") || strstr(*dest, "..") || !**src || !base || !*base) {
        rf_error_set(err, EINVAL, "instance: %s: the destination must be a path inside the instance, "
                                  "without '..'", spec);
        return rf_error_hint_set(err, "write SRC or SRC:DEST, e.g. ~/.local/share/opencode/auth.json:"
                                      "data/opencode/auth.json");
    }
    return 0;
}

/* Open DEST's parent below the tree, creating directories (0700, owned by
 * the identity) without following any link. Returns the parent fd. */
static int open_parent(int tree, char *dest, const char **leaf, uid_t uid, gid_t gid)
{
    int fd = dup(tree);
    char *save = NULL, *part = strtok_r(dest, "/", &save), *next;
    while (fd >= 0 && part && (next = strtok_r(NULL, "/", &save))) {
        if (mkdirat(fd, part, 0700) == 0 && fchownat(fd, part, uid, gid, AT_SYMLINK_NOFOLLOW) < 0) {
            close(fd);
            return -1;
        }
        int sub = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = sub;
        part = next;
    }
    *leaf = part;
    return fd;
}

/* Copy an open regular file into dirfd/leaf through a temporary name and
 * rename: never a partial file, never a link. */
static int copy_into(int src, int dirfd, const char *leaf, mode_t mode, uid_t uid, gid_t gid)
{
    char tmp[NAME_MAX + 1];
    snprintf(tmp, sizeof tmp, ".rf-copy-%d", (int)getpid());
    int out = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
        return -1;
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = read(src, buf, sizeof buf)) != 0) {
        if (n < 0 || write(out, buf, (size_t)n) != n)
            rc = -1;
    }
    if (rc == 0 && (fchown(out, uid, gid) < 0 || fchmod(out, mode) < 0 || fsync(out) < 0))
        rc = -1;
    int e = errno;
    close(out);
    if (rc == 0 && renameat(dirfd, tmp, dirfd, leaf) < 0)
        rc = -1, e = errno;
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    errno = e;
    return rc;
}

int rf_instance_copy_credential(const char *dir, const char *spec, uid_t uid, gid_t gid, rf_error **err)
{
    _cleanup_free_ char *src = NULL, *dest = NULL;
    if (split_spec(spec, "data", &src, &dest, err) < 0)
        return -1;
    /* The source is the user's secret: it must be a plain file that only
     * its owner can change, or the copy may not be what the user thinks. */
    _cleanup_close_ int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (in < 0 && errno == ELOOP) {
        rf_error_set(err, ELOOP, "instance: credential %s is a symbolic link", src);
        return rf_error_hint_set(err, "give the file itself (realpath %s), so what is copied is what you meant", src);
    }
    if (in < 0)
        return rf_error_set(err, errno, "instance: credential %s", src);
    if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
        rf_error_set(err, EINVAL, "instance: credential %s is not a regular file", src);
        return rf_error_hint_set(err, "a credential is a file such as auth.json");
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        rf_error_set(err, EPERM, "instance: credential %s is writable by others (mode %04o)", src,
                     (unsigned)(st.st_mode & 07777));
        return rf_error_hint_set(err, "chmod go-w %s first: anyone who can write it chooses what the instance "
                                      "is given", src);
    }
    _cleanup_close_ int tree = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const char *leaf = NULL;
    _cleanup_close_ int parent = tree < 0 ? -1 : open_parent(tree, dest, &leaf, uid, gid);
    if (parent < 0 || !leaf || copy_into(in, parent, leaf, 0600, uid, gid) < 0)
        return rf_error_set(err, errno, "instance: copy credential %s into %s", src, dir);
    return 0;
}

static int copy_dir(int src, int dst, uid_t uid, gid_t gid, const char *where, rf_error **err);

/* One entry of a --copy: files keep their permission bits without the
 * set-id and sticky bits; directories recurse; links and devices are
 * refused (a link would lead the instance outside). */
static int copy_entry(int sdir, int ddir, const char *name, uid_t uid, gid_t gid, const char *where, rf_error **err)
{
    struct stat st;
    if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return rf_error_set(err, errno, "instance: copy %s/%s", where, name);
    mode_t mode = st.st_mode & 0777;
    if (S_ISREG(st.st_mode)) {
        _cleanup_close_ int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0 || copy_into(in, ddir, name, mode, uid, gid) < 0)
            return rf_error_set(err, errno, "instance: copy %s/%s", where, name);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        rf_error_set(err, EINVAL, "instance: copy %s/%s: not a file or directory (links are not copied)", where,
                     name);
        return rf_error_hint_set(err, "copy what the link points to instead");
    }
    if (mkdirat(ddir, name, 0700) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "instance: copy %s/%s", where, name);
    _cleanup_close_ int s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    _cleanup_close_ int d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s < 0 || d < 0 || fchown(d, uid, gid) < 0 || fchmod(d, mode | 0700) < 0)
        return rf_error_set(err, errno, "instance: copy %s/%s", where, name);
    return copy_dir(s, d, uid, gid, where, err);
}

static int copy_dir(int src, int dst, uid_t uid, gid_t gid, const char *where, rf_error **err)
{
    int fd = dup(src);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return rf_error_set(err, errno, "instance: copy %s", where);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = copy_entry(src, dst, e->d_name, uid, gid, where, err);
    closedir(d);
    return rc;
}

int rf_instance_copy_tree(const char *dir, const char *spec, uid_t uid, gid_t gid, rf_error **err)
{
    _cleanup_free_ char *src = NULL, *dest = NULL;
    if (split_spec(spec, ".", &src, &dest, err) < 0)
        return -1;
    _cleanup_free_ char *sdir = strdup(src);
    char *slash = sdir ? strrchr(sdir, '/') : NULL;
    const char *sname = slash ? slash + 1 : src;
    if (slash)
        *(slash == sdir ? slash + 1 : slash) = '\0';
    _cleanup_close_ int sparent = open(slash ? sdir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    _cleanup_close_ int tree = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const char *leaf = NULL;
    _cleanup_free_ char *d2 = strdup(dest);
    _cleanup_close_ int dparent = tree < 0 || !d2 ? -1 : open_parent(tree, d2, &leaf, uid, gid);
    if (sparent < 0 || dparent < 0 || !leaf)
        return rf_error_set(err, errno ? errno : ENOENT, "instance: copy %s", spec);
    if (strcmp(sname, leaf) == 0)
        return copy_entry(sparent, dparent, sname, uid, gid, src, err);
    /* A different name at the destination: copy, then rename into place. */
    struct stat st;
    if (fstatat(sparent, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return rf_error_set(err, errno, "instance: copy %s", src);
    if (S_ISREG(st.st_mode)) {
        _cleanup_close_ int in = openat(sparent, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0 || copy_into(in, dparent, leaf, st.st_mode & 0777, uid, gid) < 0)
            return rf_error_set(err, errno, "instance: copy %s", src);
        return 0;
    }
    if (copy_entry(sparent, dparent, sname, uid, gid, src, err) < 0)
        return -1;
    if (renameat(dparent, sname, dparent, leaf) < 0)
        return rf_error_set(err, errno, "instance: copy %s to %s", src, dest);
    return 0;
}

/* Every symlink in the tree must resolve inside it (seed 002's check):
 * one planted by the sandbox that points outside would lead the next
 * reader (a backup, an editor, ringfence itself) out of the instance. */
static int scan(int dfd, const char *dir, const char *path, rf_error **err)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return rf_error_set(err, errno, "instance: check %s", path);
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        _cleanup_free_ char *p = NULL;
        if (asprintf(&p, "%s/%s", path, e->d_name) < 0)
            rc = rf_error_set(err, ENOMEM, "instance");
        struct stat st;
        if (rc == 0 && fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* gone meanwhile */
        if (rc == 0 && S_ISLNK(st.st_mode)) {
            _cleanup_free_ char *real = realpath(p, NULL);
            if (!real || !rf_path_is_beneath(real, dir)) {
                rf_error_set(err, EXDEV, "instance: %s is a symbolic link that leads outside the instance (%s)", p,
                             real ? real : "dangling");
                rc = rf_error_hint_set(err, "remove it; nothing in an instance may point outside it");
            }
        } else if (rc == 0 && S_ISDIR(st.st_mode)) {
            _cleanup_close_ int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                rc = scan(sub, dir, p, err);
        }
    }
    closedir(d);
    return rc;
}

int rf_instance_check_links(const char *dir, rf_error **err)
{
    _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return rf_error_set(err, errno, "instance: open %s", dir);
    return scan(fd, dir, dir, err);
}

static int remove_at(int parent, const char *name)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && remove_at(dirfd(d), e->d_name) < 0)
            rc = -1;
    closedir(d);
    return rc < 0 ? -1 : unlinkat(parent, name, AT_REMOVEDIR);
}

int rf_instance_remove_tree(const char *path)
{
    _cleanup_free_ char *copy = strdup(path);
    char *slash = copy ? strrchr(copy, '/') : NULL;
    if (!slash || !slash[1])
        return -1;
    *slash = '\0';
    _cleanup_close_ int parent = open(*copy ? copy : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = parent < 0 ? -1 : remove_at(parent, slash + 1);
    /* A tree of an instance with a subordinate id of its own: the caller
     * may delete it only as 0 of a namespace where that id is mapped. */
    if (rc < 0 && (errno == EACCES || errno == EPERM) && geteuid() != 0) {
        int e = errno;
        if ((rc = rf_subid_remove_tree(path)) < 0)
            errno = e; /* no range, or it failed too: the first reason counts */
    }
    return rc;
}
