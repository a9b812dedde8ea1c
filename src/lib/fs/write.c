/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* write, append, edit. Writes never lose data:
 *  - write and edit build the new file beside the old one (O_TMPFILE, else
 *    a random name, in the same directory fd), fsync it, and rename it over
 *    the target: readers see the old file or the new one, and any failure
 *    before the rename leaves the old file untouched and no temp file.
 *  - append writes with O_APPEND to the existing inode, because it must
 *    keep what a replace would drop (hard links, other writers' open fds,
 *    ownership, xattrs) and cost O(appended bytes); a failed write is undone
 *    by truncating back to the old size. */
#include "fs/fs-internal.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static void temp_name(char *buf, size_t size, const char *base)
{
    static unsigned long long counter;
    unsigned long long r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = ((unsigned long long)time(NULL) << 20) ^ (unsigned long long)getpid() ^ ++counter;
    /* Hidden, recognisable, and short enough for NAME_MAX. */
    snprintf(buf, size, ".%.64s.rf-%016llx", base, r);
}

/* A temp file in t's directory: anonymous (O_TMPFILE: nothing to clean up
 * after a crash) unless the filesystem or the caller says otherwise. */
static int open_temp(rf_fs *fs, const rf_fs_target *t, mode_t mode, bool anon, char *name, size_t size)
{
    name[0] = '\0';
    if (anon)
        return openat(t->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    for (int i = 0; i < 16; i++) {
        temp_name(name, size, t->base);
        int fd = openat(t->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Give an anonymous temp file a name, so it can be renamed over the target. */
static int link_temp(const rf_fs_target *t, int fd, char *name, size_t size)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    for (int i = 0; i < 16; i++) {
        temp_name(name, size, t->base);
        /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc works for everyone. */
        if (linkat(fd, "", t->dirfd, name, AT_EMPTY_PATH) == 0 ||
            linkat(AT_FDCWD, proc, t->dirfd, name, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    name[0] = '\0';
    return -1;
}

/* Owner (when root), mode, then data to disk. chown before chmod: chown
 * clears the set-id bits that chmod then restores. */
static int finish_temp(const rf_fs_target *t, int fd)
{
    if (!t->exists)
        return fsync(fd);
    if (geteuid() == 0 && fchown(fd, t->st.st_uid, t->st.st_gid) < 0)
        return -1;
    if (fchmod(fd, t->st.st_mode & 07777) < 0)
        return -1;
    return fsync(fd);
}

static bool unchanged(const rf_fs_target *t, const struct stat *expect)
{
    struct stat now;
    return fstatat(t->dirfd, t->base, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == expect->st_dev &&
           now.st_ino == expect->st_ino && now.st_size == expect->st_size &&
           now.st_mtim.tv_sec == expect->st_mtim.tv_sec && now.st_mtim.tv_nsec == expect->st_mtim.tv_nsec;
}

/* One attempt; returns 1 to ask for a retry with a named temp file. */
static int replace_once(rf_fs *fs, const rf_fs_target *t, bool anon, const char *data, size_t len,
                        const struct stat *expect, const char *user_path, rf_error **err)
{
    char name[128];
    mode_t mode = t->exists ? 0600 : 0666; /* new files: 0666 & ~umask */
    _cleanup_close_ int fd = open_temp(fs, t, mode, anon, name, sizeof name);
    if (fd < 0 && anon && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
        return 1; /* no O_TMPFILE on this filesystem */
    if (fd < 0)
        return rf_fs_fail(err, errno, "cannot create a temporary file beside %s", user_path);
    int rc = -1, e = 0;
    const char *why = "";
    if (rf_write_all(fd, data, len) < 0)
        why = "cannot write";
    else if (finish_temp(t, fd) < 0)
        why = "cannot sync (or keep the mode and owner of)";
    else if (anon && link_temp(t, fd, name, sizeof name) < 0)
        rc = 1; /* no usable /proc and no CAP_DAC_READ_SEARCH */
    else if (expect && !unchanged(t, expect))
        why = NULL; /* below */
    else if (renameat(t->dirfd, name, t->dirfd, t->base) < 0)
        why = "cannot rename a temporary file over";
    else
        rc = 0;
    e = errno;
    if (rc != 0 && name[0])
        unlinkat(t->dirfd, name, 0);
    if (rc < 0 && !why)
        return rf_fs_fail(err, 0, "%s changed while being edited; nothing was replaced, retry", user_path);
    if (rc < 0)
        return rf_fs_fail(err, e, "%s %s", why, user_path);
    if (rc == 0)
        (void)fsync(t->dirfd); /* best effort: the rename is done either way */
    return rc;
}

int rf_fs_replace(rf_fs *fs, const rf_fs_target *t, const char *data, size_t len, const struct stat *expect,
                  const char *user_path, rf_error **err)
{
    /* Renaming over a file ignores its own permissions; honour them, as an
     * in-place write would (root passes, as it would). */
    if (t->exists && faccessat(t->dirfd, t->base, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0)
        return rf_fs_fail(err, errno, "cannot write %s", user_path);
    int rc = 1;
    if (!fs->no_tmpfile)
        rc = replace_once(fs, t, true, data, len, expect, user_path, err);
    if (rc == 1)
        rc = replace_once(fs, t, false, data, len, expect, user_path, err);
    return rc;
}

static int check_regular(const rf_fs_target *t, const char *path, rf_error **err)
{
    if (!t->exists || S_ISREG(t->st.st_mode))
        return 0;
    if (S_ISDIR(t->st.st_mode))
        return rf_fs_fail(err, 0, "is a directory: %s", path);
    return rf_fs_fail(err, 0, "not a regular file: %s", path);
}

static int check_size(size_t len, const char *path, rf_error **err)
{
    if (len <= RF_FS_MAX_WRITE)
        return 0;
    return rf_fs_fail(err, 0, "content too large for %s: %zu bytes, at most %d", path, len, RF_FS_MAX_WRITE);
}

RF_EXPORT int rf_fs_write(rf_fs *fs, const char *path, const char *data, size_t len, rf_error **err)
{
    if (!fs || (!data && len))
        return rf_fs_fail(err, EINVAL, "write");
    if (rf_fs_tool_enabled(fs, "write_file", err) < 0)
        return -1;
    if (check_size(len, path, err) < 0)
        return -1;
    rf_fs_target t;
    if (rf_fs_target_open(fs, path, true, &t, err) < 0)
        return -1;
    int rc = check_regular(&t, path, err);
    if (rc == 0)
        rc = rf_fs_replace(fs, &t, data ? data : "", len, NULL, path, err);
    if (rc < 0)
        rf_fs_target_undo_parents(&t); /* a full disk leaves no empty parents */
    rf_fs_target_clear(&t);
    return rc;
}

/* Open the append target: the existing inode that was checked (refusing a
 * swap since), or a new file created by name in the checked directory. */
static int open_append(const rf_fs_target *t, bool *created)
{
    *created = !t->exists;
    if (!t->exists)
        return openat(t->dirfd, t->base, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    int fd = openat(t->dirfd, t->base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != t->st.st_dev || st.st_ino != t->st.st_ino)) {
        close(fd);
        errno = EAGAIN;
        return -1;
    }
    return fd;
}

static int append_data(int fd, bool created, const rf_fs_target *t, const char *data, size_t len,
                       const char *path, rf_error **err)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return rf_fs_fail(err, errno, "cannot stat %s", path);
    if (rf_write_all(fd, data, len) == 0 && fsync(fd) == 0)
        return 0;
    int e = errno;
    /* Undo: what was there stays, the partial tail goes. */
    if (created)
        unlinkat(t->dirfd, t->base, 0);
    else if (ftruncate(fd, st.st_size) < 0)
        return rf_fs_fail(err, e, "cannot append to %s (and truncating back to %lld bytes failed)", path,
                          (long long)st.st_size);
    return rf_fs_fail(err, e, "cannot append to %s", path);
}

RF_EXPORT int rf_fs_append(rf_fs *fs, const char *path, const char *data, size_t len, rf_error **err)
{
    if (!fs || (!data && len))
        return rf_fs_fail(err, EINVAL, "append");
    if (rf_fs_tool_enabled(fs, "append_file", err) < 0)
        return -1;
    if (check_size(len, path, err) < 0)
        return -1;
    for (int attempt = 0; attempt < 4; attempt++) {
        rf_fs_target t;
        if (rf_fs_target_open(fs, path, true, &t, err) < 0)
            return -1;
        bool created = false;
        int fd = -1, rc = check_regular(&t, path, err);
        if (rc == 0)
            fd = open_append(&t, &created);
        /* Raced with another writer (created, replaced, swapped): again. */
        if (rc == 0 && fd < 0 && (errno == EEXIST || errno == EAGAIN || errno == ELOOP || errno == ENOENT)) {
            rf_fs_target_clear(&t);
            continue;
        }
        if (rc == 0 && fd < 0)
            rc = rf_fs_fail(err, errno, "cannot open %s for appending", path);
        if (rc == 0)
            rc = append_data(fd, created, &t, data ? data : "", len, path, err);
        if (fd >= 0)
            close(fd);
        if (rc < 0)
            rf_fs_target_undo_parents(&t);
        rf_fs_target_clear(&t);
        return rc;
    }
    return rf_fs_fail(err, 0, "%s kept changing while being opened; retry", path);
}

/* Count the places old occurs (overlapping ones too: "aa" in "aaa" is
 * ambiguous) and remember the first. */
static size_t count_occurrences(const char *hay, size_t n, const char *needle, size_t m, size_t *first)
{
    size_t count = 0;
    for (const char *p = hay; (size_t)(p - hay) + m <= n;) {
        const char *hit = memmem(p, n - (size_t)(p - hay), needle, m);
        if (!hit)
            break;
        if (count++ == 0)
            *first = (size_t)(hit - hay);
        p = hit + 1;
    }
    return count;
}

static int read_whole(int fd, char **out, size_t *len, const char *path, rf_error **err)
{
    size_t cap = 65536, n = 0;
    _cleanup_free_ char *buf = malloc(cap);
    if (!buf)
        return rf_fs_fail(err, ENOMEM, "read %s", path);
    for (;;) {
        if (n == cap) {
            if (cap > RF_FS_MAX_WRITE)
                return rf_fs_fail(err, 0, "file too large to edit: %s is more than %d bytes", path, RF_FS_MAX_WRITE);
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                return rf_fs_fail(err, ENOMEM, "read %s", path);
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return rf_fs_fail(err, errno, "cannot read %s", path);
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = steal_ptr(&buf);
    *len = n;
    return 0;
}

static int edit_content(const char *buf, size_t n, const char *old_text, const char *new_text, char **out,
                        size_t *out_len, const char *path, rf_error **err)
{
    size_t m = strlen(old_text), k = strlen(new_text), first = 0;
    size_t count = count_occurrences(buf, n, old_text, m, &first);
    if (count == 0) {
        rf_fs_fail(err, 0, "old text not found in %s", path);
        return rf_error_hint_set(err, "read the file again: the old text must match exactly, whitespace included");
    }
    if (count > 1) {
        rf_fs_fail(err, 0, "old text occurs %zu times in %s; it must occur exactly once", count, path);
        return rf_error_hint_set(err, "include more of the surrounding lines in the old text to make it unique");
    }
    if (check_size(n - m + k, path, err) < 0)
        return -1;
    char *res = malloc(n - m + k + 1);
    if (!res)
        return rf_fs_fail(err, ENOMEM, "edit %s", path);
    memcpy(res, buf, first);
    memcpy(res + first, new_text, k);
    memcpy(res + first + k, buf + first + m, n - first - m);
    *out = res;
    *out_len = n - m + k;
    return 0;
}

static int edit_target(rf_fs *fs, const rf_fs_target *t, const char *old_text, const char *new_text,
                       const char *path, rf_error **err)
{
    if (!t->exists)
        return rf_fs_fail(err, 0, "file not found: %s", path);
    if (check_regular(t, path, err) < 0)
        return -1;
    _cleanup_close_ int fd = openat(t->dirfd, t->base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return rf_fs_fail_open(err, errno, path);
    if (st.st_dev != t->st.st_dev || st.st_ino != t->st.st_ino)
        return rf_fs_fail(err, 0, "%s changed while being opened; retry", path);
    _cleanup_free_ char *buf = NULL, *res = NULL;
    size_t n = 0, res_len = 0;
    if (read_whole(fd, &buf, &n, path, err) < 0 ||
        edit_content(buf, n, old_text, new_text, &res, &res_len, path, err) < 0)
        return -1;
    /* st: replace only if the file is still exactly what was read. */
    return rf_fs_replace(fs, t, res, res_len, &st, path, err);
}

RF_EXPORT int rf_fs_edit(rf_fs *fs, const char *path, const char *old_text, const char *new_text, rf_error **err)
{
    if (!fs || !new_text)
        return rf_fs_fail(err, EINVAL, "edit");
    if (rf_fs_tool_enabled(fs, "edit_file", err) < 0)
        return -1;
    if (!old_text || !*old_text)
        return rf_fs_fail(err, 0, "edit %s: the old text is empty", path ? path : "");
    if (strlen(old_text) > RF_FS_MAX_WRITE || strlen(new_text) > RF_FS_MAX_WRITE)
        return rf_fs_fail(err, 0, "edit %s: old or new text larger than %d bytes", path ? path : "", RF_FS_MAX_WRITE);
    rf_fs_target t;
    if (rf_fs_target_open(fs, path, false, &t, err) < 0)
        return -1;
    int rc = edit_target(fs, &t, old_text, new_text, path, err);
    rf_fs_target_clear(&t);
    return rc;
}
