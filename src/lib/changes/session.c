/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sessions: create, find, list, lock and discard (layout in changes.h). */
#include "changes/changes.h"
#include "model/policy.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define SESSION_JSON_MAX (64 * 1024)

bool rf_session_id_valid(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n >= RF_SESSION_ID_MAX || id[0] == '-' || id[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-_", id[i]))
            return false;
    return true;
}

int rf_session_new_id(char out[RF_SESSION_ID_MAX], rf_error **err)
{
    unsigned char r[6];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return rf_error_set(err, errno, "session: random id");
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(out + 2 * i, 3, "%02x", r[i]);
    return 0;
}

char *rf_session_dir_path(const char *root, const char *id)
{
    char *p = NULL;
    return asprintf(&p, "%s/sessions/%s", root, id) < 0 ? NULL : p;
}

static int mkdir_exist_ok(const char *path, mode_t mode)
{
    if (mkdir(path, mode) == 0)
        return 0;
    struct stat st;
    if (errno != EEXIST || lstat(path, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) { /* a symlink planted there is refused, not followed */
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int write_record(const char *dir, const char *id, const char *workspace, const char *instance,
                        rf_error **err)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* A file changed before this instant has a ctime at or before it (a
     * ctime is never ahead of the clock), so a workspace made just before
     * the run shows no false conflicts. A change after it has a later
     * ctime, except within the coarse clock's tick that filesystems may
     * stamp with (a few ms at the very start: docs/changes.md). */
    struct timespec began = now;
    json_t *j = json_pack("{s:s, s:s, s:s?, s:f, s:I, s:I}", "id", id, "workspace", workspace, "instance",
                          instance, "created", (double)now.tv_sec + now.tv_nsec / 1e9, "began_sec",
                          (json_int_t)began.tv_sec, "began_nsec", (json_int_t)began.tv_nsec);
    _cleanup_free_ char *tmp = NULL, *path = NULL;
    if (!j || asprintf(&tmp, "%s/.session.json.tmp", dir) < 0 || asprintf(&path, "%s/session.json", dir) < 0) {
        json_decref(j);
        return rf_error_set(err, ENOMEM, "session");
    }
    int rc = json_dump_file(j, tmp, JSON_COMPACT);
    json_decref(j);
    if (rc < 0 || rename(tmp, path) < 0)
        return rf_error_set(err, errno ? errno : EIO, "session: write %s", path);
    return 0;
}

static json_t *read_record(const char *dir, rf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/session.json", dir) < 0) {
        rf_error_set(err, ENOMEM, "session");
        return NULL;
    }
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SESSION_JSON_MAX) {
        rf_error_set(err, fd < 0 ? errno : EINVAL, "session: %s", path);
        return NULL;
    }
    json_error_t je;
    json_t *j = json_loadfd(fd, 0, &je);
    if (!j || !json_is_string(json_object_get(j, "workspace"))) {
        json_decref(j);
        rf_error_set(err, EINVAL, "session: %s is not a session record", path);
    }
    return j;
}

/* The upper layer's root stands in for the workspace's root in the merged
 * view: same permission bits (set-id dropped) and, for a root caller, the
 * same owner, so the command meets the directory it would meet directly. */
static int make_upper(const char *dir, const char *workspace, uid_t owner, gid_t group, rf_error **err)
{
    _cleanup_free_ char *upper = NULL, *work = NULL;
    if (asprintf(&upper, "%s/upper", dir) < 0 || asprintf(&work, "%s/work", dir) < 0)
        return rf_error_set(err, ENOMEM, "session");
    struct stat ws;
    if (stat(workspace, &ws) < 0)
        return rf_error_set(err, errno, "session: workspace %s", workspace);
    if (mkdir_exist_ok(upper, 0700) < 0 || mkdir_exist_ok(work, 0700) < 0)
        return rf_error_set(err, errno, "session: create %s", upper);
    /* EINVAL: root of a user namespace of its own, where that owner is
     * not mapped; the directory keeps ours, as its workspace does. */
    if (chmod(upper, ws.st_mode & 01777) < 0 ||
        (geteuid() == 0 && chown(upper, owner, group) < 0 && errno != EINVAL))
        return rf_error_set(err, errno, "session: set the mode of %s", upper);
    return 0;
}

int rf_session_prepare(const char *root, const char *id, const char *workspace, const char *instance,
                       uid_t owner, gid_t group, rf_error **err)
{
    _cleanup_free_ char *sessions = NULL, *dir = rf_session_dir_path(root, id);
    if (!dir || asprintf(&sessions, "%s/sessions", root) < 0)
        return rf_error_set(err, ENOMEM, "session");
    if (mkdir_exist_ok(root, 0700) < 0 || mkdir_exist_ok(sessions, 0700) < 0)
        return rf_error_set(err, errno, "session: create %s", sessions);
    if (mkdir(dir, 0700) == 0)
        return make_upper(dir, workspace, owner, group, err) < 0 ? -1 : write_record(dir, id, workspace, instance, err);
    if (errno != EEXIST)
        return rf_error_set(err, errno, "session: create %s", dir);
    json_t *j = read_record(dir, err);
    if (!j)
        return -1;
    const char *was = json_string_value(json_object_get(j, "workspace"));
    int rc = 0;
    if (strcmp(was, workspace) != 0) {
        rf_error_set(err, 0, "session %s belongs to the workspace %s, not %s", id, was, workspace);
        rc = rf_error_hint_set(err, "run it there (--workspace %s), or start a new session without --session", was);
    }
    json_decref(j);
    return rc;
}

static int flock_wait(int fd, bool wait)
{
    int rc;
    while ((rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) < 0 && errno == EINTR)
        ;
    return rc;
}

/* What is locked: the session's directory itself, so that a new session's
 * start creates no lock file (each new inode is an inode-bitmap search,
 * the larger part of an overlay start's own cost on a busy ext4:
 * bench/changes.sh). A session made before that has a `lock` file, which
 * is locked instead, as the ringfence that made it does. A filesystem that
 * cannot flock a directory (NFS emulates flock with a write lock, which a
 * directory opened read-only cannot take: EBADF) gets the file too. */
static int lock_target(const char *dir, const char *path, bool wait, int *rc)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0 && (*rc = flock_wait(fd, wait)) == 0)
            return fd;
        if (fd >= 0 && errno != EBADF && errno != ENOLCK && errno != EINVAL && errno != EOPNOTSUPP)
            return fd;
        if (fd >= 0)
            close(fd);
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    if (fd >= 0)
        *rc = flock_wait(fd, wait);
    return fd;
}

int rf_session_lock(const char *dir, const char *id, bool wait, rf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/lock", dir) < 0)
        return rf_error_set(err, ENOMEM, "session");
    int rc = -1;
    int fd = lock_target(dir, path, wait, &rc);
    if (fd < 0)
        return rf_error_set(err, errno, "session: %s", path);
    if (rc < 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK) {
            rf_error_set(err, 0, "session %s is in use (by a running sandbox, or an apply or discard)", id);
            return rf_error_hint_set(err, "wait for it to end, then try again");
        }
        return rf_error_set(err, e, "session: lock %s", path);
    }
    return fd;
}

static int fill_session(rf_session *s, const json_t *j)
{
    const char *ws = json_string_value(json_object_get(j, "workspace"));
    const char *inst = json_string_value(json_object_get(j, "instance"));
    s->workspace = strdup(ws);
    s->instance = inst ? strdup(inst) : NULL;
    s->began.tv_sec = (time_t)json_integer_value(json_object_get(j, "began_sec"));
    s->began.tv_nsec = (long)json_integer_value(json_object_get(j, "began_nsec"));
    s->created = json_number_value(json_object_get(j, "created"));
    return s->workspace && (!inst || s->instance) ? 0 : -1;
}

RF_EXPORT rf_session *rf_session_open(const char *root, const char *id, rf_error **err)
{
    if (!rf_session_id_valid(id)) {
        rf_error_set(err, 0, "'%s' is not a session id (letters, digits, '-' and '_')", id ? id : "");
        rf_error_hint_set(err, "'ringfence changes list' shows the sessions");
        return NULL;
    }
    rf_session *s = calloc(1, sizeof *s);
    if (!s || !(s->root = strdup(root)) || !(s->id = strdup(id)) || !(s->dir = rf_session_dir_path(root, id))) {
        rf_session_free(s);
        rf_error_set(err, ENOMEM, "session");
        return NULL;
    }
    struct stat st;
    if (lstat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        rf_error_set(err, 0, "no session %s (in %s/sessions)", id, root);
        rf_error_hint_set(err, "'ringfence changes list' shows the sessions");
        rf_session_free(s);
        return NULL;
    }
    json_t *j = read_record(s->dir, err);
    int rc = j ? fill_session(s, j) : -1;
    json_decref(j);
    if (rc < 0) {
        rf_error_set(err, ENOMEM, "session");
        rf_session_free(s);
        return NULL;
    }
    return s;
}

RF_EXPORT void rf_session_free(rf_session *s)
{
    if (!s)
        return;
    free(s->root);
    free(s->id);
    free(s->dir);
    free(s->workspace);
    free(s->instance);
    free(s);
}

RF_EXPORT const char *rf_session_id(const rf_session *s) { return s->id; }
RF_EXPORT const char *rf_session_workspace(const rf_session *s) { return s->workspace; }
RF_EXPORT const char *rf_session_instance(const rf_session *s) { return s->instance; }
RF_EXPORT double rf_session_created(const rf_session *s) { return s->created; }

int rf_session_open_upper(const rf_session *s, rf_error **err)
{
    _cleanup_free_ char *upper = NULL;
    if (asprintf(&upper, "%s/upper", s->dir) < 0)
        return rf_error_set(err, ENOMEM, "session");
    int fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return rf_error_set(err, errno, "session %s: its upper layer %s", s->id, upper);
    return fd;
}

typedef struct listed {
    char *id;
    double created;
} listed;

static int cmp_listed(const void *a, const void *b)
{
    const listed *x = a, *y = b;
    return x->created < y->created ? -1 : x->created > y->created ? 1 : strcmp(x->id, y->id);
}

RF_EXPORT char **rf_session_list(const char *root, rf_error **err)
{
    _cleanup_free_ char *sessions = NULL;
    if (asprintf(&sessions, "%s/sessions", root) < 0)
        return rf_error_set(err, ENOMEM, "session"), NULL;
    _cleanup_free_ listed *v = NULL;
    size_t n = 0, cap = 0;
    _cleanup_closedir_ DIR *d = opendir(sessions);
    if (!d && errno != ENOENT)
        return rf_error_set(err, errno, "sessions: %s", sessions), NULL;
    for (struct dirent *de; d && (de = readdir(d));) {
        if (!rf_session_id_valid(de->d_name))
            continue;
        rf_session *s = rf_session_open(root, de->d_name, NULL);
        if (!s)
            continue; /* half made or foreign: not a session */
        if (n == cap) {
            listed *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *v);
            if (!nv) {
                rf_session_free(s);
                break;
            }
            v = nv;
        }
        v[n++] = (listed){ .id = steal_ptr(&s->id), .created = s->created };
        rf_session_free(s);
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_listed);
    char **ids = calloc(n + 1, sizeof *ids);
    for (size_t i = 0; i < n; i++)
        if (ids)
            ids[i] = v[i].id;
        else
            free(v[i].id);
    if (!ids)
        rf_error_set(err, ENOMEM, "sessions");
    return ids;
}

RF_EXPORT void rf_session_list_free(char **ids)
{
    for (size_t i = 0; ids && ids[i]; i++)
        free(ids[i]);
    free(ids);
}

/* overlayfs leaves its work directory's inner "work" at mode 0: a
 * directory we own but cannot read is opened again after a chmod. */
static int open_dir_owned(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && fchmodat(dirfd, name, 0700, 0) == 0)
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd;
}

static int remove_tree_at(int parent, const char *name, int depth)
{
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 0;
    if ((errno != EISDIR && errno != EPERM) || depth > RF_CHANGES_MAX_DEPTH)
        return -1;
    int fd = open_dir_owned(parent, name);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && remove_tree_at(dirfd(d), de->d_name, depth + 1) < 0)
            rc = -1;
    closedir(d);
    if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

int rf_changes_remove_tree(int dirfd, const char *name)
{
    return remove_tree_at(dirfd, name, 0);
}

RF_EXPORT int rf_session_discard(rf_session *s, rf_error **err)
{
    _cleanup_close_ int lock = rf_session_lock(s->dir, s->id, false, err);
    if (lock < 0)
        return -1;
    _cleanup_free_ char *sessions = NULL;
    if (asprintf(&sessions, "%s/sessions", s->root) < 0)
        return rf_error_set(err, ENOMEM, "session");
    _cleanup_close_ int fd = open(sessions, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || rf_changes_remove_tree(fd, s->id) < 0)
        return rf_error_set(err, errno, "discard session %s (%s)", s->id, s->dir);
    return 0;
}

RF_EXPORT int rf_policy_start_session(rf_policy *policy, rf_error **err)
{
    char id[RF_SESSION_ID_MAX];
    struct stat st;
    if (policy->changes != RF_CHANGES_OVERLAY || policy->session)
        return 0;
    if (rf_session_new_id(id, err) < 0)
        return -1;
    if (stat(policy->workspace, &st) < 0)
        return rf_error_set(err, errno, "workspace %s", policy->workspace);
    /* The owner the sandbox sees the workspace's directory as (common.c). */
    uid_t uid = st.st_uid;
    gid_t gid = st.st_gid;
    if (geteuid() == 0 && uid == 0)
        uid = policy->map_root_to, gid = (gid_t)policy->map_root_to;
    /* The start of each command sees the session exists: the ids check
     * (ids.c, common.c) is made here, once for the connection. */
    rf_changes_ids ids = { { policy->instance_subid ? policy->instance_uid : geteuid(), geteuid() },
                           { policy->instance_subid ? policy->instance_gid : getegid(), getegid() } };
    if (geteuid() != 0 && rf_changes_check_ids(policy->instance_root, policy->workspace, &ids, err) < 0)
        return -1;
    if (rf_session_prepare(policy->instance_root, id, policy->workspace, policy->instance, uid, gid, err) < 0)
        return -1;
    char *copy = strdup(id);
    if (!copy)
        return rf_error_set(err, ENOMEM, "session");
    free(policy->session);
    policy->session = copy;
    policy->changes = RF_CHANGES_OVERLAY;
    return 0;
}

RF_EXPORT const char *rf_policy_session(const rf_policy *policy)
{
    return policy ? policy->session : NULL;
}

void rf_sessions_remove_instance(const char *root, const char *instance)
{
    char **ids = rf_session_list(root, NULL);
    for (size_t i = 0; ids && ids[i]; i++) {
        rf_session *s = rf_session_open(root, ids[i], NULL);
        if (s && s->instance && !strcmp(s->instance, instance))
            rf_session_discard(s, NULL);
        rf_session_free(s);
    }
    rf_session_list_free(ids);
}
