/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Ending a process tree without a pid namespace. The init of the landlock
 * and none backends is a child subreaper (PR_SET_CHILD_SUBREAPER): every
 * orphan below it, double-forked and setsid'd ones included, is reparented
 * to it rather than to the host's init, so the whole tree stays findable
 * through /proc/<pid>/task/<tid>/children, starting from init itself.
 *
 * Runs in init, a child of a possibly multi-threaded caller: no allocation,
 * no stdio; raw getdents64 and fixed buffers. */
#include "backend/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Processes one walk can hold; a larger tree is finished by the next pass
 * of rf_reaper_kill_all (a process killed by SIGKILL cannot fork again). */
#define TREE_MAX 4096
/* Passes of rf_reaper_kill_all before giving up on processes that do not
 * die (stuck in uninterruptible sleep with SIGKILL pending). */
#define KILL_PASSES 3000

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

typedef struct tree {
    pid_t pids[TREE_MAX];
    int n;
} tree;

/* "/proc/<a>/task" or "<a>/children" without snprintf. */
static void fmt_path(char *buf, const char *pre, unsigned long a, const char *post)
{
    char digits[24];
    int n = 0;
    do
        digits[n++] = (char)('0' + a % 10);
    while ((a /= 10) && n < (int)sizeof digits);
    while (*pre)
        *buf++ = *pre++;
    while (n)
        *buf++ = digits[--n];
    while (*post)
        *buf++ = *post++;
    *buf = '\0';
}

static void add(tree *t, pid_t pid)
{
    for (int i = 0; i < t->n; i++)
        if (t->pids[i] == pid)
            return;
    if (t->n < TREE_MAX)
        t->pids[t->n++] = pid;
}

/* Parse the space-separated pids of one task's children file into t. */
static void read_children_file(int dirfd, const char *tid, tree *t)
{
    char path[64];
    int i = 0;
    for (; tid[i] && i < 40; i++)
        path[i] = tid[i];
    const char *suffix = "/children";
    for (int j = 0; suffix[j]; j++)
        path[i++] = suffix[j];
    path[i] = '\0';
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[1024];
    unsigned long cur = 0;
    bool in_num = false;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t k = 0; k < n; k++) {
            if (buf[k] >= '0' && buf[k] <= '9') {
                cur = cur * 10 + (unsigned long)(buf[k] - '0');
                in_num = true;
            } else if (in_num) {
                add(t, (pid_t)cur);
                cur = 0;
                in_num = false;
            }
        }
    }
    if (in_num)
        add(t, (pid_t)cur);
    close(fd);
}

/* Every thread of pid may have children of its own: read them all. */
static void read_children(pid_t pid, tree *t)
{
    char path[48];
    fmt_path(path, "/proc/", (unsigned long)pid, "/task");
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return;
    char buf[2048];
    long n;
    while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] >= '0' && d->d_name[0] <= '9')
                read_children_file(dirfd, d->d_name, t);
        }
    }
    close(dirfd);
}

/* Collect the tree below the caller first, then signal it: a parent killed
 * before its children were read would hand them to us too late. */
int rf_reaper_signal_all(pid_t command, int sig)
{
    tree t;
    t.n = 0;
    read_children(getpid(), &t);
    for (int i = 0; i < t.n; i++)
        read_children(t.pids[i], &t); /* t.n grows: a breadth-first walk */
    /* The command's process group first: it reaches members even when
     * /proc is not readable here. */
    int sent = command > 0 && kill(-command, sig) == 0;
    for (int i = 0; i < t.n; i++) {
        if (kill(t.pids[i], sig) == 0)
            sent++;
        /* A stopped process would hold SIGTERM pending forever. */
        if (sig != SIGKILL && sig != SIGCONT)
            kill(t.pids[i], SIGCONT);
    }
    return sent;
}

int rf_reaper_signal_below(int skip, int sig)
{
    tree t;
    t.n = 0;
    read_children(getpid(), &t);
    int start = 0;
    for (int gen = 0; gen < skip && start < t.n; gen++) {
        int end = t.n;
        for (int i = start; i < end; i++)
            read_children(t.pids[i], &t);
        start = end;
    }
    for (int i = start; i < t.n; i++)
        read_children(t.pids[i], &t); /* everything below, breadth-first */
    int sent = 0;
    for (int i = start; i < t.n; i++) {
        if (kill(t.pids[i], sig) == 0)
            sent++;
        if (sig != SIGKILL && sig != SIGCONT)
            kill(t.pids[i], SIGCONT);
    }
    return sent;
}

/* Reap what has exited; returns false once no child is left. */
static bool reap_some(pid_t command, int *status, bool *done, bool *reaped)
{
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p < 0 && errno == EINTR)
            continue;
        if (p < 0)
            return false; /* ECHILD: nothing left */
        if (p == 0)
            return true;
        *reaped = true;
        if (p == command) {
            *status = st;
            *done = true;
        }
    }
}

void rf_reaper_kill_all(pid_t command, int *status, bool *done)
{
    for (int pass = 0; pass < KILL_PASSES; pass++) {
        rf_reaper_signal_all(*done ? 0 : command, SIGKILL);
        bool reaped = false;
        if (!reap_some(command, status, done, &reaped))
            return;
        if (!reaped)
            poll(NULL, 0, 1); /* give the killed a moment to exit */
    }
}
