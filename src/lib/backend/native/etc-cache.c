/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The curated /etc, built once per state of its sources and bound
 * read-only into every sandbox, instead of two dozen files copied into each
 * one (an open, a create and a sendfile apiece at start, their pages freed
 * at teardown).
 *
 * The cache is a directory of the instance root's cache/ (which no sandbox
 * can see: plan.c masks the instance root wherever a bind would show it)
 * named by a hash of what shapes it: this format, the plan's /etc entries
 * (targets, sources, symlink texts, the mount points other mounts need),
 * and each copied source's device, inode, size, mode, mtime and ctime. A
 * source that changes changes its ctime, so the next start builds a new
 * directory; a build is verified against those stats after each copy and
 * renamed into place whole, so a reader never sees half of one. The copies
 * are the same as the child would make (the plan's small world-readable
 * files, mode 0644), owned by the caller as the child's would be.
 *
 * Anything unusual (no cache directory, a source that changed during the
 * build, a directory not ours) means no cache: the setup child copies as
 * before. Old directories are left: a running sandbox may have one bound,
 * and removing it would detach its /etc. */
#include "backend/native/sandbox.h"
#include "util/cleanup.h"
#include "util/hash.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ETC_CACHE_FORMAT "etc-cache 1"

static bool mounts_something(const rf_mount *m)
{
    return m->type == RF_MOUNT_BIND || m->type == RF_MOUNT_TMPFS || m->type == RF_MOUNT_PROC ||
           m->type == RF_MOUNT_DEVPTS || m->type == RF_MOUNT_MASK_FILE;
}

static bool strictly_beneath(const char *path, const char *dir)
{
    return strcmp(path, dir) != 0 && rf_path_is_beneath(path, dir);
}

/* Is mounts[i]'s target inside a mount made beneath /etc (/etc/ssl/private
 * inside the /etc/ssl bind)? Then it is not in the cached directory. */
static bool inside_etc_mount(const rf_plan *plan, size_t i)
{
    const char *t = plan->mounts[i].target;
    for (size_t j = 0; j < plan->n_mounts; j++) {
        const rf_mount *n = &plan->mounts[j];
        if (j != i && mounts_something(n) && strictly_beneath(n->target, "/etc") && strictly_beneath(t, n->target))
            return true;
    }
    return false;
}

bool rf_etc_cache_covers(const rf_plan *plan, size_t i)
{
    const rf_mount *m = &plan->mounts[i];
    return (m->type == RF_MOUNT_COPY || m->type == RF_MOUNT_SYMLINK) && strictly_beneath(m->target, "/etc") &&
           !inside_etc_mount(plan, i);
}

/* A mount onto /etc/X needs X in the cached directory: it is read-only. */
static bool needs_mount_point(const rf_plan *plan, size_t i)
{
    const rf_mount *m = &plan->mounts[i];
    return mounts_something(m) && strictly_beneath(m->target, "/etc") && !inside_etc_mount(plan, i);
}

/* A mount at /etc or above it would cover the cached one: no cache. */
static bool etc_itself_mounted(const rf_plan *plan)
{
    for (size_t i = 0; i < plan->n_mounts; i++)
        if (mounts_something(&plan->mounts[i]) && rf_path_is_beneath("/etc", plan->mounts[i].target))
            return true;
    return false;
}

/* What a copy's source must still be when it is copied. */
static void mix_stat(uint64_t *h, const struct stat *st)
{
    const int64_t v[] = { (int64_t)st->st_dev,         (int64_t)st->st_ino,          (int64_t)st->st_size,
                          (int64_t)st->st_mode,        (int64_t)st->st_mtim.tv_sec, (int64_t)st->st_mtim.tv_nsec,
                          (int64_t)st->st_ctim.tv_sec, (int64_t)st->st_ctim.tv_nsec };
    rf_hash_mix(h, v, sizeof v);
}

/* The key, from each copy's source as the plan saw it (its lstat, or the
 * stat of where its symlink leads); false if one is not a small
 * world-readable file (the child's copy then fails as it should). */
static bool cache_key(const rf_plan *plan, uint64_t *key)
{
    uint64_t h = RF_HASH_INIT;
    rf_hash_mix_str(&h, ETC_CACHE_FORMAT);
    rf_hash_mix_str(&h, RF_VERSION);
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        bool covered = rf_etc_cache_covers(plan, i);
        if (!covered && !needs_mount_point(plan, i))
            continue;
        int kind = covered ? (int)m->type : m->type == RF_MOUNT_BIND && !m->source_dir ? -1 : -2;
        rf_hash_mix(&h, &kind, sizeof kind);
        rf_hash_mix_str(&h, m->target);
        if (!covered)
            continue;
        rf_hash_mix_str(&h, m->source);
        if (m->type == RF_MOUNT_COPY) {
            if (!rf_copy_allowed(&m->copied))
                return false;
            mix_stat(&h, &m->copied);
        }
    }
    *key = h;
    return true;
}

/* Open (creating) the directory `rel` (relative to /etc) inside dirfd. */
static int open_dirs(int dirfd, const char *rel)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf)
        return errno = ENAMETOOLONG, -1;
    int fd = dup(dirfd);
    for (char *part = buf, *next; fd >= 0 && part && *part; part = next) {
        next = strchr(part, '/');
        if (next)
            *next++ = '\0';
        /* 0755 whatever the caller's umask: the sandbox's uid reads it. */
        if (mkdirat(fd, part, 0755) < 0 ? errno != EEXIST : fchmodat(fd, part, 0755, 0) < 0) {
            close(fd);
            return -1;
        }
        int sub = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = sub;
    }
    return fd;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* One copy, verified: the source is the file the key was made from, before
 * and after its bytes are read, and its path still leads to it. */
static int put_copy(int dirfd, const char *name, const rf_mount *m)
{
    struct stat before, after;
    _cleanup_close_ int in = open(m->source, O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (in < 0 || fstat(in, &before) < 0 || !rf_copy_allowed(&before) || !same_file(&before, &m->copied))
        return -1;
    _cleanup_close_ int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    rf_mount_src src = { .fd = in, .size = before.st_size };
    if (out < 0 || fchmod(out, 0644) < 0 || rf_mount_copy_bytes(&src, out) < 0 || fstat(in, &after) < 0 ||
        !same_file(&before, &after))
        return -1;
    struct stat now;
    return stat(m->source, &now) == 0 && same_file(&before, &now) ? 0 : -1;
}

static int put_entry(int top, const rf_plan *plan, size_t i)
{
    const rf_mount *m = &plan->mounts[i];
    char rel[4096];
    snprintf(rel, sizeof rel, "%s", m->target + strlen("/etc/"));
    char *slash = strrchr(rel, '/');
    const char *name = slash ? slash + 1 : rel;
    if (slash)
        *slash = '\0';
    _cleanup_close_ int dir = open_dirs(top, slash ? rel : "");
    if (dir < 0)
        return -1;
    if (m->type == RF_MOUNT_COPY)
        return put_copy(dir, name, m);
    if (m->type == RF_MOUNT_SYMLINK)
        return symlinkat(m->source, dir, name);
    if (m->type == RF_MOUNT_BIND && !m->source_dir) {
        _cleanup_close_ int f = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        return f < 0 || fchmod(f, 0644) < 0 ? -1 : 0;
    }
    return mkdirat(dir, name, 0755) < 0 || fchmodat(dir, name, 0755, 0) < 0 ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void remove_tree(const char *path)
{
    (void)nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int build(const rf_plan *plan, const char *tmp, const char *final)
{
    if (mkdir(tmp, 0755) < 0)
        return -1;
    _cleanup_close_ int top = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = top < 0 || fchmod(top, 0755) < 0 ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < plan->n_mounts; i++)
        if (rf_etc_cache_covers(plan, i) || needs_mount_point(plan, i))
            rc = put_entry(top, plan, i);
    if (rc == 0 && rename(tmp, final) < 0)
        rc = errno == EEXIST || errno == ENOTEMPTY ? 0 : -1; /* another start built it first */
    if (access(tmp, F_OK) == 0)
        remove_tree(tmp);
    return rc;
}

/* Ours and writable by nobody else: what a sandbox of ours may trust. */
static bool trusted_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

int rf_etc_cache_prepare(const rf_plan *plan, char *dir, size_t len)
{
    dir[0] = '\0';
    char cache[4096];
    uint64_t key;
    if (etc_itself_mounted(plan) || !plan->instance_root ||
        (size_t)snprintf(cache, sizeof cache, "%s/cache", plan->instance_root) >= sizeof cache ||
        !cache_key(plan, &key))
        return -1;
    /* Belt and braces: a cache the sandbox could see is never used. */
    if (rf_plan_path_visible(plan, cache, NULL) || !trusted_dir(cache))
        return -1;
    if ((size_t)snprintf(dir, len, "%s/etc-%016llx", cache, (unsigned long long)key) >= len) {
        dir[0] = '\0';
        return -1;
    }
    if (trusted_dir(dir))
        return 0;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/.etc-%016llx.%ld.%ld.tmp", cache, (unsigned long long)key, (long)getpid(),
             (long)gettid()); /* threads of one caller may build at once */
    if (build(plan, tmp, dir) < 0 || !trusted_dir(dir)) {
        dir[0] = '\0';
        return -1;
    }
    return 0;
}
