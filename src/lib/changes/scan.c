/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Walk a session's upper layer into a changeset. What overlayfs leaves
 * there, and what it means:
 *   - a character device 0:0 is a whiteout: the lower entry was deleted;
 *   - a directory with the overlay.opaque xattr ("y") replaced the lower
 *     one: every lower entry it does not hold was deleted;
 *   - any other entry was created, or copied up and maybe changed: it is
 *     compared with the lower (the real workspace) to tell which;
 *   - fifos, sockets and device nodes are listed as refused, never applied.
 * Sessions are mounted with redirect_dir and metacopy off, so an entry
 * carrying those xattrs was not made by our mount: refused too.
 * Nothing is followed: the upper is read with O_NOFOLLOW, the real
 * workspace beneath its fd with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS. */
#include "changes/changes.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

typedef struct scan {
    rf_changeset *cs;
    int ws_fd;
    rf_error **err;
    char path[RF_CHANGES_MAX_PATH]; /* the workspace-relative path being walked */
} scan;

bool rf_changes_is_whiteout(const struct stat *st)
{
    return S_ISCHR(st->st_mode) && st->st_rdev == 0;
}

int rf_changes_open_beneath(int dirfd, const char *rel, int flags)
{
    struct open_how how = { .flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                       RESOLVE_NO_XDEV };
    return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
}

static char type_of(mode_t m)
{
    return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : '?';
}

static int push(scan *sc, rf_change_kind kind, const struct stat *lower, const struct stat *upper,
                const char *refused)
{
    rf_changeset *cs = sc->cs;
    if (cs->n >= RF_CHANGES_MAX_ENTRIES)
        return rf_error_set(sc->err, E2BIG, "more than %d changes: refused", RF_CHANGES_MAX_ENTRIES);
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 64;
        rf_change *v = realloc(cs->v, cap * sizeof *v);
        if (!v)
            return rf_error_set(sc->err, ENOMEM, "changes");
        cs->v = v;
        cs->cap = cap;
    }
    const struct stat *t = upper ? upper : lower;
    rf_change *c = &cs->v[cs->n];
    *c = (rf_change){ .kind = kind, .type = type_of(t->st_mode), .refused = refused };
    if (lower) {
        c->old_mode = lower->st_mode;
        c->old_size = lower->st_size;
    }
    if (upper && !rf_changes_is_whiteout(upper)) {
        c->new_mode = upper->st_mode;
        c->new_size = upper->st_size;
    }
    if (!(c->path = strdup(sc->path)))
        return rf_error_set(sc->err, ENOMEM, "changes");
    cs->n++;
    return 0;
}

/* Append /name to sc->path; returns the old length to restore, or -1. */
static ssize_t enter(scan *sc, const char *name)
{
    size_t len = strlen(sc->path), add = strlen(name) + (len ? 1 : 0);
    if (len + add >= sizeof sc->path)
        return rf_error_set(sc->err, ENAMETOOLONG, "changes: a path longer than %d bytes", RF_CHANGES_MAX_PATH);
    if (len)
        sc->path[len] = '/';
    memcpy(sc->path + len + (len ? 1 : 0), name, strlen(name) + 1);
    return (ssize_t)len;
}

/* The lower entry at sc->path: 1 and *st, 0 when there is none. */
static int lower_stat(scan *sc, struct stat *st)
{
    _cleanup_close_ int fd = rf_changes_open_beneath(sc->ws_fd, *sc->path ? sc->path : ".", O_PATH);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR || errno == EXDEV /* a mount: not in the lower layer */
                   ? 0
                   : rf_error_set(sc->err, errno, "changes: %s", sc->path);
    return fstat(fd, st) < 0 ? rf_error_set(sc->err, errno, "changes: %s", sc->path) : 1;
}

static bool has_overlay_xattr(int fd, const char *what, const char *value)
{
    static const char *const ns[] = { "trusted.overlay.", "user.overlay." };
    for (size_t i = 0; i < 2; i++) {
        char name[64], buf[8];
        snprintf(name, sizeof name, "%s%s", ns[i], what);
        ssize_t n = fgetxattr(fd, name, buf, sizeof buf);
        if (n >= 0 && (!value || (n == (ssize_t)strlen(value) && !memcmp(buf, value, (size_t)n))))
            return true;
        if (n < 0 && errno == ERANGE && !value)
            return true;
    }
    return false;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir fd (which stays open), sorted; NULL-terminated. */
static char **read_names(int fd, rf_error **err)
{
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
    if (!d) {
        if (dup >= 0)
            close(dup);
        rf_error_set(err, errno, "changes: read a directory");
        return NULL;
    }
    char **v = calloc(1, sizeof *v);
    size_t n = 0;
    for (struct dirent *de; v && (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char **nv = realloc(v, (n + 2) * sizeof *v);
        if (!nv || !(nv[n] = strdup(de->d_name))) {
            v = nv ? nv : v;
            v[n] = NULL;
            rf_session_list_free(v);
            v = NULL;
            break;
        }
        v = nv;
        v[++n] = NULL;
    }
    closedir(d);
    if (!v)
        rf_error_set(err, ENOMEM, "changes");
    else
        qsort(v, n, sizeof *v, cmp_names);
    return v;
}

static bool listed(char *const *names, const char *name)
{
    size_t n = 0;
    while (names[n])
        n++;
    return bsearch(&name, names, n, sizeof *names, cmp_names) != NULL;
}

/* Every entry of the lower tree at sc->path that `keep` (may be NULL)
 * does not name, as deleted, the directory itself included when it is. */
static int deleted_tree(scan *sc, char *const *keep, const struct stat *st, bool self, int depth)
{
    if (S_ISDIR(st->st_mode)) {
        if (depth > RF_CHANGES_MAX_DEPTH)
            return rf_error_set(sc->err, ELOOP, "changes: deeper than %d directories", RF_CHANGES_MAX_DEPTH);
        _cleanup_close_ int fd = rf_changes_open_beneath(sc->ws_fd, *sc->path ? sc->path : ".",
                                                         O_RDONLY | O_DIRECTORY);
        char **names = fd >= 0 ? read_names(fd, sc->err) : NULL;
        if (!names)
            return fd < 0 ? rf_error_set(sc->err, errno, "changes: %s", sc->path) : -1;
        int rc = 0;
        for (size_t i = 0; names[i] && rc == 0; i++) {
            struct stat cst;
            if (keep && listed(keep, names[i]))
                continue;
            ssize_t old = enter(sc, names[i]);
            if (old < 0 || fstatat(fd, names[i], &cst, AT_SYMLINK_NOFOLLOW) < 0)
                rc = old < 0 ? -1 : rf_error_set(sc->err, errno, "changes: %s", sc->path);
            else
                rc = deleted_tree(sc, NULL, &cst, true, depth + 1);
            if (old >= 0)
                sc->path[old] = '\0';
        }
        rf_session_list_free(names);
        if (rc < 0)
            return -1;
    }
    return self ? push(sc, RF_CHANGE_DELETED, st, NULL, NULL) : 0;
}

/* Same bytes? Both are regular files of the same size. */
static int same_content(scan *sc, int upper_dir, const char *name)
{
    _cleanup_close_ int a = rf_changes_open_beneath(upper_dir, name, O_RDONLY | O_NONBLOCK);
    _cleanup_close_ int b = rf_changes_open_beneath(sc->ws_fd, sc->path, O_RDONLY | O_NONBLOCK);
    if ((a < 0 || b < 0) && errno == EACCES)
        return 0; /* made unreadable (chmod 000): shown as changed, not compared */
    if (a < 0 || b < 0)
        return rf_error_set(sc->err, errno, "changes: read %s", sc->path);
    static char x[65536], y[65536]; /* the scan is single-threaded per process call */
    for (;;) {
        ssize_t n = read(a, x, sizeof x), m = n > 0 ? read(b, y, (size_t)n) : 0;
        if (n < 0 || m < 0)
            return rf_error_set(sc->err, errno, "changes: read %s", sc->path);
        if (n != m || memcmp(x, y, (size_t)n))
            return 0;
        if (n == 0)
            return 1;
    }
}

static int same_link(scan *sc, int upper_dir, const char *name)
{
    char a[RF_CHANGES_MAX_PATH], b[RF_CHANGES_MAX_PATH];
    _cleanup_close_ int fd = rf_changes_open_beneath(sc->ws_fd, sc->path, O_PATH);
    ssize_t n = readlinkat(upper_dir, name, a, sizeof a), m = fd >= 0 ? readlinkat(fd, "", b, sizeof b) : -1;
    if (n < 0 || m < 0)
        return rf_error_set(sc->err, errno, "changes: read the link %s", sc->path);
    return n == m && !memcmp(a, b, (size_t)n);
}

static int walk(scan *sc, int upper_dir, bool lower_dir, bool opaque, int depth);

static int one_dir(scan *sc, int upper_dir, const char *name, const struct stat *ust, int lower,
                   const struct stat *lst, int depth)
{
    _cleanup_close_ int fd = openat(upper_dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return rf_error_set(sc->err, errno, "changes: %s", sc->path);
    if (has_overlay_xattr(fd, "redirect", NULL))
        return push(sc, RF_CHANGE_REFUSED, lower ? lst : NULL, ust, "a redirected directory (not made by ringfence)");
    bool opaque = has_overlay_xattr(fd, "opaque", "y");
    bool lower_is_dir = lower && S_ISDIR(lst->st_mode);
    if (lower && !lower_is_dir && deleted_tree(sc, NULL, lst, true, depth) < 0)
        return -1;
    if (!lower_is_dir) {
        if (push(sc, RF_CHANGE_ADDED, NULL, ust, NULL) < 0)
            return -1;
    } else if ((lst->st_mode & 07777) != (ust->st_mode & 07777) && push(sc, RF_CHANGE_MODE, lst, ust, NULL) < 0) {
        return -1;
    }
    return walk(sc, fd, lower_is_dir, opaque, depth + 1);
}

static int one_file(scan *sc, int upper_dir, const char *name, const struct stat *ust, int lower,
                    const struct stat *lst, int depth)
{
    if (S_ISREG(ust->st_mode)) {
        _cleanup_close_ int fd = openat(upper_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0 && has_overlay_xattr(fd, "metacopy", NULL))
            return push(sc, RF_CHANGE_REFUSED, lower ? lst : NULL, ust, "a metadata-only copy (not made by ringfence)");
    }
    bool same_type = lower && (lst->st_mode & S_IFMT) == (ust->st_mode & S_IFMT);
    if (lower && !same_type && deleted_tree(sc, NULL, lst, true, depth) < 0)
        return -1;
    if (!same_type)
        return push(sc, RF_CHANGE_ADDED, NULL, ust, NULL);
    int same = S_ISLNK(ust->st_mode) ? same_link(sc, upper_dir, name)
               : lst->st_size != ust->st_size ? 0
                                              : same_content(sc, upper_dir, name);
    if (same < 0)
        return -1;
    bool mode_same = (lst->st_mode & 07777) == (ust->st_mode & 07777) || S_ISLNK(ust->st_mode);
    if (same && mode_same)
        return 0; /* copied up, nothing changed (opened for writing, touched) */
    return push(sc, same ? RF_CHANGE_MODE : RF_CHANGE_MODIFIED, lst, ust, NULL);
}

static int one_entry(scan *sc, int upper_dir, const char *name, bool lower_dir, int depth)
{
    struct stat ust, lst;
    if (fstatat(upper_dir, name, &ust, AT_SYMLINK_NOFOLLOW) < 0)
        return rf_error_set(sc->err, errno, "changes: %s", sc->path);
    int lower = lower_dir ? lower_stat(sc, &lst) : 0;
    if (lower < 0)
        return -1;
    if (rf_changes_is_whiteout(&ust))
        return lower ? deleted_tree(sc, NULL, &lst, true, depth) : 0;
    if (S_ISDIR(ust.st_mode))
        return one_dir(sc, upper_dir, name, &ust, lower, &lst, depth);
    if (S_ISREG(ust.st_mode) || S_ISLNK(ust.st_mode))
        return one_file(sc, upper_dir, name, &ust, lower, &lst, depth);
    const char *why = S_ISFIFO(ust.st_mode)   ? "a fifo"
                      : S_ISSOCK(ust.st_mode) ? "a socket"
                                              : "a device node";
    return push(sc, RF_CHANGE_REFUSED, lower ? &lst : NULL, &ust, why);
}

static int walk(scan *sc, int upper_dir, bool lower_dir, bool opaque, int depth)
{
    if (depth > RF_CHANGES_MAX_DEPTH)
        return rf_error_set(sc->err, ELOOP, "changes: deeper than %d directories", RF_CHANGES_MAX_DEPTH);
    char **names = read_names(upper_dir, sc->err);
    if (!names)
        return -1;
    int rc = 0;
    for (size_t i = 0; names[i] && rc == 0; i++) {
        ssize_t old = enter(sc, names[i]);
        rc = old < 0 ? -1 : one_entry(sc, upper_dir, names[i], lower_dir, depth);
        if (old >= 0)
            sc->path[old] = '\0';
    }
    /* An opaque directory hides the whole lower one: what it does not
     * hold again was deleted. */
    if (rc == 0 && opaque && lower_dir) {
        struct stat st;
        int l = lower_stat(sc, &st);
        rc = l < 0 ? -1 : l ? deleted_tree(sc, names, &st, false, depth) : 0;
    }
    rf_session_list_free(names);
    return rc;
}

/* Does the upper file at `to` hold the same bytes as the lower file at
 * `from`? (sizes already equal; sc->path is the lower side) */
static int same_moved(scan *sc, int upper_fd, const char *to, const char *from)
{
    snprintf(sc->path, sizeof sc->path, "%s", from);
    int rc = same_content(sc, upper_fd, to);
    sc->path[0] = '\0';
    return rc;
}

/* A file deleted at one path and added with the same bytes at another was
 * moved (overlayfs shows a rename as exactly that). The deleted files are
 * indexed by size, so a changeset of 100,000 new files costs a sort, not
 * 100,000 scans; at most RENAME_PROBES contents are compared, the rest
 * stays delete + add. */
#define RENAME_PROBES 4096
typedef struct sized {
    long long size;
    size_t idx;
} sized;

static int cmp_sized(const void *a, const void *b)
{
    const sized *x = a, *y = b;
    return x->size < y->size ? -1 : x->size > y->size ? 1 : x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The first entry of v[0..n) of this size, or n. */
static size_t first_of_size(const sized *v, size_t n, long long size)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].size < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int pair_renames(scan *sc, int upper_fd, sized *dels, size_t nd, bool *gone)
{
    rf_changeset *cs = sc->cs;
    size_t probes = 0;
    for (size_t i = 0; i < cs->n && probes < RENAME_PROBES; i++) {
        rf_change *add = &cs->v[i];
        if (add->kind != RF_CHANGE_ADDED || add->type != 'f' || add->new_size == 0)
            continue;
        for (size_t k = first_of_size(dels, nd, add->new_size);
             k < nd && dels[k].size == add->new_size && probes < RENAME_PROBES; k++) {
            rf_change *del = &cs->v[dels[k].idx];
            if (gone[dels[k].idx])
                continue;
            probes++;
            int same = same_moved(sc, upper_fd, add->path, del->path);
            if (same < 0)
                return -1;
            if (!same)
                continue;
            add->kind = RF_CHANGE_RENAMED;
            add->old_path = steal_ptr(&del->path);
            add->old_mode = del->old_mode;
            add->old_size = del->old_size;
            gone[dels[k].idx] = true;
            break;
        }
    }
    return 0;
}

static int find_renames(scan *sc, int upper_fd)
{
    rf_changeset *cs = sc->cs;
    size_t nd = 0;
    for (size_t i = 0; i < cs->n; i++)
        nd += cs->v[i].kind == RF_CHANGE_DELETED && cs->v[i].type == 'f';
    if (nd == 0)
        return 0;
    _cleanup_free_ sized *dels = malloc(nd * sizeof *dels);
    _cleanup_free_ bool *gone = calloc(cs->n, sizeof *gone);
    if (!dels || !gone)
        return rf_error_set(sc->err, ENOMEM, "changes");
    nd = 0;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->v[i].kind == RF_CHANGE_DELETED && cs->v[i].type == 'f')
            dels[nd++] = (sized){ cs->v[i].old_size, i };
    qsort(dels, nd, sizeof *dels, cmp_sized);
    if (pair_renames(sc, upper_fd, dels, nd, gone) < 0)
        return -1;
    size_t w = 0; /* drop the deletions that became renames, in order */
    for (size_t i = 0; i < cs->n; i++) {
        if (gone[i])
            free(cs->v[i].path);
        else
            cs->v[w++] = cs->v[i];
    }
    cs->n = w;
    return 0;
}

static int cmp_change(const void *a, const void *b)
{
    const rf_change *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    /* The deletion of what stood there first, then what replaced it. */
    return c ? c : (x->kind != RF_CHANGE_DELETED) - (y->kind != RF_CHANGE_DELETED);
}

int rf_changes_scan(int upper_fd, int ws_fd, rf_changeset *cs, rf_error **err)
{
    scan sc = { .cs = cs, .ws_fd = ws_fd, .err = err };
    /* The workspace's own directory is never changed: its upper stand-in
     * only mirrors it (session.c), so it is not compared. */
    if (walk(&sc, upper_fd, true, has_overlay_xattr(upper_fd, "opaque", "y"), 0) < 0)
        return -1;
    if (cs->n > 1)
        qsort(cs->v, cs->n, sizeof *cs->v, cmp_change);
    return find_renames(&sc, upper_fd);
}
