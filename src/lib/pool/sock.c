/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pool server's socket file: see sock.h. */
#include "pool/sock.h"
#include "util/error.h"
#include "util/unix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define ID_MASK (STATX_TYPE | STATX_INO | STATX_BTIME)

/* flags AT_SYMLINK_NOFOLLOW: the path itself; 0: what a client's
 * connect() reaches through it (a symlink to our socket still does). */
static int identify(const char *path, int flags, struct statx *st)
{
    return statx(AT_FDCWD, path, flags, ID_MASK, st);
}

bool rf_pool_sock_same(const rf_pool_sock *s, dev_t dev, ino_t ino, bool has_btime, int64_t btime_sec,
                       uint32_t btime_nsec)
{
    if (dev != s->dev || ino != s->ino)
        return false;
    /* Compared only when both have one: a file system that keeps none
     * (or a kernel that did not say) leaves st_ino alone to tell. */
    return !(has_btime && s->has_btime) || (btime_sec == s->btime_sec && btime_nsec == s->btime_nsec);
}

static bool same_file(const rf_pool_sock *s, const struct statx *st)
{
    return S_ISSOCK(st->stx_mode) &&
           rf_pool_sock_same(s, makedev(st->stx_dev_major, st->stx_dev_minor), st->stx_ino,
                             (st->stx_mask & STATX_BTIME) != 0, st->stx_btime.tv_sec, st->stx_btime.tv_nsec);
}

/* The directory part of s->path ("." for a bare name), into dir. */
static void dir_of(const rf_pool_sock *s, char *dir, size_t size)
{
    const char *slash = strrchr(s->path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == s->path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - s->path), s->path);
}

rf_pool_sock_state rf_pool_sock_check(const rf_pool_sock *s)
{
    struct statx st;
    if (identify(s->path, 0, &st) == 0)
        return same_file(s, &st) ? RF_POOL_SOCK_OURS : RF_POOL_SOCK_REPLACED;
    if (errno == ELOOP)
        return RF_POOL_SOCK_REPLACED; /* a symlink loop there now */
    if (errno != ENOENT && errno != ENOTDIR)
        return RF_POOL_SOCK_UNKNOWN;
    char dir[sizeof s->path];
    dir_of(s, dir, sizeof dir);
    /* st_nlink 0: "." (a bare name's directory) still stats once removed. */
    struct stat ds;
    return stat(dir, &ds) == 0 && S_ISDIR(ds.st_mode) && ds.st_nlink > 0 ? RF_POOL_SOCK_REMOVED
                                                                        : RF_POOL_SOCK_DIR_REMOVED;
}

/* There is no unlink-if-this-inode: between the check and the unlink,
 * another server would have to remove ours and bind in that instant. */
void rf_pool_sock_remove(const rf_pool_sock *s)
{
    struct statx st;
    if (identify(s->path, AT_SYMLINK_NOFOLLOW, &st) == 0 && same_file(s, &st))
        unlink(s->path);
}

int rf_pool_sock_gone_error(const rf_pool_sock *s, rf_pool_sock_state state, rf_error **err)
{
    static const char unreachable[] = "no client can reach this server any more";
    char dir[sizeof s->path];
    dir_of(s, dir, sizeof dir);
    if (state == RF_POOL_SOCK_REPLACED) {
        rf_error_set(err, 0, "serve: stopping: its socket %s was replaced (another server's socket or another file "
                             "is there now): %s", s->path, unreachable);
        return rf_error_hint_set(err, "to keep two servers, give each its own --socket");
    }
    if (state == RF_POOL_SOCK_DIR_REMOVED)
        rf_error_set(err, 0, "serve: stopping: the directory of its socket, %s, was removed: %s", dir, unreachable);
    else
        rf_error_set(err, 0, "serve: stopping: its socket %s was removed: %s", s->path, unreachable);
    return rf_error_hint_set(err, "start it again where nothing cleans up behind it, e.g. ringfence serve --socket "
                                  "$XDG_RUNTIME_DIR/rf.sock");
}

/* A stale socket (nobody listening) is replaced; a live one is not. */
static void remove_stale(const struct sockaddr_un *a)
{
    struct stat st;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd >= 0 && lstat(a->sun_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
        connect(fd, (const struct sockaddr *)a, sizeof *a) < 0 && errno == ECONNREFUSED)
        unlink(a->sun_path);
    if (fd >= 0)
        close(fd);
}

int rf_pool_sock_listen(const char *path, rf_pool_sock *ret, rf_error **err)
{
    struct sockaddr_un a;
    if (rf_unix_addr(path, &a) < 0)
        return rf_error_set(err, ENAMETOOLONG, "serve: socket path %s is too long", path);
    remove_stale(&a);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    mode_t old = umask(0177);
    int rc = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    struct statx st;
    if (rc < 0 || chmod(path, 0600) < 0 || identify(path, AT_SYMLINK_NOFOLLOW, &st) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        rf_error_set(err, e, "serve: listen on %s", path);
        return rf_error_hint_set(err, e == EADDRINUSE ? "another ringfence serve uses it; choose another --socket"
                                                      : "check the directory exists and is yours");
    }
    *ret = (rf_pool_sock){ .dev = makedev(st.stx_dev_major, st.stx_dev_minor),
                           .ino = st.stx_ino,
                           .has_btime = (st.stx_mask & STATX_BTIME) != 0,
                           .btime_sec = st.stx_btime.tv_sec,
                           .btime_nsec = st.stx_btime.tv_nsec };
    strcpy(ret->path, path);
    return fd;
}
