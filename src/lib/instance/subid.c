/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Subordinate ids for an unprivileged caller's instances. The kernel lets
 * an unprivileged process map only its own uid into a user namespace; the
 * setuid helpers newuidmap/newgidmap (package uidmap) map more, checked
 * against /etc/subuid and /etc/subgid. With them each instance can have an
 * id of its own, and the caller can still build, check and delete a tree
 * owned by such an id: as 0 of a namespace in which its whole range is
 * mapped, with the capabilities that only apply to mapped ids. */
#include "instance/subid.h"
#include "instance/instance.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Ids are 32 bits; a range past that would wrap to system ids. */
#define RF_SUBID_ID_MAX 4294967294UL

int rf_subid_parse_first(FILE *f, const char *uid, const char *name, unsigned long *start, unsigned long *count)
{
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *who = strtok_r(line, ":\n", &save), *s = strtok_r(NULL, ":\n", &save),
             *n = strtok_r(NULL, ":\n", &save);
        if (!who || !s || !n || (strcmp(who, uid) && (!name || strcmp(who, name))))
            continue;
        if (s[0] < '0' || s[0] > '9' || n[0] < '0' || n[0] > '9')
            continue; /* strtoul would take "-1" and " 5" */
        char *e1, *e2;
        errno = 0;
        unsigned long a = strtoul(s, &e1, 10), c = strtoul(n, &e2, 10);
        if (!errno && !*e1 && !*e2 && c >= 2 && a > 0 && a <= RF_SUBID_ID_MAX && c <= RF_SUBID_ID_MAX - a + 1) {
            *start = a;
            *count = c;
            return 0;
        }
    }
    return -1;
}

static int first_range(const char *file, unsigned long *start, unsigned long *count)
{
    struct passwd *pw = getpwuid(getuid());
    char uid[32];
    snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
    FILE *f = fopen(file, "re");
    if (!f)
        return -1;
    int rc = rf_subid_parse_first(f, uid, pw ? pw->pw_name : NULL, start, count);
    fclose(f);
    return rc;
}

int rf_subid_ranges(rf_subid *out)
{
    if (first_range("/etc/subuid", &out->uid_start, &out->uid_count) < 0 ||
        first_range("/etc/subgid", &out->gid_start, &out->gid_count) < 0) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

unsigned long rf_subid_parse_past(FILE *f, unsigned long at)
{
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *save = NULL, *who = strtok_r(line, ":\n", &save), *s = strtok_r(NULL, ":\n", &save),
             *n = strtok_r(NULL, ":\n", &save);
        if (!who || !s || !n)
            continue;
        unsigned long a = strtoul(s, NULL, 10), c = strtoul(n, NULL, 10);
        /* A range that would wrap ends at the top: nothing fits past it. */
        unsigned long end = a > ULONG_MAX - c ? ULONG_MAX : a + c;
        if (end > at)
            at = end;
    }
    return at;
}

static unsigned long past_ranges(const char *file, unsigned long at)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return at;
    at = rf_subid_parse_past(f, at);
    fclose(f);
    return at;
}

unsigned long rf_subid_free_start(void)
{
    return past_ranges("/etc/subgid", past_ranges("/etc/subuid", 100000));
}

unsigned long rf_subid_slots(const rf_subid *s)
{
    unsigned long u = s->uid_count - s->uid_count / 2, g = s->gid_count - s->gid_count / 2;
    return u < g ? u : g;
}

void rf_subid_slot_ids(const rf_subid *s, unsigned long slot, uid_t *uid, gid_t *gid)
{
    *uid = (uid_t)(s->uid_start + s->uid_count / 2 + slot);
    *gid = (gid_t)(s->gid_start + s->gid_count / 2 + slot);
}

/* TOOL PID MAP...; its complaint (it says which range it refused) into *err. */
static int run_tool(const char *tool, pid_t pid, const char *map, rf_error **err)
{
    static const char *const dirs[] = { "/usr/bin", "/bin", "/usr/sbin" };
    char path[64] = "";
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !path[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[i], tool);
        if (access(path, X_OK) < 0)
            path[0] = '\0';
    }
    if (!path[0]) {
        rf_error_set(err, ENOENT, "instance: %s is not installed", tool);
        return rf_error_hint_set(err, "install the uidmap package (newuidmap, newgidmap)");
    }
    char pidbuf[16], mapbuf[256];
    snprintf(pidbuf, sizeof pidbuf, "%d", (int)pid);
    snprintf(mapbuf, sizeof mapbuf, "%s", map);
    char *argv[16] = { path, pidbuf };
    size_t n = 2;
    char *save = NULL;
    for (char *t = strtok_r(mapbuf, " ", &save); t && n < 15; t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    int out[2];
    if (pipe2(out, O_CLOEXEC) < 0)
        return rf_error_set(err, errno, "instance: pipe");
    pid_t child = fork();
    if (child == 0) {
        dup2(out[1], STDOUT_FILENO);
        dup2(out[1], STDERR_FILENO);
        execv(path, argv);
        _exit(127);
    }
    close(out[1]);
    char msg[256] = "";
    ssize_t got = child < 0 ? 0 : read(out[0], msg, sizeof msg - 1);
    close(out[0]);
    msg[got > 0 ? got : 0] = '\0';
    msg[strcspn(msg, "\n")] = '\0';
    int status = 0;
    while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (child < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        rf_error_set(err, EPERM, "instance: %s %s: %s", tool, map, msg[0] ? msg : "failed");
        return rf_error_hint_set(err, "the ids must lie in your ranges in /etc/subuid and /etc/subgid");
    }
    return 0;
}

int rf_subid_write_maps(pid_t pid, const char *uid_map, const char *gid_map, rf_error **err)
{
    if (run_tool("newuidmap", pid, uid_map, err) < 0 || run_tool("newgidmap", pid, gid_map, err) < 0)
        return -1;
    return 0;
}

/* The child: a namespace of its own, then wait for the maps, then fn. */
_Noreturn static void helper_child(int ready, int go, int msg, int (*fn)(void *, rf_error **), void *arg)
{
    char c = unshare(CLONE_NEWUSER) == 0;
    if (write(ready, &c, 1) != 1 || !c || read(go, &c, 1) != 1 || !c)
        _exit(2);
    rf_error *e = NULL;
    int rc = fn(arg, &e);
    if (rc < 0)
        dprintf(msg, "%d\n%s\n%s", e ? rf_error_errno(e) : EIO, e ? rf_error_message(e) : "failed",
                e && rf_error_hint(e) ? rf_error_hint(e) : "");
    _exit(rc < 0 ? 1 : 0);
}

int rf_subid_run(const rf_subid *s, int (*fn)(void *arg, rf_error **err), void *arg, rf_error **err)
{
    int ready[2], go[2], msg[2];
    if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || pipe2(msg, O_CLOEXEC) < 0)
        return rf_error_set(err, errno, "instance: pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        close(msg[0]);
        helper_child(ready[1], go[0], msg[1], fn, arg);
    }
    close(ready[1]);
    close(go[0]);
    close(msg[1]);
    char c = 0, uid_map[128], gid_map[128];
    snprintf(uid_map, sizeof uid_map, "0 %u 1 1 %lu %lu", (unsigned)getuid(), s->uid_start, s->uid_count);
    snprintf(gid_map, sizeof gid_map, "0 %u 1 1 %lu %lu", (unsigned)getgid(), s->gid_start, s->gid_count);
    int rc = pid < 0 ? rf_error_set(err, errno, "instance: fork") : 0;
    if (rc == 0 && (read(ready[0], &c, 1) != 1 || !c))
        rc = rf_error_set(err, EPERM, "instance: create a user namespace for the instance's ids");
    if (rc == 0)
        rc = rf_subid_write_maps(pid, uid_map, gid_map, err);
    c = rc == 0;
    (void)!write(go[1], &c, 1);
    char text[1024];
    ssize_t n = 0, got;
    while (n < (ssize_t)sizeof text - 1 && (got = read(msg[0], text + n, sizeof text - 1 - (size_t)n)) > 0)
        n += got;
    text[n] = '\0';
    close(ready[0]);
    close(go[1]);
    close(msg[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        char *save = NULL, *num = strtok_r(text, "\n", &save), *what = strtok_r(NULL, "\n", &save),
             *hint = strtok_r(NULL, "\n", &save);
        rc = rf_error_set(err, num ? atoi(num) : EIO, "%s", what ? what : "instance: the id helper failed");
        if (hint && *hint)
            rf_error_hint_set(err, "%s", hint);
    }
    return rc;
}

struct chown_args {
    const char *dir;
    uid_t uid;
    gid_t gid;
};

static int chown_at(int parent, const char *name, uid_t uid, gid_t gid)
{
    if (fchownat(parent, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOTDIR || errno == ELOOP ? 0 : -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = chown_at(dirfd(d), e->d_name, uid, gid);
    closedir(d);
    return rc;
}

static int chown_fn(void *arg, rf_error **err)
{
    const struct chown_args *a = arg;
    _cleanup_free_ char *copy = strdup(a->dir);
    char *slash = copy ? strrchr(copy, '/') : NULL;
    if (!slash)
        return rf_error_set(err, EINVAL, "instance: %s", a->dir);
    *slash = '\0';
    _cleanup_close_ int parent = open(*copy ? copy : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent < 0 || chown_at(parent, slash + 1, a->uid, a->gid) < 0)
        return rf_error_set(err, errno, "instance: give %s to its own identity", a->dir);
    return 0;
}

int rf_subid_chown_tree(const rf_subid *s, const char *dir, uid_t uid, gid_t gid, rf_error **err)
{
    /* Host id start+k is 1+k in the helper's namespace. */
    struct chown_args a = { dir, (uid_t)(1 + (uid - s->uid_start)), (gid_t)(1 + (gid - s->gid_start)) };
    return rf_subid_run(s, chown_fn, &a, err);
}

static int check_fn(void *arg, rf_error **err)
{
    return rf_instance_check_links(arg, err);
}

int rf_subid_check_links(const rf_subid *s, const char *dir, rf_error **err)
{
    return rf_subid_run(s, check_fn, (void *)dir, err);
}

static int remove_fn(void *arg, rf_error **err)
{
    if (rf_instance_remove_tree(arg) < 0 && errno != ENOENT)
        return rf_error_set(err, errno, "instance: remove %s", (const char *)arg);
    return 0;
}

int rf_subid_remove_tree(const char *path)
{
    rf_subid s;
    if (rf_subid_ranges(&s) < 0)
        return -1;
    rf_error *e = NULL;
    int rc = rf_subid_run(&s, remove_fn, (void *)path, &e);
    if (rc < 0)
        errno = rf_error_errno(e) ? rf_error_errno(e) : EPERM;
    rf_error_free(e);
    return rc;
}
