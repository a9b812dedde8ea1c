/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf-probe observe-hostile PATH N: what a hostile command does to the
 * observer's supervisor (ringfence learn, run --explain-denials): N
 * path-taking calls in a burst, paths that are not NUL-terminated before
 * an unmapped page, too long, or unmapped pointers, and threads racing
 * each other on the same buffer. Then the one crossing that counts: read
 * PATH, which the sandbox hides. Prints "ok" (exit 0) if it could read it,
 * "denied: ..." (exit 1) if the boundary held. */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *target;
static char race_buf[PATH_MAX];
static atomic_bool stop;

static void *flipper(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&stop); i++)
        snprintf(race_buf, sizeof race_buf, "%s", i % 2 ? target : "/nonexistent/racing/path");
    return NULL;
}

static void *opener(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, race_buf, O_RDONLY);
        if (fd >= 0)
            close(fd);
        struct stat st;
        syscall(SYS_newfstatat, AT_FDCWD, race_buf, &st, 0);
    }
    return NULL;
}

/* A string filling a page, with no NUL before the unmapped page after. */
static void unterminated(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    memset(p, 'A', (size_t)page);
    p[0] = '/';
    munmap(p + page, (size_t)page);
    syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
    syscall(SYS_execve, p, NULL, NULL);
    munmap(p, (size_t)page);
}

int probe_observe_hostile(const char *path, const char *count)
{
    target = path;
    long n = strtol(count, NULL, 10);
    for (long i = 0; i < n; i++) { /* the flood */
        int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
        if (fd >= 0)
            close(fd);
    }
    unterminated();
    static char longpath[PATH_MAX * 2];
    memset(longpath, 'B', sizeof longpath - 1);
    longpath[0] = '/';
    syscall(SYS_openat, AT_FDCWD, longpath, O_RDONLY);       /* longer than PATH_MAX */
    syscall(SYS_openat, AT_FDCWD, (const char *)16, O_RDONLY); /* unmapped pointers */
    syscall(SYS_openat, AT_FDCWD, (const char *)-4096L, O_RDONLY);
    syscall(SYS_connect, 0, (const void *)16, 110);
    snprintf(race_buf, sizeof race_buf, "%s", path);
    pthread_t t[5];
    pthread_create(&t[0], NULL, flipper, NULL);
    for (int i = 1; i < 5; i++)
        pthread_create(&t[i], NULL, opener, NULL);
    for (int i = 1; i < 5; i++)
        pthread_join(t[i], NULL);
    atomic_store(&stop, true);
    pthread_join(t[0], NULL);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char c;
    long rc = fd < 0 ? -1 : read(fd, &c, 1);
    return probe_result(rc < 0 ? -1 : 0);
}
