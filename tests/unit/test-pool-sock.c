/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pool server's socket file (src/lib/pool/sock.c): a server knows
 * when its path no longer leads to its socket (removed, its directory
 * removed, replaced by a file or by another server's socket) and then
 * stops; a chmod is not a replacement; it removes the path on stop only
 * while it is still its own. */
#include "tap.h"
#include "pool/sock.h"
#include "util/error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char dir[64];

/* A socket bound at path by someone else, not listening unless asked. */
static int other_socket(const char *path, bool listening)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || (listening && listen(fd, 1) < 0))
        return -1;
    return fd;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void lifecycle(void)
{
    char path[128], other[128];
    snprintf(path, sizeof path, "%s/s.sock", dir);
    snprintf(other, sizeof other, "%s/other.sock", dir);
    rf_pool_sock s;
    rf_error *err = NULL;
    int fd = rf_pool_sock_listen(path, &s, &err);
    ok(fd >= 0, "listen on a fresh path");
    struct stat st;
    ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "the socket is 0600");
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_OURS, "the path leads to our socket");
    chmod(path, 0666);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_OURS, "a chmod does not make it another (ctime moves, identity not)");
    chmod(path, 0600);

    rf_pool_sock second;
    rf_error *busy = NULL;
    ok(rf_pool_sock_listen(path, &second, &busy) < 0 && rf_error_errno(busy) == EADDRINUSE,
       "a second server on the live path is refused (EADDRINUSE)");
    ok(busy && rf_error_hint(busy) && strstr(rf_error_hint(busy), "--socket"), "...with a hint naming --socket");
    rf_error_free(busy);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_OURS, "...and ours is untouched");

    /* Our socket moved, a symlink to it at the path: clients still reach it. */
    char moved[140];
    snprintf(moved, sizeof moved, "%s/moved.sock", dir);
    ok(rename(path, moved) == 0 && symlink(moved, path) == 0, "control: our socket moved, a symlink left to it");
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_OURS, "a symlink to our socket still leads to it");
    rf_pool_sock_remove(&s);
    ok(exists(moved) && exists(path), "removing on stop leaves a symlink (and what it points to)");
    unlink(moved);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_REMOVED, "the socket a symlink led to removed: removed");
    unlink(path);
    ok(rename(path, path) < 0 && symlink(path, path) == 0, "control: a symlink to itself");
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_REPLACED, "a symlink loop: replaced");
    unlink(path);

    int ofd = other_socket(other, true);
    ok(ofd >= 0 && rename(other, path) == 0, "control: another server's socket renamed onto the path");
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_REPLACED, "replaced by another socket: seen");
    rf_pool_sock_remove(&s);
    ok(exists(path), "stopping then leaves the other server's socket in place");
    rf_error *why = NULL;
    is_int(rf_pool_sock_gone_error(&s, RF_POOL_SOCK_REPLACED, &why), -1, "the reason is an rf_error");
    like(rf_error_message(why), "was replaced", "it says the socket was replaced");
    like(rf_error_message(why), path, "...and names the path");
    rf_error_free(why);
    close(ofd);

    unlink(path);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_REMOVED, "removed: seen");
    int again = other_socket(path, true);
    struct stat now;
    bool reused = stat(path, &now) == 0 && now.st_ino == s.ino;
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_REPLACED, "removed, another socket made there at once: replaced");
    printf("#   (its inode number %s ours)\n", reused ? "is" : "is not");
    close(again);
    unlink(path);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_REPLACED, "a plain file at the path: replaced");
    unlink(path);
    close(fd);
}

static void directory(void)
{
    char sub[128], path[160];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(path, sizeof path, "%s/s.sock", sub);
    mkdir(sub, 0700);
    rf_pool_sock s;
    rf_error *err = NULL;
    int fd = rf_pool_sock_listen(path, &s, &err);
    ok(fd >= 0, "listen in a subdirectory");
    unlink(path);
    rmdir(sub);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_DIR_REMOVED, "its directory removed: seen");
    rf_error *why = NULL;
    rf_pool_sock_gone_error(&s, RF_POOL_SOCK_DIR_REMOVED, &why);
    like(rf_error_message(why), sub, "the reason names the directory");
    ok(rf_error_hint(why) != NULL, "...with a hint");
    rf_error_free(why);
    close(fd);

    /* A bare name: its directory is ".", which still stats once removed. */
    char cwd[PATH_MAX];
    mkdir(sub, 0700);
    if (!getcwd(cwd, sizeof cwd) || chdir(sub) < 0)
        return;
    fd = rf_pool_sock_listen("bare.sock", &s, &err);
    ok(fd >= 0, "listen on a bare name");
    unlink("bare.sock");
    rmdir(sub);
    is_int(rf_pool_sock_check(&s), RF_POOL_SOCK_DIR_REMOVED, "a bare name whose directory (cwd) was removed: seen");
    close(fd);
    if (chdir(cwd) < 0)
        return;
}

static void stale_and_limits(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stale.sock", dir);
    int ofd = other_socket(path, false);
    close(ofd); /* bound, never listened on, closed: nobody answers there */
    rf_pool_sock s;
    rf_error *err = NULL;
    int fd = rf_pool_sock_listen(path, &s, &err);
    ok(ofd >= 0 && fd >= 0, "a stale socket nobody listens on is replaced");
    rf_pool_sock_remove(&s);
    ok(!exists(path), "stopping removes our own socket");
    close(fd);

    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    ok(rf_pool_sock_listen(longp, &s, &err) < 0 && rf_error_errno(err) == ENAMETOOLONG,
       "a path past sun_path is refused (ENAMETOOLONG)");
    rf_error_free(err);
}

/* ext4 gives a freed inode number to the next file made: the birth time
 * tells a socket made later at the path apart. */
static void identity(void)
{
    rf_pool_sock s = { .dev = 8, .ino = 42, .has_btime = true, .btime_sec = 100, .btime_nsec = 5 };
    ok(rf_pool_sock_same(&s, 8, 42, true, 100, 5), "same dev, inode and birth time: ours");
    ok(!rf_pool_sock_same(&s, 8, 42, true, 101, 5), "the inode number reused by a newer file: not ours");
    ok(!rf_pool_sock_same(&s, 8, 42, true, 100, 6), "...a nanosecond later: not ours");
    ok(!rf_pool_sock_same(&s, 9, 42, true, 100, 5), "another device: not ours");
    ok(!rf_pool_sock_same(&s, 8, 43, true, 100, 5), "another inode: not ours");
    ok(rf_pool_sock_same(&s, 8, 42, false, 0, 0), "no birth time known now: the inode alone tells");
    s.has_btime = false;
    ok(rf_pool_sock_same(&s, 8, 42, true, 7, 7), "none known at bind: the inode alone tells");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rf-pool-sock.XXXXXX");
    if (!mkdtemp(dir)) {
        printf("not ok 1 - mkdtemp\n1..1\n");
        return 1;
    }
    lifecycle();
    directory();
    stale_and_limits();
    identity();
    rmdir(dir);
    return done_testing();
}
