/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limits/cgmanager.h"
#include "limits/cgroupfs.h"

#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define PIDS_BUF 4096

static struct {
    pthread_mutex_t lock;
    char *dir;  /* where the sandboxes' cgroups go, once found */
    char *top;  /* root's case: the hierarchy's top, enabled too; else NULL */
} made = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL };

/* Is ctrl listed in dir_fd/file (cgroup.controllers, cgroup.subtree_control)? */
static bool listed(int dir_fd, const char *file, const char *ctrl)
{
    char buf[512];
    int fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
        if (strcmp(t, ctrl) == 0)
            return true;
    return false;
}

/* The first pid in dir_fd/cgroup.procs (other than ours with but_self),
 * or 0 (-errno if unreadable). */
static long first_process(int dir_fd, bool but_self)
{
    char buf[PIDS_BUF];
    int fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    for (char *save = NULL, *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
        long pid = strtol(t, NULL, 10);
        if (pid > 0 && (!but_self || pid != (long)getpid()))
            return pid;
    }
    return 0;
}

/* Enable in dir_fd's subtree_control each wanted controller that dir_fd
 * has. Never in a non-root cgroup that holds a process: memory would fail
 * with EBUSY, but pids and cpu (threaded controllers) would succeed and
 * turn it into a thread root whose new children cannot take a process.
 * One write per controller: one the kernel refuses is named alone. */
static int enable_wanted(int dir_fd, const char *dir, const bool want[], rf_error **err)
{
    long pid = 0;
    if (faccessat(dir_fd, "cgroup.type", F_OK, 0) == 0 && (pid = first_process(dir_fd, false))) {
        if (pid < 0)
            return rf_error_set(err, (int)-pid, "reading %s/cgroup.procs", dir);
        return rf_error_set(err, EBUSY, "%s holds processes (pid %ld among them), and cgroup v2 "
                                        "hands a controller down only from an empty cgroup",
                            dir, pid);
    }
    for (int c = 0; c < RF_CTRL_N; c++) {
        const char *name = rf_hierarchy_ctrl_name(c);
        if (!want[c] || !listed(dir_fd, "cgroup.controllers", name) ||
            listed(dir_fd, "cgroup.subtree_control", name))
            continue;
        char plus[32];
        snprintf(plus, sizeof plus, "+%s", name);
        int r = rf_cgroupfs_write(dir_fd, "cgroup.subtree_control", plus);
        if (r < 0) {
            rf_error_set(err, -r, "enabling %s in %s/cgroup.subtree_control", name, dir);
            if (r == -EBUSY)
                rf_error_hint_set(err, "%s holds processes, and cgroup v2 hands a controller "
                                       "down only from an empty cgroup", dir);
            return -1;
        }
    }
    return 0;
}

static int open_dir(const char *dir, rf_error **err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        rf_error_set(err, errno, "opening the cgroup %s", dir);
    return fd;
}

char *rf_cgmanager_shared(const char *top, const bool want[RF_CTRL_N], rf_error **err)
{
    _cleanup_close_ int tfd = open_dir(top, err);
    if (tfd < 0)
        return NULL;
    if (mkdirat(tfd, RF_CGMANAGER_SHARED, 0755) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "creating the cgroup %s/" RF_CGMANAGER_SHARED, top),
               NULL;
    _cleanup_free_ char *dir = NULL;
    if (asprintf(&dir, "%s/" RF_CGMANAGER_SHARED, top) < 0)
        return rf_error_set(err, ENOMEM, "cgroup %s", top), NULL;
    _cleanup_close_ int dfd = open_dir(dir, err);
    if (dfd < 0)
        return NULL;
    /* Down the path: top first (the root cgroup may always), then ours,
     * which holds no process. Someone who put one there gets EBUSY named. */
    if (enable_wanted(tfd, top, want, err) < 0 || enable_wanted(dfd, dir, want, err) < 0)
        return NULL;
    return steal_ptr(&dir);
}

/* May this process move processes into dir and give its children
 * controllers? (A delegated cgroup: its own files chowned to us.) */
static bool delegated_to_us(int dir_fd)
{
    return faccessat(dir_fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
           faccessat(dir_fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
}

/* Does dir_fd's subtree_control hand down some wanted controller? */
static bool hands_down(int dir_fd, const bool want[])
{
    for (int c = 0; c < RF_CTRL_N; c++)
        if (want[c] && listed(dir_fd, "cgroup.subtree_control", rf_hierarchy_ctrl_name(c)))
            return true;
    return false;
}

/* Move this process (every thread: cgroup.procs) into own/ringfence-PID-self.
 * The leaf stays, empty, when we are gone: nobody can remove the cgroup
 * it runs in (docs/limits.md). */
static int move_self_to_leaf(int own_fd, const char *own, char **note, rf_error **err)
{
    char leaf[64], pid[24];
    snprintf(leaf, sizeof leaf, "ringfence-%d-self", (int)getpid());
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    if (mkdirat(own_fd, leaf, 0755) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "creating %s/%s for ringfence itself", own, leaf);
    _cleanup_close_ int lfd = openat(own_fd, leaf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int r = lfd < 0 ? -errno : rf_cgroupfs_write(lfd, "cgroup.procs", pid);
    if (r < 0) {
        unlinkat(own_fd, leaf, AT_REMOVEDIR);
        return rf_error_set(err, -r, "moving ringfence (pid %s) into %s/%s", pid, own, leaf);
    }
    if (note && asprintf(note, "limits: moved ringfence (pid %s) from %s into %s/%s, so that %s "
                               "may hand controllers to the sandboxes' cgroups (cgroup v2 gives "
                               "them only to the children of an empty cgroup)",
                         pid, own, own, leaf, own) < 0)
        *note = NULL;
    return 0;
}

static char *parent_of(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    return slash && slash != dir ? strndup(dir, (size_t)(slash - dir)) : NULL;
}

static bool is_cgroup2(const char *dir)
{
    struct statfs sf;
    return statfs(dir, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

char *rf_cgmanager_delegated(const char *own, const bool want[RF_CTRL_N], char **note,
                             rf_error **err)
{
    if (note)
        *note = NULL;
    _cleanup_close_ int ofd = open_dir(own, err);
    if (ofd < 0)
        return NULL;
    /* We run in a leaf whose parent is delegated to us too (a session
     * cgroup below the user's own): the parent holds no process, so it may
     * hand controllers down; the sandboxes are our siblings, nothing moves. */
    _cleanup_free_ char *parent = parent_of(own);
    if (parent && is_cgroup2(parent)) {
        _cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd >= 0 && delegated_to_us(pfd) && enable_wanted(pfd, parent, want, NULL) == 0 &&
            hands_down(pfd, want))
            return steal_ptr(&parent);
    }
    if (!delegated_to_us(ofd))
        return rf_error_set(err, EACCES, "%s is not delegated to uid %u (its cgroup.procs and "
                                         "cgroup.subtree_control are not writable)",
                            own, (unsigned)geteuid()),
               NULL;
    if (!hands_down(ofd, want)) {
        long other = first_process(ofd, true);
        if (other < 0)
            return rf_error_set(err, (int)-other, "reading %s/cgroup.procs", own), NULL;
        if (other > 0) {
            /* The fix goes in the message: it ends up in a warning. */
            rf_error_set(err, EBUSY, "%s holds other processes than ringfence (pid %ld among "
                                     "them), and cgroup v2 hands controllers down only from an "
                                     "empty cgroup: start ringfence from a leaf of it (mkdir "
                                     "%s/session; echo $$ > %s/session/cgroup.procs)",
                         own, other, own, own);
            return NULL;
        }
        if (move_self_to_leaf(ofd, own, note, err) < 0)
            return NULL;
    }
    if (enable_wanted(ofd, own, want, err) < 0)
        return NULL;
    return strdup(own);
}

char *rf_cgmanager_top(const char *own)
{
    char *top = strdup(own);
    while (top) {
        /* The root cgroup has no cgroup.type; above the mount is not ours. */
        char path[4096];
        snprintf(path, sizeof path, "%s/cgroup.type", top);
        if (access(path, F_OK) < 0)
            break;
        char *up = parent_of(top);
        if (!up || !is_cgroup2(up)) {
            free(up);
            break;
        }
        free(top);
        top = up;
    }
    return top;
}

/* Enable newly wanted controllers in what an earlier call made. */
static int reuse(const bool want[], rf_error **err)
{
    if (made.top) {
        _cleanup_close_ int tfd = open_dir(made.top, err);
        if (tfd < 0 || enable_wanted(tfd, made.top, want, err) < 0)
            return -1;
    }
    _cleanup_close_ int dfd = open_dir(made.dir, err);
    return dfd < 0 || enable_wanted(dfd, made.dir, want, err) < 0 ? -1 : 0;
}

int rf_cgmanager_dir(const char *own, const bool want[RF_CTRL_N], const char **ret_dir,
                     char **note, rf_error **err)
{
    if (note)
        *note = NULL;
    pthread_mutex_lock(&made.lock);
    int r = 0;
    if (made.dir) {
        r = reuse(want, err);
    } else if (geteuid() == 0) {
        made.top = rf_cgmanager_top(own);
        made.dir = made.top ? rf_cgmanager_shared(made.top, want, err) : NULL;
        if (!made.top)
            rf_error_set(err, ENOMEM, "cgroup %s", own);
        if (!made.dir) {
            free(made.top);
            made.top = NULL;
            r = -1;
        }
    } else {
        made.dir = rf_cgmanager_delegated(own, want, note, err);
        r = made.dir ? 0 : -1;
    }
    if (r == 0)
        *ret_dir = made.dir;
    pthread_mutex_unlock(&made.lock);
    return r;
}

const char *rf_cgmanager_made(void)
{
    pthread_mutex_lock(&made.lock);
    const char *dir = made.dir;
    pthread_mutex_unlock(&made.lock);
    return dir;
}
