/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Before an unprivileged overlay start: is there a file the command may
 * write whose owner or group the sandbox's user namespace cannot map?
 *
 * overlayfs copies a file up (into the upper layer, at its first write,
 * chmod, or a new entry in its directory) with the lower file's owner and
 * group, and refuses with EOVERFLOW ("Value too large for defined data
 * type") when the mounter's namespace maps either not: a file with group
 * root or staff, or another user's file the caller writes through its
 * group. An unprivileged caller's namespace maps its own ids (and an
 * instance's subordinate one) and no others: newgidmap maps only the
 * caller's primary group and its /etc/subgid ranges, never a group it is
 * merely a member of, so no mapping can make those writes work, and a copy
 * of every such file into the upper layer at each start would copy a
 * whole shared checkout. So the start is refused, naming the first such
 * file and the way out, instead of a command that fails inside for a
 * reason nobody is told.
 *
 * Walked as the caller, nothing followed (O_NOFOLLOW, fstatat without
 * following), not past a mount (not part of the lower layer); bounded by
 * IDS_MAX_ENTRIES and RF_CHANGES_MAX_DEPTH: past them the start goes on. */
#include "changes/changes.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IDS_MAX_ENTRIES 100000 /* ~0.2 s here; past it the start goes on */
/* A clean walk stands for a minute: an agent's commands, each a new
 * session in the same workspace, walk it once a minute, not each time (a
 * 10,000-file tree is ~20 ms of CPU). A file given another group in that
 * minute is found by the next walk; until then the command meets the
 * EOVERFLOW this check is for, no worse than without it. The record is
 * only kept for a tree that is the same directory with the same ctime. */
#define IDS_TTL_S 60

typedef struct ids_walk {
    const rf_changes_ids *ids;
    gid_t *groups; /* the caller's, for its group write permission */
    int n_groups;
    dev_t dev;
    size_t seen;
    char path[RF_CHANGES_MAX_PATH];    /* of the entry being looked at */
    char found[RF_CHANGES_MAX_PATH];   /* the writable entry */
    char culprit[RF_CHANGES_MAX_PATH]; /* it, or the directory above it, unmapped */
    struct stat culprit_st;
} ids_walk;

static bool mapped(const rf_changes_ids *ids, const struct stat *st)
{
    return (st->st_uid == ids->uid[0] || st->st_uid == ids->uid[1]) &&
           (st->st_gid == ids->gid[0] || st->st_gid == ids->gid[1]);
}

/* May the command change it: write it (or, a directory, add and remove
 * entries), or chmod it as its owner? */
static bool modifiable(const ids_walk *w, const struct stat *st)
{
    if (st->st_uid == w->ids->uid[0] || st->st_uid == w->ids->uid[1])
        return true;
    bool member = st->st_gid == w->ids->gid[0] || st->st_gid == w->ids->gid[1];
    for (int i = 0; i < w->n_groups && !member; i++)
        member = w->groups[i] == st->st_gid;
    return member ? (st->st_mode & S_IWGRP) != 0 : (st->st_mode & S_IWOTH) != 0;
}

/* The writable entry is w->path; the unmapped one is it, or its parent
 * directory whose path is w->path's first `culprit` bytes (0: the
 * workspace itself). */
static void found(ids_walk *w, size_t culprit, const struct stat *st)
{
    snprintf(w->found, sizeof w->found, "%s", w->path);
    snprintf(w->culprit, sizeof w->culprit, "%.*s", (int)culprit, w->path);
    w->culprit_st = *st;
}

#define NONE ((size_t)-1)

/* 1 found, 0 not, -1 past a limit (the walk stops, nothing refused).
 * above: the length of the path of the nearest unmapped directory above
 * (NONE: there is none), above_st its stat. */
static int walk(ids_walk *w, int dfd, size_t depth, size_t above, const struct stat *above_st)
{
    if (depth > RF_CHANGES_MAX_DEPTH)
        return -1;
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0; /* unreadable: the command cannot reach below it either */
    }
    size_t len = strlen(w->path);
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != w->dev ||
            S_ISLNK(st.st_mode))
            continue;
        if (++w->seen > IDS_MAX_ENTRIES ||
            snprintf(w->path + len, sizeof w->path - len, "%s%s", len ? "/" : "", e->d_name) >=
                (int)(sizeof w->path - len)) {
            rc = -1;
            break;
        }
        bool own = mapped(w->ids, &st);
        if (modifiable(w, &st) && (!own || above != NONE)) {
            found(w, own ? above : strlen(w->path), own ? above_st : &st);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            _cleanup_close_ int sub = openat(dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                rc = walk(w, sub, depth + 1, own ? above : strlen(w->path), own ? above_st : &st);
        }
        if (rc != 1)
            w->path[len] = '\0';
    }
    closedir(d);
    return rc;
}

/* The name of a user or group, else its number. */
static void name_of(bool group, unsigned id, char *out, size_t size)
{
    char buf[4096];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;
    const char *name = NULL;
    if (group && getgrgid_r(id, &gr, buf, sizeof buf, &grp) == 0 && grp)
        name = grp->gr_name;
    else if (!group && getpwuid_r(id, &pw, buf, sizeof buf, &pwp) == 0 && pwp)
        name = pwp->pw_name;
    if (name)
        snprintf(out, size, "%s", name);
    else
        snprintf(out, size, "%u", id);
}

static int refuse(const ids_walk *w, const char *workspace, rf_error **err)
{
    const struct stat *st = &w->culprit_st;
    bool owner = st->st_uid != w->ids->uid[0] && st->st_uid != w->ids->uid[1];
    unsigned id = owner ? (unsigned)st->st_uid : (unsigned)st->st_gid;
    unsigned my = owner ? (unsigned)w->ids->uid[0] : (unsigned)w->ids->gid[0];
    char name[256], who[320], mine[256];
    name_of(!owner, id, name, sizeof name);
    name_of(!owner, my, mine, sizeof mine);
    snprintf(who, sizeof who, "%s %s (%s %u)", owner ? "owner" : "group", name, owner ? "uid" : "gid", id);
    _cleanup_free_ char *ws = rf_change_quote_path(workspace);
    _cleanup_free_ char *entry = rf_change_quote_path(w->found[0] ? w->found : ".");
    _cleanup_free_ char *culprit = rf_change_quote_path(w->culprit[0] ? w->culprit : workspace);
    if (!ws || !entry || !culprit)
        return rf_error_set(err, ENOMEM, "changes");
    if (!w->found[0])
        rf_error_set(err, 0, "changes: overlay: the workspace %s has %s, which the sandbox's user namespace cannot "
                             "map: overlayfs cannot copy it up, so the command could make no file in it (\"Value "
                             "too large for defined data type\")", ws, who);
    else if (!strcmp(w->found, w->culprit))
        rf_error_set(err, 0, "changes: overlay: %s in the workspace %s has %s, which the sandbox's user namespace "
                             "cannot map: overlayfs cannot copy it up, so the command's writes to it would fail "
                             "(\"Value too large for defined data type\")", entry, ws, who);
    else
        rf_error_set(err, 0, "changes: overlay: %s in the workspace %s is writable, but the directory %s above it "
                             "has %s, which the sandbox's user namespace cannot map: overlayfs cannot copy that "
                             "directory up, so the command's writes below it would fail (\"Value too large for "
                             "defined data type\")", entry, ws, culprit, who);
    if (owner)
        return rf_error_hint_set(err, "make it yours (as its owner or root: chown %s %s; 'find %s ! -user %u' "
                                      "lists the others), or run with --changes direct, which writes it in place "
                                      "as the default does", mine, culprit, ws, my);
    return rf_error_hint_set(err, "make it your group's (chgrp %s %s; 'find %s ! -group %u' lists the others), or "
                                  "run with --changes direct, which writes it in place as the default does",
                             mine, culprit, ws, my);
}

/* The record of the last clean walk: the workspace (its path, device,
 * inode and ctime), the ids, when. Under the instance root, which no
 * sandbox reaches; a forged one could only skip this check. */
static void record_line(const char *workspace, const struct stat *st, const rf_changes_ids *ids, char *out,
                        size_t size)
{
    snprintf(out, size, "%llu %llu %lld.%09ld %u %u %u %u %s\n", (unsigned long long)st->st_dev,
             (unsigned long long)st->st_ino, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
             (unsigned)ids->uid[0], (unsigned)ids->uid[1], (unsigned)ids->gid[0], (unsigned)ids->gid[1], workspace);
}

static bool walked_lately(const char *root, const char *line)
{
    char path[RF_CHANGES_MAX_PATH], buf[RF_CHANGES_MAX_PATH + 256];
    struct stat st;
    snprintf(path, sizeof path, "%s/ids-clean", root);
    _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    time_t now = time(NULL);
    if (n <= 0 || now < st.st_mtime || now - st.st_mtime >= IDS_TTL_S)
        return false;
    buf[n] = '\0';
    return !strcmp(buf, line);
}

static void remember(const char *root, const char *line)
{
    char path[RF_CHANGES_MAX_PATH], tmp[RF_CHANGES_MAX_PATH + 16];
    snprintf(path, sizeof path, "%s/ids-clean", root);
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    _cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t len = strlen(line);
    if (fd < 0 || write(fd, line, len) != (ssize_t)len || rename(tmp, path) < 0)
        unlink(tmp);
}

int rf_changes_check_ids(const char *root, const char *workspace, const rf_changes_ids *ids, rf_error **err)
{
    _cleanup_free_ ids_walk *w = calloc(1, sizeof *w);
    _cleanup_close_ int fd = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    char line[RF_CHANGES_MAX_PATH + 256];
    if (!w)
        return rf_error_set(err, ENOMEM, "changes");
    if (fd < 0 || fstat(fd, &st) < 0)
        return rf_error_set(err, errno, "workspace %s", workspace);
    record_line(workspace, &st, ids, line, sizeof line);
    if (root && walked_lately(root, line))
        return 0;
    w->ids = ids;
    w->dev = st.st_dev;
    int n = getgroups(0, NULL);
    _cleanup_free_ gid_t *groups = n > 0 ? calloc((size_t)n, sizeof *groups) : NULL;
    w->n_groups = groups ? getgroups(n, groups) : 0;
    w->groups = groups;
    if (w->n_groups < 0)
        w->n_groups = 0;
    bool own = mapped(ids, &st);
    if (modifiable(w, &st) && !own) {
        found(w, 0, &st);
        return refuse(w, workspace, err);
    }
    int rc = walk(w, fd, 0, own ? NONE : 0, &st);
    if (rc == 1)
        return refuse(w, workspace, err);
    if (rc == 0 && root)
        remember(root, line);
    return 0;
}
