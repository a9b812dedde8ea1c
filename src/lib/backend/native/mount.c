/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Build the sandbox's root from the plan, with the new mount API:
 *
 *  1. capture every bind source as a detached mount tree (open_tree), with
 *     its attributes (ro, nosuid, nodev, idmap) set before it is attached,
 *     so a recursive bind is read-only all the way down in one call;
 *  2. attach a fresh tmpfs as the new root;
 *  3. attach each mount at its target, resolving the target with
 *     openat2(RESOLVE_IN_ROOT) so no symlink can point a mount outside;
 *  4. pivot_root into it and detach the old root.
 *
 * Runs in the setup child, after clone: no allocation, no stdio. Errors set
 * a rf_setup_fail (step, errno, path) for the caller to print. */
#include "backend/native/sandbox.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NEWROOT_AT "/tmp" /* where the new root is attached until pivot_root */

int rf_fail(rf_setup_fail *f, const char *step, const char *detail)
{
    f->errnum = errno;
    f->step = step;
    snprintf(f->detail, sizeof f->detail, "%s", detail ? detail : "");
    return -1;
}

static int openat2_in_root(int rootfd, const char *path, int flags)
{
    struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
                            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
    /* openat2 resolves relative to rootfd; strip the leading slashes. */
    while (*path == '/')
        path++;
    return (int)syscall(SYS_openat2, rootfd, *path ? path : ".", &how, sizeof how);
}

/* Every tree we touch is also made private: a clone of a shared mount
 * (systemd makes / shared) joins its peer group, so without this a mount
 * made on top of it inside the sandbox (a protected file's read-only bind
 * on the workspace) would propagate back into the host's mount table. */
static int set_attr(int fd, uint64_t set, int userns_fd, bool recursive)
{
    struct mount_attr attr = { .attr_set = set, .propagation = MS_PRIVATE };
    if (set & MOUNT_ATTR_IDMAP)
        attr.userns_fd = (uint64_t)userns_fd;
    unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
    return (int)syscall(SYS_mount_setattr, fd, "", flags, &attr, sizeof attr);
}

/* The usual filesystems that cannot be idmapped, for the message. */
static const char *fs_name(int fd)
{
    static const struct { unsigned long magic; const char *name; } known[] = {
        { 0x01021994, "tmpfs, idmapped from Linux 6.3" }, { 0x858458f6, "ramfs" },
        { 0x794c7630, "overlayfs" },
        { 0x6969, "NFS" }, { 0x65735546, "FUSE" }, { 0x01021997, "9p" },
        { 0xff534d42, "CIFS" }, { 0x00c36400, "CephFS" }, { 0x73717368, "squashfs" },
    };
    struct statfs st;
    if (fstatfs(fd, &st) == 0)
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            if ((unsigned long)st.f_type == known[i].magic)
                return known[i].name;
    return "a filesystem without idmapped mounts here";
}

static int fail_idmap(rf_setup_fail *f, int fd, const char *source)
{
    int e = errno;
    char detail[sizeof f->detail];
    snprintf(detail, sizeof detail, "%s (%s)", source, fs_name(fd));
    errno = e;
    return rf_fail(f, "idmap a writable mount", detail);
}

static int attach(int mnt_fd, int target_fd)
{
    return (int)syscall(SYS_move_mount, mnt_fd, "", target_fd, "",
                        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* A fresh kernel filesystem (tmpfs, proc, devpts) as a detached mount. */
static int new_fs(const char *type, const char *const *opts, uint64_t attrs)
{
    int fsfd = (int)syscall(SYS_fsopen, type, FSOPEN_CLOEXEC);
    if (fsfd < 0)
        return -1;
    for (size_t i = 0; opts && opts[i]; i += 2)
        if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0) < 0) {
            close(fsfd);
            return -1;
        }
    int mfd = -1;
    if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
        mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, attrs);
    int saved = errno;
    close(fsfd);
    errno = saved;
    return mfd;
}

static int new_tmpfs(unsigned mode)
{
    char modestr[16];
    snprintf(modestr, sizeof modestr, "%o", mode);
    const char *opts[] = { "mode", modestr, NULL };
    return new_fs("tmpfs", opts, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

/* Open target inside the new root, creating it (a directory, or an empty
 * file when `file`) and its missing parents. `may_create` is false when the
 * target would have to be created on a read-only host bind. */
static int open_target(int rootfd, const char *target, bool file, bool may_create)
{
    int fd = openat2_in_root(rootfd, target, O_PATH);
    if (fd >= 0 || errno != ENOENT)
        return fd;
    if (!may_create) {
        errno = ENOENT;
        return -1;
    }
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", target);
    char *slash = strrchr(parent, '/');
    if (!slash || slash[1] == '\0') {
        errno = EINVAL;
        return -1;
    }
    *slash = '\0';
    const char *name = slash + 1;
    int pfd = open_target(rootfd, *parent ? parent : "/", false, true);
    if (pfd < 0)
        return -1;
    int rc;
    if (file) {
        /* mknodat on an O_PATH dirfd creates an empty regular file. */
        rc = mknodat(pfd, name, S_IFREG | 0644, 0);
    } else {
        rc = mkdirat(pfd, name, 0755);
    }
    if (rc < 0 && errno != EEXIST) {
        close(pfd);
        return -1;
    }
    fd = openat2_in_root(pfd, name, O_PATH);
    close(pfd);
    return fd;
}

/* May a missing mount point for mounts[i] be created? Only on our own tmpfs
 * or inside a writable bind: never on a read-only host path. */
static bool may_create_at(const rf_plan *plan, size_t i)
{
    const rf_mount *cover = NULL;
    size_t best = 0;
    for (size_t j = 0; j < i; j++) {
        const rf_mount *m = &plan->mounts[j];
        size_t len = strlen(m->target);
        if (m->type != RF_MOUNT_SYMLINK && m->type != RF_MOUNT_RO_SELF && m->type != RF_MOUNT_COPY &&
            rf_path_is_beneath(plan->mounts[i].target, m->target) && len >= best) {
            cover = m;
            best = len;
        }
    }
    return !cover || cover->type != RF_MOUNT_BIND || cover->writable;
}

/* Re-checked after open: the plan's "small and world-readable" must still
 * hold for the file actually read (a root caller could read anything). */
static int open_copy_source(const rf_mount *m, rf_mount_src *src)
{
    struct stat st;
    src->fd = open(m->source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (src->fd < 0 || fstat(src->fd, &st) < 0)
        return -1;
    if (!rf_copy_allowed(&st)) {
        errno = EPERM;
        return -1;
    }
    src->size = st.st_size;
    return 0;
}

/* The directory the last copy went into: the curated /etc is a run of
 * copies into one directory, so it is resolved once, not once per file. */
typedef struct {
    char path[4096];
    int fd;
} copy_dir;

static int copy_dir_open(copy_dir *d, int rootfd, const char *parent, bool create)
{
    if (d->fd >= 0 && strcmp(d->path, parent) == 0)
        return d->fd;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = open_target(rootfd, *parent ? parent : "/", false, create);
    snprintf(d->path, sizeof d->path, "%s", d->fd >= 0 ? parent : "");
    return d->fd;
}

/* Copy the source to out, as many bytes as it had when it was checked
 * (a file that grows meanwhile is cut there: the copy never exceeds the
 * size limit, and a small file takes one call). sendfile moves the bytes
 * in the kernel; read/write where it cannot serve this pair. */
int rf_mount_copy_bytes(const rf_mount_src *src, int out)
{
    off_t left = src->size;
    ssize_t n = 1;
    while (left > 0 && (n = sendfile(out, src->fd, NULL, (size_t)left)) > 0)
        left -= n;
    if (left == 0 || n == 0)
        return 0; /* all of it, or the file shrank: what there was */
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
    char buf[16384];
    while (left > 0 && (n = read(src->fd, buf, left < (off_t)sizeof buf ? (size_t)left : sizeof buf)) > 0) {
        if (write(out, buf, (size_t)n) != n)
            return -1;
        left -= n;
    }
    return n < 0 ? -1 : 0;
}

/* Write the copy into the new root (still writable at this point). */
static int write_copy(int rootfd, const rf_mount *m, const rf_mount_src *src, bool create, copy_dir *d)
{
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", m->target);
    char *slash = strrchr(parent, '/');
    *slash = '\0';
    int pfd = copy_dir_open(d, rootfd, parent, create);
    if (pfd < 0)
        return -1;
    int out = openat(pfd, slash + 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0)
        return -1;
    int rc = rf_mount_copy_bytes(src, out);
    close(out);
    return rc;
}

/* The cached /etc (etc-cache.c) as a detached read-only tree in
 * srcs[n_mounts]; -1 when there is none or it cannot be opened now (the
 * copies are made as without a cache). */
static void capture_etc_cache(const rf_plan *plan, rf_mount_src *srcs, const char *etc_cache)
{
    int *fd = &srcs[plan->n_mounts].fd;
    *fd = -1;
    if (!etc_cache || !*etc_cache)
        return;
    *fd = (int)syscall(SYS_open_tree, AT_FDCWD, etc_cache, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (*fd >= 0 && set_attr(*fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, -1, false) < 0) {
        close(*fd);
        *fd = -1;
    }
}

/* changes: overlay: the session's directory (upper/ and work/ must be on
 * one mount), captured like a bind, writable. Never idmapped: overlayfs
 * writes its work directory with the mounter's (a root caller's real
 * root) credentials, which an idmapped mount cannot map (EOVERFLOW). The
 * upper layer so holds the sandbox user's host ids; apply writes the
 * real files as the one who applies. */
static int capture_session(const rf_mount *m, rf_mount_src *src, rf_setup_fail *f)
{
    src->upper_fd = (int)syscall(SYS_open_tree, AT_FDCWD, m->overlay, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (src->upper_fd < 0)
        return rf_fail(f, "overlay session directory", m->overlay);
    if (set_attr(src->upper_fd, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, -1, false) < 0)
        return rf_fail(f, "set mount attributes", m->overlay);
    return 0;
}

int rf_mount_capture_sources(const rf_plan *plan, rf_mount_src *srcs, const char *etc_cache, int userns_fd,
                             int owner_userns_fd, rf_setup_fail *f)
{
    capture_etc_cache(plan, srcs, etc_cache);
    bool cached_etc = srcs[plan->n_mounts].fd >= 0;
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        int *fd = &srcs[i].fd;
        *fd = -1;
        srcs[i].upper_fd = -1;
        if (cached_etc && rf_etc_cache_covers(plan, i))
            continue;
        if (m->type == RF_MOUNT_COPY) {
            if (open_copy_source(m, &srcs[i]) < 0)
                return rf_fail(f, "copy source", m->source);
            continue;
        }
        if (m->type != RF_MOUNT_BIND)
            continue;
        *fd = (int)syscall(SYS_open_tree, AT_FDCWD, m->source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (*fd < 0)
            return rf_fail(f, "bind source", m->source);
        uint64_t attrs = MOUNT_ATTR_NOSUID;
        if (!m->writable || m->overlay) /* an overlay's lower layer is never written */
            attrs |= MOUNT_ATTR_RDONLY;
        if (!m->devices)
            attrs |= MOUNT_ATTR_NODEV;
        if (set_attr(*fd, attrs, -1, true) < 0)
            return rf_fail(f, "set mount attributes", m->source);
        /* The idmap goes on separately: a read-only bind works without
         * it (files keep their host owner). A writable one would not: the
         * sandbox's root is not host root, so it could not write there,
         * and a filesystem that cannot be idmapped (EINVAL) is refused
         * rather than left mysteriously read-only. EPERM is another case:
         * a caller that is root only in a user namespace of its own (a
         * rootless container) may not idmap its host's mounts at all, and
         * has never had its workspace idmapped (docs: Known limits). */
        int map = m->idmap_owner && owner_userns_fd >= 0 ? owner_userns_fd : userns_fd;
        if (m->idmap && map >= 0 && set_attr(*fd, MOUNT_ATTR_IDMAP, map, true) < 0 && m->writable &&
            errno != EPERM)
            return fail_idmap(f, *fd, m->source);
        if (m->overlay && capture_session(m, &srcs[i], f) < 0)
            return -1;
    }
    return 0;
}

#define STAGE_NAME ".rf-session" /* in the new root, only while the overlay is made */

/* "lowerdir" takes a ':'-separated list: escape what it would split on
 * (kernels before 6.8 lack "lowerdir+", which takes one path as it is). */
static void escape_layer(char *out, size_t size, const char *in)
{
    size_t o = 0;
    for (; *in && o + 2 < size; in++) {
        if (*in == ':' || *in == '\\' || *in == ',')
            out[o++] = '\\';
        out[o++] = *in;
    }
    out[o] = '\0';
}

static int overlay_configure(int fsfd, const char *lower, bool userxattr)
{
    char upper[64], work[64], esc[8192];
    snprintf(upper, sizeof upper, "%s/%s/upper", NEWROOT_AT, STAGE_NAME);
    snprintf(work, sizeof work, "%s/%s/work", NEWROOT_AT, STAGE_NAME);
    if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "lowerdir+", lower, 0) < 0) {
        escape_layer(esc, sizeof esc, lower);
        if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "lowerdir", esc, 0) < 0)
            return -1;
    }
    /* redirect_dir and metacopy off: every change is a whole entry in the
     * upper layer, which is what the changeset reads (scan.c). An
     * unprivileged mount keeps its xattrs in user.* (userxattr), which
     * implies both (and refuses them named). */
    const char *opts[][2] = { { "upperdir", upper }, { "workdir", work }, { "index", "off" },
                              { "redirect_dir", "off" }, { "metacopy", "off" } };
    size_t n = userxattr ? 3 : sizeof opts / sizeof opts[0];
    for (size_t i = 0; i < n; i++)
        if (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, opts[i][0], opts[i][1], 0) < 0 &&
            (i < 2 || errno != EINVAL))
            return -1;
    if (userxattr && syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
        return -1;
    return (int)syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
}

/* The overlay over the workspace's (read-only) bind, already attached at
 * its target: the session's tree is staged in the new root, the overlay
 * made from paths through it, attached on top, and the stage removed
 * (the overlay holds its layers). */
static int mount_overlay(const rf_plan *plan, int rootfd, const rf_mount *m, const rf_mount_src *src,
                         rf_setup_fail *f)
{
    char lower[4200], stage[64];
    snprintf(lower, sizeof lower, "%s%s", NEWROOT_AT, m->target);
    snprintf(stage, sizeof stage, "%s/%s", NEWROOT_AT, STAGE_NAME);
    if (mkdirat(rootfd, STAGE_NAME, 0700) < 0)
        return rf_fail(f, "overlay stage", STAGE_NAME);
    int sfd = openat2_in_root(rootfd, STAGE_NAME, O_PATH);
    if (sfd < 0 || attach(src->upper_fd, sfd) < 0) {
        if (sfd >= 0)
            close(sfd);
        return rf_fail(f, "overlay stage", m->overlay);
    }
    close(sfd);
    int fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
    int mfd = fsfd >= 0 && overlay_configure(fsfd, lower, plan->overlay_userxattr) == 0
                  ? (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
                  : -1;
    int saved = errno;
    if (fsfd >= 0)
        close(fsfd);
    errno = saved;
    if (mfd < 0)
        return rf_fail(f, "mount the workspace overlay", m->overlay);
    int tfd = openat2_in_root(rootfd, m->target, O_PATH);
    int rc = tfd < 0 || attach(mfd, tfd) < 0 ? rf_fail(f, "attach the workspace overlay", m->target) : 0;
    if (tfd >= 0)
        close(tfd);
    close(mfd);
    if (umount2(stage, MNT_DETACH) < 0 || unlinkat(rootfd, STAGE_NAME, AT_REMOVEDIR) < 0)
        return rc < 0 ? rc : rf_fail(f, "overlay stage", stage);
    return rc;
}

/* A denied file's mask: the host's /dev/null, bound nodev (so it cannot even
 * be opened: EACCES), read-only and noexec. An empty device rather than an
 * empty file: nothing needs creating, and bwrap and the container runtimes
 * mask files with it too. Made before pivot_root, while /dev/null is the
 * host's. */
static int file_mask(void)
{
    int fd = (int)syscall(SYS_open_tree, AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (fd >= 0 && set_attr(fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, -1,
                            false) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int mount_one(const rf_plan *plan, size_t i, int rootfd, const rf_mount_src *src, copy_dir *d,
                     rf_setup_fail *f)
{
    const rf_mount *m = &plan->mounts[i];
    bool create = may_create_at(plan, i);
    if (m->type == RF_MOUNT_COPY)
        return write_copy(rootfd, m, src, create, d) < 0 ? rf_fail(f, "copy", m->target) : 0;
    if (m->type == RF_MOUNT_SYMLINK) {
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", m->target);
        char *slash = strrchr(parent, '/');
        *slash = '\0';
        int pfd = open_target(rootfd, *parent ? parent : "/", false, create);
        if (pfd < 0 || (symlinkat(m->source, pfd, slash + 1) < 0 && errno != EEXIST)) {
            if (pfd >= 0)
                close(pfd);
            return rf_fail(f, "symlink", m->target);
        }
        close(pfd);
        return 0;
    }
    bool file = (m->type == RF_MOUNT_BIND && !m->source_dir) || m->type == RF_MOUNT_MASK_FILE;
    int tfd = open_target(rootfd, m->target, file, create && m->type != RF_MOUNT_RO_SELF);
    if (tfd < 0) {
        if (m->type == RF_MOUNT_RO_SELF && errno == ENOENT)
            return 0; /* e.g. a /proc entry this kernel lacks */
        return rf_fail(f, create ? "mount point" : "mount point (inside a read-only bind)", m->target);
    }
    int mfd = -1;
    bool borrowed = false; /* a captured bind: its fd is closed with the others */
    switch (m->type) {
    case RF_MOUNT_BIND:
        mfd = src->fd;
        borrowed = true;
        break;
    case RF_MOUNT_TMPFS:
        mfd = new_tmpfs(m->mode);
        break;
    case RF_MOUNT_PROC:
        mfd = new_fs("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        break;
    case RF_MOUNT_DEVPTS: {
        const char *opts[] = { "ptmxmode", "0666", "mode", "0620", NULL };
        int fsfd = (int)syscall(SYS_fsopen, "devpts", FSOPEN_CLOEXEC);
        if (fsfd >= 0) {
            syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "newinstance", NULL, 0);
            for (size_t k = 0; opts[k]; k += 2)
                syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, opts[k], opts[k + 1], 0);
            if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
                mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
            close(fsfd);
        }
        break;
    }
    case RF_MOUNT_RO_SELF:
        mfd = (int)syscall(SYS_open_tree, tfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
        if (mfd >= 0 && set_attr(mfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, -1, true) < 0) {
            close(mfd);
            mfd = -1;
        }
        break;
    case RF_MOUNT_MASK_FILE:
        mfd = file_mask();
        break;
    case RF_MOUNT_SYMLINK:
    case RF_MOUNT_COPY:
        break;
    }
    if (mfd < 0 || attach(mfd, tfd) < 0) {
        int saved = errno;
        if (mfd >= 0 && !borrowed)
            close(mfd);
        close(tfd);
        errno = saved;
        return rf_fail(f, m->type == RF_MOUNT_PROC ? "mount /proc" : "mount", m->target);
    }
    if (!borrowed)
        close(mfd);
    close(tfd);
    return m->overlay ? mount_overlay(plan, rootfd, m, src, f) : 0;
}

/* Read-only tmpfs mounts (/dev, masks) were filled while writable; seal them. */
static int seal_readonly_tmpfs(const rf_plan *plan, int rootfd, rf_setup_fail *f)
{
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->type != RF_MOUNT_TMPFS || m->writable)
            continue;
        int fd = openat2_in_root(rootfd, m->target, O_PATH);
        if (fd < 0 || set_attr(fd, MOUNT_ATTR_RDONLY, -1, false) < 0) {
            if (fd >= 0)
                close(fd);
            return rf_fail(f, "make read-only", m->target);
        }
        close(fd);
    }
    return 0;
}

int rf_mount_build_root(const rf_plan *plan, const rf_mount_src *srcs, rf_setup_fail *f)
{
    /* Nothing we mount may propagate back to the host's mount table. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return rf_fail(f, "make mounts private", "/");
    int rootmnt = new_tmpfs(0755);
    if (rootmnt < 0)
        return rf_fail(f, "create root tmpfs", NULL);
    if (syscall(SYS_move_mount, rootmnt, "", AT_FDCWD, NEWROOT_AT, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
        close(rootmnt);
        return rf_fail(f, "attach root tmpfs", NEWROOT_AT);
    }
    close(rootmnt);
    int rootfd = open(NEWROOT_AT, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0)
        return rf_fail(f, "open new root", NEWROOT_AT);
    int rc = 0;
    const rf_mount_src *etc = &srcs[plan->n_mounts];
    if (etc->fd >= 0) {
        int tfd = open_target(rootfd, "/etc", false, true);
        rc = tfd < 0 || attach(etc->fd, tfd) < 0 ? rf_fail(f, "mount the cached /etc", "/etc") : 0;
        if (tfd >= 0)
            close(tfd);
    }
    copy_dir d = { .fd = -1 };
    for (size_t i = 0; i < plan->n_mounts && rc == 0; i++) {
        if (etc->fd >= 0 && rf_etc_cache_covers(plan, i))
            continue;
        /* A mount may cover the directory copies went into: resolve anew. */
        if (plan->mounts[i].type != RF_MOUNT_COPY && d.fd >= 0) {
            close(d.fd);
            d.fd = -1;
        }
        rc = mount_one(plan, i, rootfd, &srcs[i], &d, f);
    }
    if (d.fd >= 0)
        close(d.fd);
    if (rc < 0) {
        close(rootfd);
        return -1;
    }
    if (seal_readonly_tmpfs(plan, rootfd, f) < 0) {
        close(rootfd);
        return -1;
    }
    /* pivot_root(".", "."): the old root ends up stacked on the new one and
     * is detached at once, so nothing of the host's tree stays reachable. */
    if (fchdir(rootfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0) {
        close(rootfd);
        return rf_fail(f, "pivot_root", NEWROOT_AT);
    }
    close(rootfd);
    if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        return rf_fail(f, "detach old root", "/");
    struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &ro, sizeof ro) < 0)
        return rf_fail(f, "make root read-only", "/");
    return 0;
}
