/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry of running sandboxes: writing, checking, listing (registry.h). */
#include "registry/registry.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv-json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An entry larger than this is not one of ours. */
#define ENTRY_MAX (64 * 1024)

/* rf_registry_tree (tree.c): the live figures of init's tree into o. */
void rf_registry_tree(pid_t init, json_t *o);

char *rf_registry_dir(const char *instance_root)
{
    char *dir = NULL;
    return asprintf(&dir, "%s/run", instance_root) < 0 ? NULL : dir;
}

int rf_registry_proc(pid_t pid, unsigned long long *start, pid_t *ppid, uid_t *uid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* comm may hold anything, ')' too */
    int pp = 0;
    unsigned long long st = 0;
    /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime stime cutime cstime priority nice threads
     * itrealvalue starttime */
    if (!p || sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &pp,
                     &st) != 2)
        return -1;
    struct stat sb;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char line[256];
    unsigned ruid = 0;
    bool have_uid = false;
    while (f && !have_uid && fgets(line, sizeof line, f))
        have_uid = sscanf(line, "Uid: %u", &ruid) == 1;
    if (!have_uid && stat(path, &sb) < 0)
        return -1;
    if (start)
        *start = st;
    if (ppid)
        *ppid = pp;
    if (uid)
        *uid = have_uid ? (uid_t)ruid : sb.st_uid;
    return 0;
}

/* Straight to its name: the id is new (a rename per start cost an inode
 * on ext4); a reader that catches it half-written cannot parse it and
 * skips it. pool.c rewrites an entry (its command): truncated, rewritten. */
static int write_entry(const char *dir, const char *id, const char *text, rf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/%s.json", dir, id) < 0)
        return rf_error_set(err, ENOMEM, "registry");
    _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
        int e = errno;
        if (fd >= 0)
            unlink(path);
        return rf_error_set(err, e, "registry: write %s", path);
    }
    return 0;
}

int rf_registry_add(const char *dir, const rf_registry_entry *e, rf_error **err)
{
    unsigned long long start = 0, owner_start = 0;
    if (rf_registry_proc(e->pid, &start, NULL, NULL) < 0 || rf_registry_proc(getpid(), &owner_start, NULL, NULL) < 0)
        return rf_error_set(err, errno ? errno : ESRCH, "registry: read /proc of sandbox %s", e->id);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return rf_error_set(err, errno, "registry: create %s", dir);
    rf_registry_point(dir);
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    json_t *o = json_pack("{s:s, s:i, s:I, s:i, s:I, s:i, s:o, s:s*, s:s, s:s*, s:s, s:I, s:b}", "id", e->id, "pid",
                          (int)e->pid, "start", (json_int_t)start, "owner_pid", (int)getpid(), "owner_start",
                          (json_int_t)owner_start, "uid", (int)getuid(), "command", rf_strv_json(e->argv), "workspace",
                          e->workspace, "backend", e->backend, "instance", e->instance, "started", now,
                          "started_epoch", (json_int_t)t, "tree_via_init", e->tree_via_init);
    _cleanup_free_ char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (!text)
        return rf_error_set(err, ENOMEM, "registry");
    return write_entry(dir, e->id, text, err);
}

void rf_registry_remove(const char *dir, const char *id)
{
    _cleanup_free_ char *path = NULL, *stats = NULL;
    if (dir && id && asprintf(&path, "%s/%s.json", dir, id) >= 0)
        unlink(path);
    if (dir && id && (stats = rf_registry_stats_path(dir, id)))
        unlink(stats);
}

char *rf_registry_stats_path(const char *dir, const char *id)
{
    char *path = NULL;
    return asprintf(&path, "%s/%s.net", dir, id) < 0 ? NULL : path;
}

/* bytes_out and refusals from <id>.net, when the sandbox has a network
 * proxy; the file must be the entry's owner's, like the entry. 0 and 0
 * otherwise: no proxy, nothing out, nothing refused. */
static void add_stats(int dirfd, const char *id, uid_t file_uid, json_t *o)
{
    char name[64], buf[64];
    unsigned long long out = 0, refusals = 0;
    snprintf(name, sizeof name, "%s.net", id);
    _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    ssize_t n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == file_uid
                    ? pread(fd, buf, sizeof buf - 1, 0)
                    : -1;
    if (n > 0) {
        buf[n] = '\0';
        if (sscanf(buf, "%llu %llu", &out, &refusals) != 2)
            out = refusals = 0;
    }
    json_object_set_new(o, "bytes_out", json_integer((json_int_t)out));
    json_object_set_new(o, "refusals", json_integer((json_int_t)refusals));
}

/* The entry describes processes that are what it says: the owner (the
 * program that started the sandbox) is alive, has the file owner's uid
 * and its start time; init is its child, with its start time. */
static bool believable(const json_t *o, uid_t file_uid)
{
    pid_t pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
    pid_t owner = (pid_t)json_integer_value(json_object_get(o, "owner_pid"));
    unsigned long long start, owner_start;
    pid_t ppid;
    uid_t uid;
    if (pid <= 1 || owner <= 1 || json_integer_value(json_object_get(o, "uid")) != (json_int_t)file_uid)
        return false;
    if (rf_registry_proc(owner, &owner_start, NULL, &uid) < 0 || uid != file_uid ||
        owner_start != (unsigned long long)json_integer_value(json_object_get(o, "owner_start")))
        return false;
    return rf_registry_proc(pid, &start, &ppid, NULL) == 0 && ppid == owner &&
           start == (unsigned long long)json_integer_value(json_object_get(o, "start"));
}

static json_t *read_entry(int dirfd, const char *name, uid_t *file_uid)
{
    _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > ENTRY_MAX)
        return NULL;
    *file_uid = st.st_uid;
    return json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL);
}

/* tidy: remove the caller's own stale entries; only_uid (unless -1):
 * list only entries that user owns. */
static int list_dir(const char *dir, json_t *out, bool tidy, long only_uid, rf_error **err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    _cleanup_closedir_ DIR *d = fd < 0 ? NULL : fdopendir(fd); /* the DIR has fd */
    if (!d) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return e == ENOENT ? 0 : rf_error_set(err, e, "registry: open %s", dir);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 6 || strcmp(e->d_name + n - 5, ".json"))
            continue;
        uid_t file_uid = 0;
        json_t *o = read_entry(fd, e->d_name, &file_uid);
        const char *id = json_string_value(json_object_get(o, "id"));
        if (!o || !id || strncmp(id, e->d_name, n - 5) || strlen(id) != n - 5 ||
            (only_uid >= 0 && file_uid != (uid_t)only_uid) || !believable(o, file_uid)) {
            /* gone (or never true): tidy the caller's own */
            if (tidy && file_uid == getuid() && o && !believable(o, file_uid)) {
                char stats[NAME_MAX + 1];
                snprintf(stats, sizeof stats, "%.*s.net", (int)(n - 5), e->d_name);
                unlinkat(fd, e->d_name, 0);
                unlinkat(fd, stats, 0);
            }
            json_decref(o);
            continue;
        }
        struct passwd *pw = getpwuid(file_uid);
        json_object_set_new(o, "user", pw ? json_string(pw->pw_name) : json_integer((json_int_t)file_uid));
        json_int_t started = json_integer_value(json_object_get(o, "started_epoch"));
        json_object_set_new(o, "age_seconds", json_integer((json_int_t)time(NULL) - started));
        rf_registry_tree((pid_t)json_integer_value(json_object_get(o, "pid")), o);
        add_stats(fd, id, file_uid, o);
        json_array_append_new(out, o);
    }
    return 0;
}

int rf_registry_list(const char *dir, json_t *out, rf_error **err)
{
    return list_dir(dir, out, true, -1, err);
}

int rf_registry_list_of(const char *dir, uid_t uid, json_t *out)
{
    return list_dir(dir, out, false, (long)uid, NULL);
}

int rf_registry_list_all(const char *dir, json_t *out, rf_error **err)
{
    if (rf_registry_list(dir, out, err) < 0)
        return -1;
    char **seen = NULL; /* real paths listed, for the pointers */
    size_t n_seen = 0;
    char *self = realpath(dir, NULL);
    char **grown = self ? realloc(seen, sizeof *seen) : NULL;
    if (grown) {
        seen = grown;
        seen[n_seen++] = self;
    } else {
        free(self);
    }
    setpwent();
    struct passwd *pw;
    while ((pw = getpwent())) {
        _cleanup_free_ char *other = NULL;
        if (!pw->pw_dir || pw->pw_dir[0] != '/' || asprintf(&other, "%s/.ringfence/run", pw->pw_dir) < 0)
            continue;
        char *a = realpath(other, NULL);
        bool listed = !a;
        for (size_t i = 0; a && i < n_seen; i++)
            listed = listed || !strcmp(a, seen[i]);
        if (!listed)
            (void)rf_registry_list(a, out, NULL); /* one unreadable home hides only its own */
        grown = a && !listed ? realloc(seen, (n_seen + 1) * sizeof *seen) : NULL;
        if (grown) {
            seen = grown;
            seen[n_seen++] = a;
        } else {
            free(a);
        }
    }
    endpwent();
    (void)rf_registry_list_pointed(seen, n_seen, out);
    for (size_t i = 0; i < n_seen; i++)
        free(seen[i]);
    free(seen);
    return 0;
}
