/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A sandbox's process tree seen from the host: its figures for `ps`, and
 * ending it for `stop` (registry.h). The tree is init and every process
 * whose parent chain leads to it (init is a subreaper, so orphans stay). */
#include "registry/registry.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void rf_registry_tree(pid_t init, json_t *o);

/* The most processes looked at in one /proc walk (pid_max is 4M). */
#define MAX_PROCS (1 << 20)

typedef struct proc_row {
    pid_t pid, ppid;
} proc_row;

/* Every process's pid and parent. */
static proc_row *all_procs(size_t *n)
{
    _cleanup_closedir_ DIR *d = opendir("/proc");
    size_t cap = 512;
    proc_row *rows = d ? malloc(cap * sizeof *rows) : NULL;
    *n = 0;
    struct dirent *e;
    while (rows && (e = readdir(d)) && *n < MAX_PROCS) {
        pid_t pid = (pid_t)atoi(e->d_name);
        pid_t ppid;
        if (pid <= 0 || rf_registry_proc(pid, NULL, &ppid, NULL) < 0)
            continue;
        if (*n == cap) {
            proc_row *r = realloc(rows, (cap *= 2) * sizeof *rows);
            if (!r)
                break;
            rows = r;
        }
        rows[(*n)++] = (proc_row){ pid, ppid };
    }
    return rows;
}

/* The pids of init's tree, init first; *n of them (malloc'd). */
static pid_t *tree_of(pid_t init, size_t *n)
{
    size_t total;
    _cleanup_free_ proc_row *rows = all_procs(&total);
    pid_t *tree = rows ? malloc((total + 1) * sizeof *tree) : NULL;
    *n = 0;
    if (!tree)
        return NULL;
    tree[(*n)++] = init;
    /* Breadth first: each member's children join the end. */
    for (size_t i = 0; i < *n; i++)
        for (size_t j = 0; j < total; j++)
            if (rows[j].ppid == tree[i] && rows[j].pid != init)
                tree[(*n)++] = rows[j].pid;
    return tree;
}

/* utime+stime (+ the reaped children's, once, for init) and RSS pages. */
static void proc_figures(pid_t pid, bool with_children, double *cpu, unsigned long long *rss_pages)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long long ut, st, rss;
    long long cut, cst;
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime stime cutime cstime priority nice threads itrealvalue
     * starttime vsize rss */
    if (!p || sscanf(p + 2,
                     "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %*d %*d %*u %*u %llu",
                     &ut, &st, &cut, &cst, &rss) != 5)
        return;
    double hz = (double)sysconf(_SC_CLK_TCK);
    *cpu += (double)(ut + st) / hz + (with_children ? (double)(cut + cst) / hz : 0);
    *rss_pages += rss;
}

void rf_registry_tree(pid_t init, json_t *o)
{
    size_t n = 0;
    _cleanup_free_ pid_t *tree = tree_of(init, &n);
    double cpu = 0;
    unsigned long long pages = 0;
    for (size_t i = 0; tree && i < n; i++)
        proc_figures(tree[i], i == 0, &cpu, &pages);
    json_object_set_new(o, "processes", json_integer((json_int_t)n));
    json_object_set_new(o, "cpu_seconds", json_real((double)(long long)(cpu * 100) / 100));
    unsigned long long page = (unsigned long long)sysconf(_SC_PAGESIZE);
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)(pages * page)));
}

static int pidfd_of(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Wait up to ms for the pidfd to say its process ended. */
static bool ended_within(int pidfd, int ms)
{
    struct pollfd p = { .fd = pidfd, .events = POLLIN };
    int n;
    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return n > 0;
}

int rf_registry_stop(const json_t *entry, double grace_s, bool *ret_killed, rf_error **err)
{
    const char *id = json_string_value(json_object_get(entry, "id"));
    pid_t pid = (pid_t)json_integer_value(json_object_get(entry, "pid"));
    uid_t uid = (uid_t)json_integer_value(json_object_get(entry, "uid"));
    *ret_killed = false;
    if (getuid() != 0 && uid != getuid()) {
        rf_error_set(err, EPERM, "stop %s: the sandbox is uid %u's", id, (unsigned)uid);
        return rf_error_hint_set(err, "only its owner or root may stop a sandbox");
    }
    /* A pidfd first, then the start time again: from here the signal can
     * only reach this process, never one that took its pid. */
    _cleanup_close_ int pidfd = pidfd_of(pid);
    unsigned long long start;
    if (pidfd < 0 || rf_registry_proc(pid, &start, NULL, NULL) < 0 ||
        start != (unsigned long long)json_integer_value(json_object_get(entry, "start")))
        return rf_error_set(err, ESRCH, "stop %s: it has already ended", id);
    if (syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0) < 0)
        return rf_error_set(err, errno, "stop %s: SIGTERM to its init (pid %d)", id, (int)pid);
    if (ended_within(pidfd, (int)(grace_s * 1000)))
        return 0;
    *ret_killed = true;
    /* Without a pid namespace, init's death would orphan the tree: its
     * members first, deepest last found first, then init. */
    if (json_is_true(json_object_get(entry, "tree_via_init"))) {
        size_t n = 0;
        _cleanup_free_ pid_t *tree = tree_of(pid, &n);
        for (size_t i = n; tree && i-- > 1;)
            kill(tree[i], SIGKILL);
    }
    if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
        return rf_error_set(err, errno, "stop %s: SIGKILL to its init (pid %d)", id, (int)pid);
    (void)ended_within(pidfd, 5000);
    return 0;
}
