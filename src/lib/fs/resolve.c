/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Paths → file descriptors, confined by the kernel.
 *
 * A path is first read lexically (relative to the workspace, or absolute
 * with the workspace prefix stripped) only to choose how to open it; the
 * decision itself is made on what the kernel opened: beneath ws_fd with
 * RESOLVE_BENEATH, or, for paths that leave it, on the canonical path of
 * the opened object (/proc/self/fd, checked by dev/ino) against the allow_*
 * patterns. A swapped symlink between check and use cannot matter: the
 * check is on the fd that is then used. */
#include "fs/fs-internal.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define CONFINED (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)

long rf_fs_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
    struct open_how how = { .flags = (uint64_t)flags, .resolve = resolve };
    long fd = -1;
    /* EAGAIN: a rename or mount raced with ".." under RESOLVE_BENEATH and
     * the kernel asks us to try again. */
    for (int i = 0; i < 16; i++) {
        fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    return fd;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int rf_fs_canonical(int fd, const char *hint, char **out, rf_error **err)
{
    char link[64], buf[RF_FS_MAX_PATH + 1];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, sizeof buf);
    _cleanup_free_ char *canon = NULL;
    if (n >= 0 && (size_t)n < sizeof buf) {
        buf[n] = '\0';
        canon = strdup(buf);
    } else if (n < 0 && hint) {
        /* No /proc (a minimal sandbox): realpath, verified below. */
        canon = realpath(hint, NULL);
        if (!canon)
            return rf_fs_fail(err, errno, "cannot find the canonical path of %s", hint);
    } else {
        return rf_fs_fail(err, n < 0 ? errno : ENAMETOOLONG, "cannot find the canonical path of %s",
                          hint ? hint : link);
    }
    if (!canon)
        return rf_fs_fail(err, ENOMEM, "canonical path");
    /* The path must name this very object now: not "(deleted)", not a
     * pseudo path, not something else mounted over it. */
    struct stat a, b;
    if (canon[0] != '/' || fstat(fd, &a) < 0 || fstatat(AT_FDCWD, canon, &b, AT_SYMLINK_NOFOLLOW) < 0 ||
        !same_inode(&a, &b))
        return rf_fs_fail(err, 0, "%s changed while being resolved (moved, deleted or over-mounted); retry",
                          hint ? hint : canon);
    *out = steal_ptr(&canon);
    return 0;
}

/* The lexical reading of a user path. */
typedef struct where {
    char *abs;   /* absolute, normalised */
    char *rel;   /* relative to the workspace when inside, else NULL */
    bool inside;
} where;

static void where_clear(where *w)
{
    free(w->abs);
    free(w->rel);
}

static char *strip_prefix(const char *abs, const char *dir)
{
    if (!rf_path_is_beneath(abs, dir))
        return NULL;
    const char *rest = abs + strlen(dir);
    while (*rest == '/')
        rest++;
    return strdup(*rest ? rest : ".");
}

static int where_of(const rf_fs *fs, const char *path, where *w, rf_error **err)
{
    *w = (where){ 0 };
    if (!path || !*path)
        return rf_fs_fail(err, 0, "empty path");
    if (strlen(path) >= RF_FS_MAX_PATH)
        return rf_fs_fail(err, 0, "path too long: %zu bytes, at most %d", strlen(path), RF_FS_MAX_PATH - 1);
    if (path[0] != '/') {
        /* Relative paths go to the kernel as typed ("a/../b" resolved
         * physically); the lexical join only says whether they stay in. */
        w->abs = rf_path_join(fs->ws, path);
        w->inside = w->abs && rf_path_is_beneath(w->abs, fs->ws);
        w->rel = w->inside ? strdup(path) : NULL;
    } else {
        /* Absolute: cleaned lexically (like Go's filepath.Clean), then the
         * workspace prefix, canonical or as configured, is stripped. */
        _cleanup_free_ char *norm = rf_path_normalize(path);
        if (norm && (w->rel = strip_prefix(norm, fs->ws)))
            w->abs = steal_ptr(&norm);
        else if (norm && (w->rel = strip_prefix(norm, fs->ws_given)))
            w->abs = rf_path_join(fs->ws, w->rel);
        else
            w->abs = steal_ptr(&norm);
        w->inside = w->rel != NULL;
    }
    if (!w->abs || (w->inside && !w->rel)) {
        where_clear(w);
        return rf_fs_fail(err, ENOMEM, "path");
    }
    return 0;
}

static bool host_allowed(const rf_fs *fs, rf_fs_access acc)
{
    if (!fs->restrict_ws)
        return true;
    if (acc == RF_FS_READ)
        return fs->read_outside || fs->n_read_re > 0;
    return fs->n_write_re > 0;
}

/* After a failed host open: may the error say why (e.g. "not found")?
 * Only when the path as typed would have been admitted. */
static bool lexically_admitted(const rf_fs *fs, const where *w, rf_fs_access acc)
{
    if (!fs->restrict_ws)
        return true;
    if (w->inside) /* it left through a symlink, to somewhere unknown */
        return false;
    if (acc == RF_FS_READ)
        return fs->read_outside || rf_fs_match_any(fs, fs->read_re, fs->n_read_re, w->abs);
    return rf_fs_match_any(fs, fs->write_re, fs->n_write_re, w->abs);
}

void rf_fs_obj_clear(rf_fs_obj *o)
{
    if (o->fd >= 0)
        close(o->fd);
    free(o->canon);
    *o = (rf_fs_obj){ .fd = -1 };
}

static int deny_path(bool lex_inside, const char *path, rf_error **err)
{
    if (lex_inside)
        return rf_fs_deny(err, "access denied: symlink resolves outside workspace: %s", path);
    return rf_fs_deny(err, "access denied: path is outside the workspace: %s", path);
}

/* On failure errno is the cause (ENOENT lets callers create parents). */
static int open_object_impl(rf_fs *fs, const char *path, rf_fs_access acc, const char *user_path,
                            bool via_symlink, rf_fs_obj *o, rf_error **err)
{
    where w;
    if (where_of(fs, path, &w, err) < 0)
        return -1;
    /* Reached through a symlink the caller followed: if it leads out, say so. */
    o->lex_inside = w.inside || via_symlink;
    int e = 0;
    if (fs->restrict_ws && w.inside) {
        o->fd = (int)rf_fs_openat2(fs->ws_fd, w.rel, O_PATH | O_CLOEXEC, CONFINED);
        e = errno;
        o->beneath = o->fd >= 0;
        /* EXDEV: a symlink leads out. It may lead back in (an absolute
         * symlink to a place in the workspace), so open it on the host and
         * let the canonical path of what was opened decide. */
        if (o->fd < 0 && e != EXDEV)
            goto fail;
    } else if (!host_allowed(fs, acc)) {
        e = EACCES;
        deny_path(o->lex_inside, user_path, err);
        goto out;
    }
    if (o->fd < 0) {
        o->fd = (int)rf_fs_openat2(fs->ws_fd, path, O_PATH | O_CLOEXEC,
                                   fs->restrict_ws ? RESOLVE_NO_MAGICLINKS : 0);
        e = errno;
        /* Say nothing about what exists out there unless it may be used. */
        if (o->fd < 0 && e != ELOOP && !lexically_admitted(fs, &w, acc)) {
            e = EACCES;
            deny_path(o->lex_inside, user_path, err);
            goto out;
        }
        if (o->fd < 0)
            goto fail;
    }
    if (fstat(o->fd, &o->st) < 0 || rf_fs_canonical(o->fd, w.abs, &o->canon, err) < 0) {
        e = errno ? errno : EIO;
        rf_fs_fail(err, e, "cannot resolve %s", user_path);
        goto out;
    }
    where_clear(&w);
    return 0;
fail:
    rf_fs_fail_open(err, e, user_path);
out:
    where_clear(&w);
    rf_fs_obj_clear(o);
    errno = e;
    return -1;
}

int rf_fs_open_object(rf_fs *fs, const char *path, rf_fs_access acc, rf_fs_obj *o, rf_error **err)
{
    *o = (rf_fs_obj){ .fd = -1 };
    return open_object_impl(fs, path, acc, path, false, o, err);
}

/* The same for a step of a larger path: errors name user_path. */
static int open_step(rf_fs *fs, const char *path, const char *user_path, bool via_symlink, rf_fs_obj *o,
                     rf_error **err)
{
    *o = (rf_fs_obj){ .fd = -1 };
    return open_object_impl(fs, path, RF_FS_WRITE, user_path, via_symlink, o, err);
}

int rf_fs_gate(const rf_fs *fs, bool beneath, bool lex_inside, const char *canon, rf_fs_access acc,
               const char *user_path, rf_error **err)
{
    if (!fs->restrict_ws || beneath || rf_path_is_beneath(canon, fs->ws))
        return 0;
    if (acc == RF_FS_READ && (fs->read_outside || rf_fs_match_any(fs, fs->read_re, fs->n_read_re, canon)))
        return 0;
    if (acc == RF_FS_WRITE && rf_fs_match_any(fs, fs->write_re, fs->n_write_re, canon))
        return 0;
    return deny_path(lex_inside, user_path, err);
}

int rf_fs_reopen(const rf_fs *fs, const rf_fs_obj *o, int flags, const char *user_path, rf_error **err)
{
    flags |= O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;
    /* The canonical path holds no symlink, so forbid them all: whatever is
     * swapped in since cannot redirect the reopen. */
    _cleanup_free_ char *rel = strip_prefix(o->canon, fs->ws);
    _cleanup_close_ int fd = -1;
    if (rel)
        fd = (int)rf_fs_openat2(fs->ws_fd, rel, flags, CONFINED | RESOLVE_NO_SYMLINKS);
    else
        fd = (int)rf_fs_openat2(AT_FDCWD, o->canon, flags, RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS);
    if (fd < 0 && (errno == ELOOP || errno == EXDEV || errno == ENOENT))
        return rf_fs_fail(err, 0, "%s changed while being opened; retry", user_path);
    if (fd < 0)
        return rf_fs_fail_open(err, errno, user_path);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return rf_fs_fail(err, errno, "cannot stat %s", user_path);
    if (!same_inode(&st, &o->st))
        return rf_fs_fail(err, 0, "%s changed while being opened; retry", user_path);
    return take_fd(&fd);
}

static void made_free(rf_fs_made *m)
{
    for (int i = 0; m && i < m->n; i++) {
        close(m->parent[i]);
        free(m->name[i]);
    }
    free(m);
}

/* Only between the hops of rf_fs_target_open: what was created stays
 * recorded. */
static void target_clear_keep_made(rf_fs_target *t)
{
    if (t->dirfd >= 0)
        close(t->dirfd);
    free(t->dir_canon);
    free(t->base);
    free(t->canon);
    *t = (rf_fs_target){ .dirfd = -1, .made = t->made };
}

void rf_fs_target_clear(rf_fs_target *t)
{
    made_free(t->made);
    t->made = NULL;
    target_clear_keep_made(t);
}

void rf_fs_target_undo_parents(rf_fs_target *t)
{
    rf_fs_made *m = t->made;
    for (int i = m ? m->n - 1 : -1; i >= 0; i--)
        (void)unlinkat(m->parent[i], m->name[i], AT_REMOVEDIR); /* ENOTEMPTY: someone's, keep it */
}

/* Note a directory just created in parent_fd. Failing to note it only
 * costs a leftover empty directory after a failed write. */
static void made_add(rf_fs_made **mp, int parent_fd, const char *name)
{
    if (!*mp && !(*mp = calloc(1, sizeof **mp)))
        return;
    rf_fs_made *m = *mp;
    if (m->n >= RF_FS_MAX_NEW_DIRS)
        return;
    int fd = fcntl(parent_fd, F_DUPFD_CLOEXEC, 3);
    char *n = strdup(name);
    if (fd < 0 || !n) {
        if (fd >= 0)
            close(fd);
        free(n);
        return;
    }
    m->parent[m->n] = fd;
    m->name[m->n++] = n;
}

static char *join2(const char *dir, const char *name)
{
    char *s = NULL;
    if (asprintf(&s, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name) < 0)
        return NULL;
    return s;
}

/* Create comp in prev (a checked, opened directory), checked like a write
 * target before it exists. */
static int make_one(rf_fs *fs, const rf_fs_obj *prev, const char *comp, rf_fs_made **made, const char *user_path,
                    rf_error **err)
{
    _cleanup_free_ char *canon = join2(prev->canon, comp);
    if (!canon)
        return rf_fs_fail(err, ENOMEM, "path");
    if (rf_fs_gate(fs, prev->beneath, prev->lex_inside, canon, RF_FS_WRITE, user_path, err) < 0 ||
        rf_fs_check_protected(fs, canon, prev->fd, NULL, user_path, err) < 0)
        return -1;
    if (mkdirat(prev->fd, comp, 0777) == 0)
        made_add(made, prev->fd, comp);
    else if (errno != EEXIST)
        return rf_fs_fail(err, errno, "cannot create directory %s for %s", canon, user_path);
    return 0;
}

/* One step of make_parents: make `prefix` (ending in comp) exist and move
 * *prev to it. */
static int parent_step(rf_fs *fs, const char *prefix, const char *comp, rf_fs_obj *prev, int *created,
                       rf_fs_made **made, const char *user_path, rf_error **err)
{
    rf_fs_obj cur;
    rf_error *e = NULL;
    if (open_step(fs, prefix, user_path, false, &cur, &e) < 0) {
        if (errno != ENOENT || !strcmp(comp, ".") || !strcmp(comp, "..")) {
            if (err && !*err)
                *err = e;
            else
                rf_error_free(e);
            return -1;
        }
        rf_error_free(e);
        if (++*created > RF_FS_MAX_NEW_DIRS)
            return rf_fs_fail(err, 0, "%s: more than %d missing parent directories", user_path,
                              RF_FS_MAX_NEW_DIRS);
        if (make_one(fs, prev, comp, made, user_path, err) < 0 ||
            open_step(fs, prefix, user_path, false, &cur, err) < 0)
            return -1;
    }
    rf_fs_obj_clear(prev);
    *prev = cur;
    return 0;
}

/* mkdir -p for the missing part of dir, one component at a time, each
 * created with mkdirat() in the already opened, already checked parent. */
static int make_parents(rf_fs *fs, const char *dir, rf_fs_made **made, const char *user_path, rf_error **err)
{
    where w;
    if (where_of(fs, dir, &w, err) < 0)
        return -1;
    _cleanup_free_ char *walk = strdup(w.inside && fs->restrict_ws ? w.rel : w.abs);
    where_clear(&w);
    if (!walk)
        return rf_fs_fail(err, ENOMEM, "path");
    rf_fs_obj prev;
    if (open_step(fs, walk[0] == '/' ? "/" : ".", user_path, false, &prev, err) < 0)
        return -1;
    int created = 0, rc = 0;
    char *p = walk;
    while (rc == 0 && *p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *end = p + strcspn(p, "/");
        char saved = *end;
        *end = '\0'; /* walk is now the prefix up to and including p */
        rc = parent_step(fs, walk, p, &prev, &created, made, user_path, err);
        *end = saved;
        p = end;
    }
    rf_fs_obj_clear(&prev);
    return rc;
}

/* Split a write path into its directory (as a path) and its final name.
 * A final ".", ".." or "/" names a directory, never a file to write. */
static int split_target(const char *path, char **dir, char **base, rf_error **err)
{
    size_t len = strlen(path);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (len == 0)
        return rf_fs_fail(err, 0, "empty path");
    if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
        return rf_fs_fail(err, 0, "is a directory: %s", path);
    *base = strdup(name);
    if (!slash)
        *dir = strdup(".");
    else if (slash == path)
        *dir = strdup("/");
    else
        *dir = strndup(path, (size_t)(slash - path));
    if (!*base || !*dir)
        return rf_fs_fail(err, ENOMEM, "path");
    return 0;
}

static int open_parent(rf_fs *fs, const char *dir, bool followed, bool create, rf_fs_made **made,
                       const char *user_path, rf_fs_obj *d, rf_error **err)
{
    rf_error *e = NULL;
    if (open_step(fs, dir, user_path, followed, d, &e) == 0)
        return 0;
    if (errno == ENOENT && create && !followed) {
        rf_error_free(e);
        if (make_parents(fs, dir, made, user_path, err) < 0)
            return -1;
        return open_step(fs, dir, user_path, false, d, err);
    }
    if (err && !*err)
        *err = e;
    else
        rf_error_free(e);
    return -1;
}

/* One hop of rf_fs_target_open. Sets *next when the target is a symlink
 * to follow (its target as a path), else fills t. */
static int target_step(rf_fs *fs, const char *cur, const char *user_path, bool create, bool followed,
                       rf_fs_target *t, char **next, rf_error **err)
{
    _cleanup_free_ char *dir = NULL;
    if (split_target(cur, &dir, &t->base, err) < 0)
        return -1;
    rf_fs_obj d;
    if (open_parent(fs, dir, followed, create, &t->made, user_path, &d, err) < 0)
        return -1;
    bool beneath = d.beneath, lex_inside = d.lex_inside || followed;
    int rc = -1;
    /* A directory outside with no allow_write_paths at all: refuse now,
     * before looking into it (no probing of what lies out there). */
    if (fs->restrict_ws && !beneath && !rf_path_is_beneath(d.canon, fs->ws) && fs->n_write_re == 0)
        deny_path(lex_inside, user_path, err);
    else if (!S_ISDIR(d.st.st_mode))
        rf_fs_fail(err, 0, "not a directory: %s (a component of the path is a file)", user_path);
    else if ((t->dirfd = rf_fs_reopen(fs, &d, O_RDONLY | O_DIRECTORY, user_path, err)) >= 0)
        rc = 0;
    t->dir_canon = steal_ptr(&d.canon);
    rf_fs_obj_clear(&d);
    if (rc < 0)
        return -1;
    if (!(t->canon = join2(t->dir_canon, t->base)))
        return rf_fs_fail(err, ENOMEM, "path");
    if (fstatat(t->dirfd, t->base, &t->st, AT_SYMLINK_NOFOLLOW) == 0)
        t->exists = true;
    else if (errno != ENOENT)
        return rf_fs_fail(err, errno, "cannot stat %s", user_path);
    if (t->exists && S_ISLNK(t->st.st_mode)) {
        /* Follow it ourselves, so the next hop is resolved (and confined)
         * like any path; a plain rename would replace the link instead. */
        char buf[RF_FS_MAX_PATH];
        ssize_t n = readlinkat(t->dirfd, t->base, buf, sizeof buf - 1);
        if (n <= 0)
            return rf_fs_fail(err, n < 0 ? errno : EINVAL, "cannot read the symlink %s", user_path);
        buf[n] = '\0';
        *next = buf[0] == '/' ? strdup(buf) : join2(t->dir_canon, buf);
        return *next ? 0 : rf_fs_fail(err, ENOMEM, "path");
    }
    if (rf_fs_gate(fs, beneath, lex_inside, t->canon, RF_FS_WRITE, user_path, err) < 0)
        return -1;
    return rf_fs_check_protected(fs, t->canon, t->dirfd, t->exists ? &t->st : NULL, user_path, err);
}

int rf_fs_target_open(rf_fs *fs, const char *path, bool create_parents, rf_fs_target *t, rf_error **err)
{
    *t = (rf_fs_target){ .dirfd = -1 };
    _cleanup_free_ char *cur = strdup(path ? path : "");
    if (!cur)
        return rf_fs_fail(err, ENOMEM, "path");
    for (int hop = 0; hop <= RF_FS_MAX_HOPS; hop++) {
        char *next = NULL;
        if (target_step(fs, cur, path, create_parents, hop > 0, t, &next, err) < 0) {
            rf_fs_target_undo_parents(t);
            rf_fs_target_clear(t);
            return -1;
        }
        if (!next)
            return 0;
        target_clear_keep_made(t);
        free(cur);
        cur = next;
    }
    return rf_fs_fail_open(err, ELOOP, path);
}
