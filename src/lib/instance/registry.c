/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The instance registry: metadata files written atomically, the locks
 * that keep create, remove and collection apart from each other and from
 * running sandboxes, and the identity range of a root caller's instances. */
#include "instance/instance.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

char *rf_instance_path_of(const char *root, const char *name, const char *suffix)
{
    char *p = NULL;
    if (asprintf(&p, "%s/instances%s%s%s", root, name ? "/" : "", name ? name : "", suffix ? suffix : "") < 0)
        return NULL;
    return p;
}

/* instances/.lock, exclusive: one create/remove/gc at a time. Returns the
 * fd (closing it releases the lock). */
int rf_instance_registry_lock(const char *root, rf_error **err)
{
    _cleanup_free_ char *dir = rf_instance_path_of(root, NULL, NULL);
    _cleanup_free_ char *path = rf_instance_path_of(root, ".lock", NULL);
    if (!dir || !path)
        return rf_error_set(err, ENOMEM, "instance");
    if ((mkdir(root, 0700) < 0 && errno != EEXIST) || (mkdir(dir, 0700) < 0 && errno != EEXIST))
        return rf_error_set(err, errno, "instance: create %s", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return rf_error_set(err, e, "instance: lock %s", path);
    }
    return fd;
}

static char *journal_path(const char *root, const char *name, const char *suffix)
{
    char *p = NULL;
    if (asprintf(&p, "%s/instances/.pending-%s%s", root, name, suffix) < 0)
        return NULL;
    return p;
}

/* Write `data` to path through path.tmp, synced, then renamed: a reader
 * sees the old content or the new, never a part. */
static int write_atomic(const char *path, const char *data)
{
    _cleanup_free_ char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp", path) < 0)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t len = strlen(data);
    int rc = fd >= 0 && write(fd, data, len) == (ssize_t)len && write(fd, "\n", 1) == 1 && fsync(fd) == 0 ? 0 : -1;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -1, e = errno;
    if (rc < 0)
        unlink(tmp);
    errno = e;
    return rc;
}

int rf_instance_journal_write(const char *root, const char *name, const char *const *paths, rf_error **err)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && paths[i]; i++)
        json_array_append_new(arr, json_string(paths[i]));
    char *text = arr ? json_dumps(arr, 0) : NULL;
    json_decref(arr);
    _cleanup_free_ char *path = journal_path(root, name, "");
    int rc = text && path ? write_atomic(path, text) : (errno = ENOMEM, -1);
    free(text);
    if (rc < 0)
        return rf_error_set(err, errno, "instance %s: write %s", name, path ? path : "journal");
    return 0;
}

void rf_instance_journal_drop(const char *root, const char *name)
{
    _cleanup_free_ char *path = journal_path(root, name, "");
    if (path)
        unlink(path);
}

/* A create or remove that did not finish: if its metadata exists the
 * instance is whole (create got to its end, or remove had not begun);
 * otherwise every path it named goes, and its lock file unless held. */
void rf_instance_journal_recover(const char *root, const char *entry)
{
    const char *name = entry + strlen(".pending-");
    _cleanup_free_ char *journal = journal_path(root, name, "");
    _cleanup_free_ char *meta = rf_instance_path_of(root, name, ".json");
    _cleanup_free_ char *lock = rf_instance_path_of(root, name, ".lock");
    if (!journal || !meta || !lock || !rf_instance_name_ok(name))
        return;
    if (access(meta, F_OK) < 0 && errno == ENOENT) {
        json_t *arr = json_load_file(journal, 0, NULL);
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v) {
            const char *p = json_string_value(v);
            if (p && p[0] == '/' && !strstr(p, "/../") && strcmp(p, root))
                rf_instance_remove_tree(p);
        }
        json_decref(arr);
        int fd = open(lock, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlink(lock);
        if (fd >= 0)
            close(fd);
    }
    unlink(journal);
}

int rf_instance_meta_write(const rf_instance *in, rf_error **err)
{
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:b, s:b, s:s?, s:I}", "name", in->name, "path", in->dir, "uid",
                          (json_int_t)in->uid, "gid", (json_int_t)in->gid, "own_identity", in->own_identity,
                          "ephemeral", in->ephemeral, "profile", in->profile, "created", (json_int_t)in->created);
    if (o && in->network)
        json_object_set(o, "network", in->network);
    if (o && in->subordinate) {
        json_object_set_new(o, "subordinate", json_true());
        json_object_set_new(o, "slot", json_integer((json_int_t)in->slot));
    }
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    _cleanup_free_ char *tmp = NULL;
    if (!text || asprintf(&tmp, "%s.tmp", in->meta_path) < 0) {
        free(text);
        return rf_error_set(err, ENOMEM, "instance");
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    int rc = fd >= 0 && write(fd, text, len) == (ssize_t)len && write(fd, "\n", 1) == 1 && fsync(fd) == 0 ? 0 : -1;
    int e = errno;
    if (fd >= 0)
        close(fd);
    free(text);
    rf_instance_fault("create", 8); /* NAME.json.tmp written, not yet renamed */
    if (rc == 0 && rename(tmp, in->meta_path) < 0)
        rc = -1, e = errno;
    if (rc < 0) {
        unlink(tmp);
        return rf_error_set(err, e, "instance: write %s", in->meta_path);
    }
    return 0;
}

int rf_instance_meta_read(rf_instance *in, rf_error **err)
{
    json_error_t je;
    json_t *o = json_load_file(in->meta_path, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
        if (access(in->meta_path, F_OK) < 0) {
            rf_error_set(err, ENOENT, "instance %s does not exist", in->name);
            return rf_error_hint_set(err, "create it: ringfence instance create %s", in->name);
        }
        return rf_error_set(err, EINVAL, "instance %s: %s: %s", in->name, in->meta_path, je.text);
    }
    const char *path = json_string_value(json_object_get(o, "path"));
    const char *profile = json_string_value(json_object_get(o, "profile"));
    int rc = 0;
    if (!path || path[0] != '/' || !json_is_integer(json_object_get(o, "uid"))) {
        rc = rf_error_set(err, EINVAL, "instance %s: %s is damaged", in->name, in->meta_path);
    } else {
        in->dir = strdup(path);
        in->profile = profile ? strdup(profile) : NULL;
        in->uid = (uid_t)json_integer_value(json_object_get(o, "uid"));
        in->gid = (gid_t)json_integer_value(json_object_get(o, "gid"));
        in->own_identity = json_is_true(json_object_get(o, "own_identity"));
        in->subordinate = json_is_true(json_object_get(o, "subordinate"));
        in->network = json_incref(json_object_get(o, "network"));
        in->slot = (unsigned long)json_integer_value(json_object_get(o, "slot"));
        in->ephemeral = json_is_true(json_object_get(o, "ephemeral"));
        in->created = (long long)json_integer_value(json_object_get(o, "created"));
        if (!in->dir)
            rc = rf_error_set(err, ENOMEM, "instance");
    }
    json_decref(o);
    return rc;
}

/* Does any instance's metadata (NAME.json in the root) satisfy match? */
static bool any_instance(const char *root, bool (*match)(json_t *meta, json_int_t value), json_int_t value)
{
    _cleanup_free_ char *dir = rf_instance_path_of(root, NULL, NULL);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") || e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        json_t *o = json_load_file(path, 0, NULL);
        found = o && match(o, value);
        json_decref(o);
    }
    closedir(d);
    return found;
}

static bool has_own_uid(json_t *meta, json_int_t uid)
{
    return json_integer_value(json_object_get(meta, "uid")) == uid &&
           json_is_true(json_object_get(meta, "own_identity"));
}

static bool uid_taken_by_instance(const char *root, uid_t uid)
{
    return any_instance(root, has_own_uid, (json_int_t)uid);
}

/* The lowest id of the range that no account and no other instance has,
 * as uid and gid at once. Called under the registry lock. */
int rf_instance_pick_uid(const char *root, uid_t *out, rf_error **err)
{
    for (uid_t u = RF_INSTANCE_UID_BASE; u < RF_INSTANCE_UID_BASE + RF_INSTANCE_UID_COUNT; u++) {
        if (getpwuid(u) || getgrgid((gid_t)u) || uid_taken_by_instance(root, u))
            continue;
        *out = u;
        return 0;
    }
    rf_error_set(err, ENOSPC, "instance: every id of the range %u-%u is in use", RF_INSTANCE_UID_BASE,
                 RF_INSTANCE_UID_BASE + RF_INSTANCE_UID_COUNT - 1);
    return rf_error_hint_set(err, "remove instances you no longer need: ringfence instance list");
}

static bool has_slot(json_t *meta, json_int_t slot)
{
    return json_is_true(json_object_get(meta, "subordinate")) &&
           json_integer_value(json_object_get(meta, "slot")) == slot;
}

static bool slot_taken(const char *root, unsigned long slot)
{
    return any_instance(root, has_slot, (json_int_t)slot);
}

/* The lowest slot of the caller's subordinate range no other instance of
 * this root has. Called under the registry lock. */
int rf_instance_pick_slot(const char *root, unsigned long slots, unsigned long *out, rf_error **err)
{
    for (unsigned long k = 0; k < slots && k < RF_INSTANCE_UID_COUNT; k++)
        if (!slot_taken(root, k)) {
            *out = k;
            return 0;
        }
    rf_error_set(err, ENOSPC, "instance: every id of your subordinate range is in use");
    return rf_error_hint_set(err, "remove instances you no longer need: ringfence instance list");
}

void rf_instance_free(rf_instance *in)
{
    if (!in)
        return;
    if (in->lock_fd >= 0)
        close(in->lock_fd);
    free(in->name);
    free(in->root);
    free(in->dir);
    free(in->meta_path);
    free(in->profile);
    json_decref(in->network);
    free(in);
}
