/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limits/cgroupfs.h"
#include "util/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Sub-cgroups deeper than this are not followed: ringfence makes none, and
 * a bound keeps a hostile tree from exhausting the keeper's stack. */
#define MAX_DEPTH 8

static void sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Waiting for processes to finish exiting: usually microseconds, so start
 * short and back off to a millisecond. */
static void backoff(long *us)
{
    sleep_us(*us);
    if (*us < 1000)
        *us *= 2;
}

int rf_cgroupfs_write(int dir_fd, const char *file, const char *value)
{
    int fd = openat(dir_fd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    size_t len = strlen(value);
    ssize_t n;
    do
        n = write(fd, value, len);
    while (n < 0 && errno == EINTR);
    int r = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
    close(fd);
    return r;
}

/* Read up to size-1 bytes of a small file; NUL-terminated. */
static int read_small(int dir_fd, const char *file, char *buf, size_t size)
{
    int fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    size_t got = 0;
    while (got < size - 1) {
        ssize_t n = read(fd, buf + got, size - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (strncmp(s, "max", 3) == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -EINVAL;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -ERANGE;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int rf_cgroupfs_read_u64(int dir_fd, const char *file, const char *key, uint64_t *out)
{
    char buf[4096];
    int r = read_small(dir_fd, file, buf, sizeof buf);
    if (r < 0)
        return r;
    if (!key)
        return parse_u64(buf, out);
    size_t klen = strlen(key);
    for (const char *line = buf; *line;) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
            return parse_u64(line + klen + 1, out);
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return -ENOENT;
}

static void kill_one(long *pid, pid_t self, int *count, int *denied)
{
    if (*pid > 0 && *pid != self) {
        if (kill((pid_t)*pid, SIGKILL) == 0)
            (*count)++;
        else if (errno == EPERM)
            (*denied)++;
    }
    *pid = -1;
}

/* SIGKILL every pid listed in dir_fd/cgroup.procs. The file can be longer
 * than the buffer, so numbers are parsed across reads. Returns how many
 * were signalled, or -errno (-EPERM: some are there that we may not kill). */
static int kill_procs(int dir_fd)
{
    int fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    pid_t self = getpid();
    char buf[1024];
    long pid = -1; /* -1: not inside a number */
    int count = 0, denied = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = (pid < 0 ? 0 : pid) * 10 + (buf[i] - '0');
                if (pid > 1L << 30)
                    pid = 1L << 30; /* bogus; kill() will just fail */
            } else {
                kill_one(&pid, self, &count, &denied);
            }
        }
    }
    kill_one(&pid, self, &count, &denied);
    close(fd);
    return count == 0 && denied ? -EPERM : count;
}

/* Call fn(sub_fd, depth + 1) for each sub-cgroup of dir_fd; sums results,
 * stops at the first error. */
static int for_each_child(int dir_fd, int depth, int (*fn)(int, int))
{
    if (depth >= MAX_DEPTH)
        return 0;
    int it = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (it < 0)
        return -errno;
    char buf[2048] __attribute__((aligned(8)));
    int sum = 0;
    ssize_t n;
    while ((n = getdents64(it, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_type != DT_DIR || strcmp(d->d_name, ".") == 0 ||
                strcmp(d->d_name, "..") == 0)
                continue;
            int sub = openat(dir_fd, d->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (sub < 0)
                continue; /* removed meanwhile */
            int r = fn(sub, depth + 1);
            close(sub);
            if (r < 0) {
                close(it);
                return r;
            }
            sum += r;
        }
    }
    close(it);
    return sum;
}

static int kill_tree(int dir_fd, int depth)
{
    int here = kill_procs(dir_fd);
    if (here < 0)
        return here;
    int below = for_each_child(dir_fd, depth, kill_tree);
    return below < 0 ? below : here + below;
}

/* Wait until cgroup.events says "populated 0". Not poll(): the kernel
 * rate-limits cgroup.events notifications to one per 10 ms, and the one for
 * "populated 1" usually came just before. */
static int v2_wait_empty(int dir_fd, long long deadline)
{
    long us = 20;
    for (;;) {
        uint64_t populated = 0;
        int r = rf_cgroupfs_read_u64(dir_fd, "cgroup.events", "populated", &populated);
        if (r < 0 || !populated)
            return r;
        if (rf_monotonic_ms() > deadline)
            return -EBUSY;
        backoff(&us);
    }
}

int rf_cgroupfs_kill(int dir_fd, bool v2, int timeout_ms)
{
    long long deadline = rf_monotonic_ms() + timeout_ms;
    /* cgroup.kill (5.14+) kills the whole subtree at once and also catches
     * children forked while it runs, with no pid-reuse race. */
    if (v2 && rf_cgroupfs_write(dir_fd, "cgroup.kill", "1") == 0)
        return v2_wait_empty(dir_fd, deadline);
    /* v1 (and v2 before 5.14): signal what cgroup.procs lists until nothing
     * is left; a process listed may fork before it dies, so repeat. Zombies
     * are not listed, so this ends even if nobody has reaped them yet. */
    long us = 20;
    for (;;) {
        int n = kill_tree(dir_fd, 0);
        if (n <= 0)
            return n;
        if (rf_monotonic_ms() > deadline)
            return -EBUSY;
        backoff(&us);
    }
}

static int rmdir_children(int dir_fd, int depth);

static int rmdir_at(int parent_fd, const char *name, int depth)
{
    if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0)
        return 0;
    int e = errno;
    if (e != EBUSY && e != ENOTEMPTY)
        return -e;
    /* Busy: sub-cgroups first (a process inside may have made some). */
    int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    rmdir_children(fd, depth);
    close(fd);
    return unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

static int rmdir_children(int dir_fd, int depth)
{
    if (depth >= MAX_DEPTH)
        return 0;
    int it = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (it < 0)
        return -errno;
    char buf[2048] __attribute__((aligned(8)));
    ssize_t n;
    while ((n = getdents64(it, buf, sizeof buf)) > 0) {
        for (ssize_t off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_type == DT_DIR && strcmp(d->d_name, ".") != 0 &&
                strcmp(d->d_name, "..") != 0)
                rmdir_at(dir_fd, d->d_name, depth + 1);
        }
    }
    close(it);
    return 0;
}

int rf_cgroupfs_rmdir(int parent_fd, const char *name, int timeout_ms)
{
    long long deadline = rf_monotonic_ms() + timeout_ms;
    long us = 20;
    for (;;) {
        int r = rmdir_at(parent_fd, name, 0);
        if (r == 0 || r == -ENOENT)
            return 0;
        /* EBUSY right after a kill: the last task is still exiting. */
        if ((r != -EBUSY && r != -ENOTEMPTY) || rf_monotonic_ms() > deadline)
            return r;
        backoff(&us);
    }
}
