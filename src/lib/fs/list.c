/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* list: a directory's entries, optionally recursive. The walk is fd-relative:
 * each level is opened from its parent's fd by plain name with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, so a symlink (or one swapped in
 * mid-walk) is listed as a name and never entered. */
#include "fs/fs-internal.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"
#include "util/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct walk {
    rf_fs *fs;
    char **entries;
    size_t n, max;
    bool truncated;
    bool recursive;
    bool outside;          /* listing outside the workspace: re-check each level */
    const char *root_canon;
} walk;

typedef struct dentry {
    char *name;
    bool dir;
} dentry;

static int cmp_dentry(const void *a, const void *b)
{
    return strcmp(((const dentry *)a)->name, ((const dentry *)b)->name);
}

static void free_dentries(dentry *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

/* Read a directory's names (at most RF_FS_MAX_LIST: more marks truncation). */
static int read_names(walk *w, DIR *d, dentry **out, size_t *n_out, rf_error **err)
{
    dentry *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == RF_FS_MAX_LIST) {
            w->truncated = true;
            break;
        }
        if (n == cap) {
            dentry *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
            if (!nv)
                goto nomem;
            v = nv;
        }
        bool dir = de->d_type == DT_DIR;
        struct stat st;
        if (de->d_type == DT_UNKNOWN && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            dir = S_ISDIR(st.st_mode);
        if (!(v[n].name = strdup(de->d_name)))
            goto nomem;
        v[n++].dir = dir;
        errno = 0;
    }
    if (errno) {
        free_dentries(v, n);
        return rf_fs_fail(err, errno, "cannot read a directory");
    }
    if (n > 1) /* qsort with a NULL array (an empty directory) is undefined */
        qsort(v, n, sizeof(*v), cmp_dentry);
    *out = v;
    *n_out = n;
    return 0;
nomem:
    free_dentries(v, n);
    return rf_fs_fail(err, ENOMEM, "list");
}

static bool may_descend(walk *w, const char *rel)
{
    if (!w->outside || w->fs->read_outside)
        return true;
    _cleanup_free_ char *canon = NULL;
    if (asprintf(&canon, "%s/%s", strcmp(w->root_canon, "/") ? w->root_canon : "", rel) < 0)
        return false;
    canon[strlen(canon) - 1] = '\0'; /* the trailing '/' of a directory entry */
    return rf_fs_match_any(w->fs, w->fs->read_re, w->fs->n_read_re, canon);
}

static int walk_dir(walk *w, int fd, const char *prefix, int depth, rf_error **err)
{
    _cleanup_closedir_ DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return rf_fs_fail(err, errno, "cannot read a directory");
    }
    dentry *v = NULL;
    size_t n = 0;
    if (read_names(w, d, &v, &n, err) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (w->n >= w->max) {
            w->truncated = true;
            break;
        }
        char *entry = NULL;
        if (asprintf(&entry, "%s%s%s", prefix, v[i].name, v[i].dir ? "/" : "") < 0 ||
            rf_strv_push_take(&w->entries, entry) < 0) {
            rc = rf_fs_fail(err, ENOMEM, "list");
            break;
        }
        w->n++;
        if (!w->recursive || !v[i].dir || depth + 1 >= MAX_DEPTH || !may_descend(w, entry))
            continue;
        /* A directory we cannot enter (permissions, swapped for a symlink
         * since readdir) is listed but not descended into. */
        int child = (int)rf_fs_openat2(dirfd(d), v[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                                       RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (child >= 0)
            rc = walk_dir(w, child, entry, depth + 1, err);
    }
    free_dentries(v, n);
    return rc;
}

RF_EXPORT int rf_fs_list(rf_fs *fs, const char *path, bool recursive, size_t max_entries, char ***out_entries,
                         rf_error **err)
{
    if (!fs || !out_entries)
        return rf_fs_fail(err, EINVAL, "list");
    if (rf_fs_tool_enabled(fs, "list_dir", err) < 0)
        return -1;
    if (!path || !*path)
        path = ".";
    rf_fs_obj o;
    if (rf_fs_open_object(fs, path, RF_FS_READ, &o, err) < 0)
        return -1;
    walk w = { .fs = fs, .recursive = recursive, .root_canon = o.canon };
    w.max = max_entries ? (max_entries < RF_FS_MAX_LIST ? max_entries : RF_FS_MAX_LIST) : RF_FS_DEFAULT_MAX_LIST;
    w.outside = fs->restrict_ws && !o.beneath && !rf_path_is_beneath(o.canon, fs->ws);
    int rc = -1, fd = -1;
    if (rf_fs_gate(fs, o.beneath, o.lex_inside, o.canon, RF_FS_READ, path, err) < 0) {
        /* denied */
    } else if (!S_ISDIR(o.st.st_mode)) {
        rf_fs_fail(err, 0, "not a directory: %s", path);
    } else if ((fd = rf_fs_reopen(fs, &o, O_RDONLY | O_DIRECTORY, path, err)) >= 0) {
        rc = walk_dir(&w, fd, "", 0, err);
    }
    if (rc == 0 && !w.entries && !(w.entries = calloc(1, sizeof(char *))))
        rc = rf_fs_fail(err, ENOMEM, "list");
    if (rc < 0) {
        rf_strv_free(w.entries);
        rf_fs_obj_clear(&o);
        return -1;
    }
    rf_fs_obj_clear(&o);
    *out_entries = w.entries;
    return w.truncated ? 1 : 0;
}
