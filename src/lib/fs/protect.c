/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* protected_paths: workspace paths the file tools never write (.git/hooks,
 * ringfence's own config files). The check is on the resolved object, not
 * on the string typed, in two ways:
 *  - by canonical path: the target's canonical path against each protected
 *    path made canonical now (its longest existing prefix resolved, so a
 *    symlinked .git is seen through, the rest appended);
 *  - by identity: the target's inode and every directory above it against
 *    the protected objects that exist, which catches hard links and bind
 *    mounts that a path comparison cannot see. */
#include "fs/fs-internal.h"
#include "util/cleanup.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ANCESTORS 512

typedef struct ident {
    dev_t dev;
    ino_t ino;
} ident;

static char *join3(const char *a, const char *b)
{
    char *s = NULL;
    if (!*b || !strcmp(b, "."))
        return strdup(a);
    if (asprintf(&s, "%s%s%s", a, strcmp(a, "/") ? "/" : "", b) < 0)
        return NULL;
    return s;
}

/* The canonical form of the protected path rel now. Resolution is not
 * confined here: it only names objects to compare with, never opens one for
 * I/O. Fills *id and returns with *exists when the whole path exists. */
static char *protected_canonical(rf_fs *fs, const char *rel, ident *id, bool *exists)
{
    _cleanup_free_ char *prefix = strdup(rel);
    if (!prefix)
        return NULL;
    size_t cut = strlen(prefix);
    *exists = false;
    for (;;) {
        _cleanup_close_ int fd = (int)rf_fs_openat2(fs->ws_fd, prefix, O_PATH | O_CLOEXEC,
                                                    RESOLVE_NO_MAGICLINKS);
        _cleanup_free_ char *canon = NULL;
        if (fd >= 0 && rf_fs_canonical(fd, NULL, &canon, NULL) == 0) {
            struct stat st;
            if (rel[cut] == '\0' && fstat(fd, &st) == 0) {
                *id = (ident){ st.st_dev, st.st_ino };
                *exists = true;
            }
            return join3(canon, rel + cut + (rel[cut] == '/'));
        }
        char *slash = strrchr(prefix, '/');
        if (!slash)
            return join3(fs->ws, rel);
        *slash = '\0';
        cut = (size_t)(slash - prefix);
    }
}

static bool in_idents(const ident *ids, size_t n, const struct stat *st)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i].dev == st->st_dev && ids[i].ino == st->st_ino)
            return true;
    return false;
}

/* Does dirfd, or any directory above it, match a protected object? */
static bool ancestor_protected(int dirfd, const ident *ids, size_t n)
{
    _cleanup_close_ int cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (int depth = 0; cur >= 0 && depth < MAX_ANCESTORS; depth++) {
        struct stat st, pst;
        if (fstat(cur, &st) < 0)
            return false;
        if (in_idents(ids, n, &st))
            return true;
        int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (parent < 0)
            return false;
        close(cur);
        cur = parent;
        if (fstat(cur, &pst) == 0 && pst.st_dev == st.st_dev && pst.st_ino == st.st_ino)
            return false; /* "/" is its own parent */
    }
    return false;
}

int rf_fs_check_protected(rf_fs *fs, const char *canon, int dirfd, const struct stat *st,
                          const char *user_path, rf_error **err)
{
    size_t n = 0;
    while (fs->protected_rel[n])
        n++;
    if (n == 0)
        return 0;
    _cleanup_free_ ident *ids = calloc(n, sizeof(*ids));
    if (!ids)
        return rf_fs_fail(err, ENOMEM, "protected_paths");
    size_t n_ids = 0;
    for (size_t i = 0; i < n; i++) {
        bool exists = false;
        _cleanup_free_ char *pc = protected_canonical(fs, fs->protected_rel[i], &ids[n_ids], &exists);
        /* Fail closed: an unknown protected path protects everything. */
        if (!pc || rf_path_is_beneath(canon, pc))
            goto denied;
        n_ids += exists;
    }
    if (n_ids && ((st && in_idents(ids, n_ids, st)) || (dirfd >= 0 && ancestor_protected(dirfd, ids, n_ids))))
        goto denied;
    return 0;
denied:
    return rf_fs_deny(err, "access denied: %s is protected by the policy (protected_paths)", user_path);
}
