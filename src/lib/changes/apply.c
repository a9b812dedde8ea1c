/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_session_apply: the session's changes into the real workspace.
 *
 *  1. conflicts: a real file whose ctime is after the session began
 *     was changed on the host meanwhile; it is listed and left alone
 *     (unless force). ctime, not mtime: utimes() can fake an mtime, not a
 *     ctime. Checked again right before each rename.
 *  2. deletions, children before their directory;
 *  3. new directories, parents first, modes without set-id bits;
 *  4. files and symlinks, each written to a temporary file beside its
 *     target, made durable, renamed over it: the real file is old or new,
 *     never half written (a full disk, SIGKILL). Set-id bits are never
 *     written. By batches: up to BATCH temporary files are written, made
 *     durable together by one syncfs, then renamed; a final syncfs makes
 *     the renames durable. A file that can go into place as it is (the
 *     same mount, one link, no extended attribute but overlayfs' own) is
 *     renamed from the upper layer itself instead of copied, made what a
 *     copy would be first (prepare_move, commit_move). One syncfs instead
 *     of an fsync each: on ext4 every fsync ends in a disk cache flush
 *     even when the journal commit it needed was already made, and 1,000
 *     flushes took seconds where two took a fraction of one
 *     (bench/changes.sh). The guarantee is the same: no rename before its
 *     file's data is on disk.
 *
 * Every real path is opened beneath the workspace's fd with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: a symlink anywhere on the way
 * (planted in the upper layer, or swapped in on the host meanwhile) fails
 * that change instead of being followed. Each applied change leaves the
 * upper layer, so an interrupted apply finishes when run again. */
#include "changes/changes.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* The directory the last path was in, kept open: changes come sorted, so
 * runs of them share one, and each openat2 costs a path walk. Emptied
 * between phases, where directories are removed and made. */
typedef struct dircache {
    char *dir;
    int fd;
    bool have_st; /* st and mnt below, taken once per directory */
    struct stat st;
    uint64_t mnt;
} dircache;

typedef struct applier {
    dircache wsdir, updir;
    int ws_sync; /* the workspace, O_RDONLY: syncfs needs a real fd */
    rf_session *s;
    int ws, upper;
    bool force;
    rf_apply_report *rep;
    char **only;
    bool *done; /* per change: applied, or nothing left to do */
    uid_t uid;  /* ours, and whether we may give a file a group: */
    gid_t gid;  /* taken once, not per file */
    gid_t *groups;
    int n_groups;
} applier;

/* The parent directory of rel beneath root (O_RDONLY, for fsync and
 * *at calls) and rel's last component. */
static int open_parent(int root, const char *rel, const char **base)
{
    const char *slash = strrchr(rel, '/');
    *base = slash ? slash + 1 : rel;
    if (!slash)
        return rf_changes_open_beneath(root, ".", O_RDONLY | O_DIRECTORY);
    _cleanup_free_ char *dir = strndup(rel, (size_t)(slash - rel));
    return dir ? rf_changes_open_beneath(root, dir, O_RDONLY | O_DIRECTORY) : -1;
}

static void cache_clear(dircache *dc)
{
    free(dc->dir);
    if (dc->fd >= 0)
        close(dc->fd);
    dc->dir = NULL;
    dc->fd = -1;
    dc->have_st = false;
}

/* The parent directory of rel beneath root, borrowed from the cache. */
static int parent(dircache *dc, int root, const char *rel, const char **base)
{
    const char *slash = strrchr(rel, '/');
    size_t len = slash ? (size_t)(slash - rel) : 0;
    *base = slash ? slash + 1 : rel;
    if (dc->dir && dc->fd >= 0 && strlen(dc->dir) == len && !memcmp(dc->dir, rel, len))
        return dc->fd;
    cache_clear(dc);
    if (!(dc->dir = strndup(rel, len)))
        return -1;
    const char *b;
    dc->fd = open_parent(root, rel, &b);
    return dc->fd;
}

static bool after_began(const applier *ap, const struct stat *st)
{
    const struct timespec *b = &ap->s->began;
    return st->st_ctim.tv_sec > b->tv_sec || (st->st_ctim.tv_sec == b->tv_sec && st->st_ctim.tv_nsec > b->tv_nsec);
}

/* Changed on the host since the session began? 1 yes, 0 no (or absent),
 * -1 with errno when the path cannot be looked at safely. base in dir: a
 * parent opened beneath the workspace with no symlink on the way
 * (parent()), so one fstatat, not a walk from the workspace's root for
 * each file. The last component is not followed; a symlink there is
 * refused (ELOOP), as RESOLVE_NO_SYMLINKS refuses it. */
static int changed_since_at(const applier *ap, int dir, const char *base)
{
    struct stat st;
    if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -1;
    if (S_ISLNK(st.st_mode))
        return errno = ELOOP, -1;
    return after_began(ap, &st);
}

/* The same for a path relative to the workspace (its parent cached). */
static int changed_since(applier *ap, const char *rel)
{
    const char *base;
    int dir = parent(&ap->wsdir, ap->ws, rel, &base);
    if (dir < 0)
        return errno == ENOENT ? 0 : -1;
    return changed_since_at(ap, dir, base);
}


static bool selected(const applier *ap, const rf_change *c)
{
    if (!ap->only)
        return true;
    for (size_t i = 0; ap->only[i]; i++)
        if (!*ap->only[i] || rf_path_is_beneath(c->path, ap->only[i]) ||
            (c->old_path && rf_path_is_beneath(c->old_path, ap->only[i])))
            return true;
    return false;
}

/* Remove what an applied change leaves in the upper layer, so the merged
 * view stays the same (the real file now says it) and a rerun skips it. */
static void forget(applier *ap, const char *rel, bool whiteout_only)
{
    const char *base;
    int dir = parent(&ap->updir, ap->upper, rel, &base);
    struct stat st;
    if (dir < 0 || fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
        return;
    if (!whiteout_only || rf_changes_is_whiteout(&st))
        unlinkat(dir, base, 0);
}

static int delete_one(applier *ap, const rf_change *c, const char *rel)
{
    const char *base;
    int dir = parent(&ap->wsdir, ap->ws, rel, &base);
    if (dir < 0)
        return errno == ENOENT ? 0 : -1;
    if (unlinkat(dir, base, c->type == 'd' ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
        return -1;
    forget(ap, rel, true);
    return 0;
}

/* A name for the temporary file beside the target, with the session's id
 * in it, so a rerun after a SIGKILL finds its own leftovers (sweep). */
#define TEMP_MAX (16 + RF_SESSION_ID_MAX + 16)
static void temp_name(const applier *ap, char out[TEMP_MAX])
{
    unsigned char r[6] = { 0 };
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        memset(r, 0x5a, sizeof r);
    snprintf(out, TEMP_MAX, ".rf-apply-%s-%02x%02x%02x%02x%02x%02x", ap->s->id, r[0], r[1], r[2], r[3], r[4],
             r[5]);
}

/* Remove what an apply of this session killed midway left in dirfd: its
 * temporary files (never a directory, never anything else's). */
static void sweep(const applier *ap, int dirfd)
{
    char prefix[TEMP_MAX];
    int n = snprintf(prefix, sizeof prefix, ".rf-apply-%s-", ap->s->id);
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *de; (de = readdir(d));)
        if (!strncmp(de->d_name, prefix, (size_t)n) && de->d_type != DT_DIR)
            unlinkat(dirfd, de->d_name, 0);
    closedir(d);
}

static int copy_fd(int in, int out)
{
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n == 0)
            return 0;
        if (n > 0)
            continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
            return -1;
        break; /* across filesystems on an old kernel: read and write */
    }
    char buf[65536];
    for (ssize_t n; (n = read(in, buf, sizeof buf)) != 0;) {
        if (n < 0 || write(out, buf, (size_t)n) != n)
            return n < 0 ? -1 : (errno = errno ? errno : EIO, -1);
    }
    return 0;
}

/* The new content into a temporary file in dir: a copy of the upper
 * file (its fd in *ret_fd, for the fsync), or a symlink with its text. */
static int write_temp(applier *ap, const rf_change *c, int dir, const char *tmp, int *ret_fd)
{
    if (c->type == 'l') {
        char text[RF_CHANGES_MAX_PATH];
        _cleanup_close_ int l = rf_changes_open_beneath(ap->upper, c->path, O_PATH);
        ssize_t n = l >= 0 ? readlinkat(l, "", text, sizeof text - 1) : -1;
        if (n < 0)
            return -1;
        text[n] = '\0';
        return symlinkat(text, dir, tmp);
    }
    _cleanup_close_ int in = rf_changes_open_beneath(ap->upper, c->path, O_RDONLY | O_NONBLOCK);
    struct stat st;
    if (in < 0 || fstat(in, &st) < 0)
        return -1;
    if (!S_ISREG(st.st_mode))
        return errno = EINVAL, -1;
    int out = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
        return -1;
    /* Set-id bits are never applied: the session's command chose them. */
    if (copy_fd(in, out) < 0 || fchmod(out, st.st_mode & 0777) < 0) {
        int e = errno;
        close(out);
        unlinkat(dir, tmp, 0);
        errno = e;
        return -1;
    }
    *ret_fd = out;
    return 0;
}

#define BATCH 512 /* temporary files open at once */

/* Only overlayfs' own extended attributes (its origin record), which are
 * then removed: any other (an ACL, a user.* the command set) means a
 * copy, which carries none. */
static bool strip_overlay_xattrs(int fd)
{
    char names[1024];
    ssize_t n = flistxattr(fd, names, sizeof names);
    if (n < 0)
        return false;
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
        if (strncmp(names + i, "user.overlay.", 13) && strncmp(names + i, "trusted.overlay.", 16))
            return false;
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
        if (fremovexattr(fd, names + i) < 0)
            return false;
    return true;
}

static uint64_t mount_id(int fd)
{
    struct statx sx;
    return statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID) ? sx.stx_mnt_id
                                                                                              : 0;
}

/* The cached workspace directory's stat and mount id (the one parent()
 * returned last), taken once for the run of changes in it. */
static const struct stat *wsdir_stat(applier *ap, uint64_t *mnt)
{
    dircache *dc = &ap->wsdir;
    if (!dc->have_st) {
        if (dc->fd < 0 || fstat(dc->fd, &dc->st) < 0)
            return NULL;
        dc->mnt = mount_id(dc->fd);
        dc->have_st = true;
    }
    if (mnt)
        *mnt = dc->mnt;
    return &dc->st;
}

static bool may_chgrp(const applier *ap, gid_t gid)
{
    if (ap->uid == 0 || gid == ap->gid)
        return true;
    for (int i = 0; i < ap->n_groups; i++)
        if (ap->groups[i] == gid)
            return true;
    return false;
}

/* The group a new file gets in dir: the directory's with set-gid, else
 * ours. */
static gid_t new_file_group(const applier *ap, const struct stat *d)
{
    return d->st_mode & S_ISGID ? d->st_gid : ap->gid;
}

/* One rename instead of a copy: the upper file itself goes into place,
 * where that changes nothing but the work (a create, a copy and an unlink
 * of the upper entry fewer, bench/changes.sh): the same mount, one link
 * (a hard link of the upper layer stays a copy), no extended attribute
 * but overlayfs' own, ours or ours to take (a root caller's sandbox made
 * it as its own user). Right before its rename it is made what a copy
 * would be (commit_move). false: copy it. */
static bool prepare_move(applier *ap, int in, const struct stat *st)
{
    uint64_t dmnt = 0, mnt;
    const struct stat *d = wsdir_stat(ap, &dmnt);
    return S_ISREG(st->st_mode) && st->st_nlink == 1 && d && d->st_dev == st->st_dev &&
           (st->st_uid == ap->uid || ap->uid == 0) && may_chgrp(ap, new_file_group(ap, d)) &&
           (mnt = mount_id(in)) != 0 && mnt == dmnt && strip_overlay_xattrs(in);
}

/* The new content beside the target, under the name tmp (*fd: the file,
 * -1 for a symlink); or, *moved, the upper file made ready to be renamed
 * into place (tmp unused). */
static int stage_one(applier *ap, const rf_change *c, char tmp[TEMP_MAX], int *fd, bool *moved)
{
    const char *base;
    int dir = parent(&ap->wsdir, ap->ws, c->path, &base);
    *fd = -1;
    *moved = false;
    if (dir < 0)
        return -1;
    if (c->type == 'f') {
        int in = rf_changes_open_beneath(ap->upper, c->path, O_RDONLY | O_NONBLOCK);
        struct stat st;
        if (in >= 0 && fstat(in, &st) == 0 && prepare_move(ap, in, &st)) {
            *fd = in; /* closed after the batch's syncfs, like a temporary file */
            *moved = true;
            return 0;
        }
        if (in >= 0)
            close(in);
    }
    temp_name(ap, tmp);
    return write_temp(ap, c, dir, tmp, fd);
}

/* After the batch's syncfs: the upper file renamed over the target. 0
 * applied, 1 conflict, -1 failed; the upper file stays in the session
 * unless applied. fd: the upper file, open since stage_one. */
static int commit_move(applier *ap, const rf_change *c, int fd)
{
    const char *base, *ubase;
    int dir = parent(&ap->wsdir, ap->ws, c->path, &base);
    int udir = dir < 0 ? -1 : parent(&ap->updir, ap->upper, c->path, &ubase);
    if (udir < 0)
        return -1;
    int changed = ap->force ? 0 : changed_since_at(ap, dir, base);
    if (changed != 0)
        return changed < 0 ? -1 : 1;
    /* What a copy would be: ours, the directory's new-file group, no
     * set-id bits (chown drops them too), its times now. Not before the
     * conflict check: a conflicting file stays in the session as the
     * command left it, its own to change when the session goes on. On the
     * fd (no path walk each), which must still be the entry renamed: the
     * upper layer is the locked session's, but a check costs one fstatat. */
    struct stat st, at;
    const struct stat *d = wsdir_stat(ap, NULL);
    if (!d || fstat(fd, &st) < 0 || fstatat(udir, ubase, &at, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
        at.st_ino != st.st_ino || at.st_dev != st.st_dev)
        return -1;
    gid_t gid = new_file_group(ap, d);
    if ((st.st_uid != ap->uid || st.st_gid != gid) && fchown(fd, ap->uid, gid) < 0)
        return -1;
    /* chmod only for bits beyond 0777 (set-id, sticky): the rest is kept. */
    if (((st.st_mode & 07000) && fchmod(fd, st.st_mode & 0777) < 0) || futimens(fd, NULL) < 0)
        return -1;
    return renameat(udir, ubase, dir, base) < 0 ? -1 : 0;
}

/* After the batch's syncfs: rename tmp over the target. 0 applied, 1
 * conflict (raced with the host), -1 failed. */
static int commit_one(applier *ap, const rf_change *c, const char *tmp)
{
    const char *base;
    int dir = parent(&ap->wsdir, ap->ws, c->path, &base);
    if (dir < 0)
        return -1;
    int changed = ap->force ? 0 : changed_since_at(ap, dir, base);
    if (changed != 0) {
        unlinkat(dir, tmp, 0);
        return changed < 0 ? -1 : 1;
    }
    if (renameat(dir, tmp, dir, base) < 0) {
        int e = errno;
        unlinkat(dir, tmp, 0);
        errno = e;
        return -1;
    }
    forget(ap, c->path, false);
    return 0;
}

static int make_dir(applier *ap, const rf_change *c)
{
    const char *base;
    int dir = parent(&ap->wsdir, ap->ws, c->path, &base);
    if (dir < 0)
        return -1;
    mode_t mode = c->new_mode & 01777; /* never set-id */
    if (mkdirat(dir, base, mode) < 0 && errno != EEXIST)
        return -1;
    _cleanup_close_ int fd = rf_changes_open_beneath(dir, base, O_RDONLY | O_DIRECTORY);
    return fd < 0 || fchmod(fd, mode) < 0 ? -1 : 0;
}

/* Phase 1: what may be applied. Conflicts and refusals are reported
 * here and marked done, so the phases below skip them. */
static int check_all(applier *ap, const rf_changeset *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        const rf_change *c = &cs->v[i];
        if (!selected(ap, c)) {
            ap->done[i] = true;
            continue;
        }
        char ***list = NULL;
        if (c->kind == RF_CHANGE_REFUSED) {
            list = &ap->rep->refused;
        } else if (c->type != 'd' && !ap->force) {
            /* A directory's ctime moves with every entry made in it:
             * only its files and links can conflict. */
            int a = changed_since(ap, c->path), b = c->old_path ? changed_since(ap, c->old_path) : 0;
            if (a < 0 || b < 0)
                list = &ap->rep->failed; /* e.g. a symlink on the way (ELOOP) */
            else if (a || b)
                list = &ap->rep->conflicts;
        }
        if (list) {
            ap->done[i] = true;
            if (rf_strv_push(list, c->path) < 0)
                return -1;
        }
    }
    return 0;
}

static int record(applier *ap, int rc, const char *path)
{
    char ***list = rc == 0 ? &ap->rep->applied : rc == 1 ? &ap->rep->conflicts : &ap->rep->failed;
    return rf_strv_push(list, path);
}

typedef struct staged {
    size_t i;
    char tmp[TEMP_MAX];
    int fd;
    bool moved; /* the upper file itself, no temporary file */
} staged;

static int commit_batch(applier *ap, const rf_changeset *cs, staged *b, size_t n)
{
    /* Every temporary file on disk first, then every rename. */
    bool *durable = calloc(n + 1, sizeof *durable);
    if (!durable)
        return -1;
    bool synced = n == 0 || syncfs(ap->ws_sync) == 0;
    for (size_t k = 0; k < n; k++) {
        durable[k] = synced;
        if (b[k].fd >= 0 && !b[k].moved) {
            close(b[k].fd);
            b[k].fd = -1;
        }
    }
    for (size_t k = 0; k < n; k++) {
        const rf_change *c = &cs->v[b[k].i];
        int rc = !durable[k] ? -1 : b[k].moved ? commit_move(ap, c, b[k].fd) : commit_one(ap, c, b[k].tmp);
        if (b[k].fd >= 0) /* a moved file's, kept for its commit */
            close(b[k].fd);
        if (!durable[k] && !b[k].moved) { /* not on disk: the old file stays */
            const char *base;
            int dir = parent(&ap->wsdir, ap->ws, c->path, &base);
            if (dir >= 0)
                unlinkat(dir, b[k].tmp, 0);
        }
        if (record(ap, rc, c->path) < 0) {
            for (size_t j = k + 1; j < n; j++)
                if (b[j].fd >= 0)
                    close(b[j].fd);
            free(durable);
            return -1;
        }
    }
    free(durable);
    return 0;
}

/* Before anything is staged: each directory written into, swept once
 * per run of changes in it (a second sweep then would remove nothing of
 * this apply's: none is staged yet). */
static void sweep_all(applier *ap, const rf_changeset *cs)
{
    char *last = NULL;
    for (size_t i = 0; i < cs->n; i++) {
        const char *base;
        int dir = ap->done[i] ? -1 : parent(&ap->wsdir, ap->ws, cs->v[i].path, &base);
        if (dir < 0 || (last && !strcmp(last, ap->wsdir.dir)))
            continue;
        sweep(ap, dir);
        free(last);
        last = strdup(ap->wsdir.dir);
    }
    free(last);
}

static int write_files(applier *ap, const rf_changeset *cs)
{
    _cleanup_free_ staged *b = calloc(BATCH, sizeof *b);
    size_t n = 0;
    if (!b)
        return -1;
    sweep_all(ap, cs);
    for (size_t i = 0; i < cs->n; i++) {
        if (ap->done[i])
            continue;
        ap->done[i] = true;
        b[n].i = i;
        if (stage_one(ap, &cs->v[i], b[n].tmp, &b[n].fd, &b[n].moved) < 0) {
            if (record(ap, -1, cs->v[i].path) < 0)
                return -1;
            continue;
        }
        if (++n == BATCH) {
            if (commit_batch(ap, cs, b, n) < 0)
                return -1;
            n = 0;
        }
    }
    return commit_batch(ap, cs, b, n);
}

static int apply_all(applier *ap, const rf_changeset *cs)
{
    /* Deletions, deepest first: a path sorts after its directory. */
    for (size_t i = cs->n; i-- > 0;) {
        const rf_change *c = &cs->v[i];
        if (ap->done[i] || (c->kind != RF_CHANGE_DELETED && c->kind != RF_CHANGE_RENAMED))
            continue;
        int rc = delete_one(ap, c, c->kind == RF_CHANGE_RENAMED ? c->old_path : c->path);
        if (c->kind == RF_CHANGE_DELETED) {
            ap->done[i] = true;
            if (record(ap, rc < 0 ? -1 : 0, c->path) < 0)
                return -1;
        } else if (rc < 0) {
            ap->done[i] = true;
            if (record(ap, -1, c->path) < 0)
                return -1;
        }
    }
    cache_clear(&ap->wsdir); /* directories were removed */
    cache_clear(&ap->updir);
    for (size_t i = 0; i < cs->n; i++) {
        const rf_change *c = &cs->v[i];
        if (ap->done[i] || c->type != 'd')
            continue;
        ap->done[i] = true;
        if (record(ap, make_dir(ap, c) < 0 ? -1 : 0, c->path) < 0)
            return -1;
    }
    cache_clear(&ap->wsdir); /* and made */
    return write_files(ap, cs);
}

/* --only paths as workspace-relative ones: absolute ones must lie in the
 * workspace, and none may climb out of it with "..". */
static int normalize_only(const rf_session *s, char *const *only, char ***out, rf_error **err)
{
    for (size_t i = 0; only && only[i]; i++) {
        const char *p = only[i];
        if (p[0] == '/') {
            if (!rf_path_is_beneath(p, s->workspace))
                return rf_error_set(err, 0, "--only %s: not inside the session's workspace %s", p, s->workspace);
            p += strlen(s->workspace);
        }
        _cleanup_free_ char *abs = rf_path_join("/", p), *norm = abs ? rf_path_normalize(abs) : NULL;
        if (!norm)
            return rf_error_set(err, ENOMEM, "--only");
        _cleanup_free_ char *lexical = NULL;
        if (strstr(p, "..") && asprintf(&lexical, "/%s", p) >= 0) {
            for (const char *q = lexical; (q = strstr(q, "/..")); q += 3)
                if (q[3] == '/' || q[3] == '\0')
                    return rf_error_set(err, 0, "--only %s: '..' is not allowed (paths are relative to the "
                                                "workspace)", only[i]);
        }
        if (rf_strv_push(out, norm + 1) < 0)
            return rf_error_set(err, ENOMEM, "--only");
    }
    return 0;
}

static bool all_applied(const rf_apply_report *r)
{
    return !r->conflicts && !r->refused && !r->failed;
}

RF_EXPORT int rf_session_apply(rf_session *s, char *const *only, bool force, rf_apply_report *report,
                               rf_error **err)
{
    memset(report, 0, sizeof *report);
    applier ap = { .s = s, .ws = -1, .upper = -1, .force = force, .rep = report, .wsdir.fd = -1, .updir.fd = -1,
                   .ws_sync = -1, .uid = geteuid(), .gid = getegid() };
    gid_t groups[256];
    int n_groups = getgroups(256, groups);
    ap.groups = groups;
    ap.n_groups = n_groups > 0 ? n_groups : 0;
    _cleanup_close_ int lock = rf_session_lock(s->dir, s->id, false, err);
    if (lock < 0 || normalize_only(s, only, &ap.only, err) < 0) {
        rf_strv_free(ap.only);
        return -1;
    }
    int rc = -1;
    rf_changeset *cs = NULL;
    ap.upper = rf_session_open_upper(s, err);
    ap.ws = open(s->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ap.ws_sync = ap.ws >= 0 ? rf_changes_open_beneath(ap.ws, ".", O_RDONLY | O_DIRECTORY) : -1;
    if (ap.upper >= 0 && ap.ws < 0)
        rf_error_set(err, errno, "session %s: its workspace %s", s->id, s->workspace);
    if (ap.upper >= 0 && ap.ws >= 0 && (cs = calloc(1, sizeof *cs)) && rf_changes_scan(ap.upper, ap.ws, cs, err) == 0 &&
        (ap.done = calloc(cs->n + 1, sizeof *ap.done))) {
        rc = check_all(&ap, cs) < 0 || apply_all(&ap, cs) < 0 ? rf_error_set(err, ENOMEM, "apply") : 0;
        if (ap.ws_sync >= 0)
            syncfs(ap.ws_sync); /* the renames, deletions and directories, durable */
    } else if (cs && !ap.done && err && !*err) {
        rf_error_set(err, ENOMEM, "apply");
    }
    /* Everything applied: the session has nothing left to hold. */
    if (rc == 0 && !ap.only && all_applied(report)) {
        _cleanup_free_ char *sessions = NULL;
        _cleanup_close_ int dir = asprintf(&sessions, "%s/sessions", s->root) < 0 ? -1
                                  : open(sessions, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir >= 0)
            rf_changes_remove_tree(dir, s->id);
    }
    if (rc == 0 && !all_applied(report))
        rc = 1;
    cache_clear(&ap.wsdir);
    cache_clear(&ap.updir);
    rf_changeset_free(cs);
    free(ap.done);
    rf_strv_free(ap.only);
    if (ap.ws >= 0)
        close(ap.ws);
    if (ap.ws_sync >= 0)
        close(ap.ws_sync);
    if (ap.upper >= 0)
        close(ap.upper);
    return rc;
}

RF_EXPORT void rf_apply_report_clear(rf_apply_report *r)
{
    rf_strv_free(r->applied);
    rf_strv_free(r->conflicts);
    rf_strv_free(r->refused);
    rf_strv_free(r->failed);
    memset(r, 0, sizeof *r);
}
