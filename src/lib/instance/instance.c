/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_instance_*: create, open, close, remove, list, collect. Each step that
 * a crash could interrupt leaves something the next step recognises:
 * a tree is built under a temporary name and renamed into place, the
 * metadata is written last (its presence is what makes an instance
 * exist), a removal renames the tree away before deleting it, and every
 * open collects what an interrupted step or a killed ephemeral run left. */
#include "instance/instance.h"
#include "changes/changes.h"
#include "instance/subid.h"
#include "model/policy.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct {
    const char *name;
    uint64_t memory;
    uint64_t pids;
    double cpu;
} profiles[] = {
    { "chat", 256ull << 20, 200, 0.25 }, /* seed 004: per chat */
};

RF_EXPORT void rf_instance_options_init(rf_instance_options *o)
{
    memset(o, 0, sizeof *o);
}

static int check_profile(const char *profile, rf_error **err)
{
    if (!profile)
        return 0;
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (!strcmp(profile, profiles[i].name))
            return 0;
    rf_error_set(err, EINVAL, "instance: unknown profile '%s'", profile);
    return rf_error_hint_set(err, "profiles: chat (256 MiB, 200 processes, a quarter CPU)");
}

rf_instance *rf_instance_new(const char *root, const char *name, rf_error **err)
{
    if (!rf_instance_name_ok(name)) {
        rf_error_set(err, EINVAL, "instance name '%s': use letters, digits, '-', '_' and '.', at most 64, "
                                  "starting with a letter or digit", name);
        return NULL;
    }
    rf_instance *in = calloc(1, sizeof *in);
    if (in) {
        in->lock_fd = -1;
        in->name = strdup(name);
        in->root = strdup(root);
        in->meta_path = rf_instance_path_of(root, name, ".json");
    }
    if (!in || !in->name || !in->root || !in->meta_path) {
        rf_instance_free(in);
        rf_error_set(err, ENOMEM, "instance");
        return NULL;
    }
    return in;
}

/* Shared lock on NAME.lock for as long as the handle is open. */
static int hold(rf_instance *in, int how, rf_error **err)
{
    _cleanup_free_ char *path = rf_instance_path_of(in->root, in->name, ".lock");
    int fd = path ? open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    if (fd < 0 || flock(fd, how) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return rf_error_set(err, e, "instance %s: lock", in->name);
    }
    in->lock_fd = fd;
    return 0;
}

/* Journal first (what may be left), then the metadata goes (from here the
 * instance no longer exists), the tree is renamed away and deleted, and
 * the journal dropped; a crash anywhere is finished by the next collection. */
int rf_instance_destroy(rf_instance *in)
{
    char away[4200];
    snprintf(away, sizeof away, "%s/instances/.old-%s-%ld", in->root, in->name, (long)getpid());
    bool below = rf_path_is_beneath(in->dir, in->root);
    if (!below)
        snprintf(away, sizeof away, "%s.rf-old-%ld", in->dir, (long)getpid());
    const char *const paths[] = { in->dir, away, NULL };
    if (rf_instance_journal_write(in->root, in->name, paths, NULL) < 0)
        return -1;
    rf_instance_fault("rm", 1);
    if (unlink(in->meta_path) < 0 && errno != ENOENT)
        return -1;
    rf_instance_fault("rm", 2);
    const char *gone = rename(in->dir, away) == 0 ? away : in->dir;
    rf_instance_fault("rm", 3);
    int rc = rf_instance_remove_tree(gone) < 0 && errno != ENOENT ? -1 : 0;
    rf_instance_fault("rm", 4);
    _cleanup_free_ char *lock = rf_instance_path_of(in->root, in->name, ".lock");
    if (lock)
        unlink(lock);
    if (rc == 0) {
        rf_instance_journal_drop(in->root, in->name);
        rf_sessions_remove_instance(in->root, in->name);
    }
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

/* One entry of instances/: what an interrupted step or a killed ephemeral
 * run left is removed. Returns whether something was done. */
static bool collect_one(const char *root, const char *dir, const struct dirent *e)
{
    const char *n = e->d_name;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, n);
    if (ends_with(n, ".tmp")) /* NAME.json.tmp, .pending-NAME.tmp: never renamed into place */
        return unlink(path) == 0;
    if (!strncmp(n, ".pending-", 9)) {
        rf_instance_journal_recover(root, n);
        return true;
    }
    if (!strncmp(n, ".new-", 5) || !strncmp(n, ".old-", 5))
        return rf_instance_remove_tree(path) == 0;
    if (n[0] == '.')
        return false;
    if (ends_with(n, ".json")) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(strlen(n) - 5), n);
        rf_instance *in = rf_instance_new(root, name, NULL);
        bool done = in && rf_instance_meta_read(in, NULL) == 0 && in->ephemeral &&
                    hold(in, LOCK_EX | LOCK_NB, NULL) == 0 && rf_instance_destroy(in) == 0;
        rf_instance_free(in);
        return done;
    }
    if (e->d_type == DT_DIR) {
        /* A tree without metadata: a create that died before its end. */
        char meta[4300];
        snprintf(meta, sizeof meta, "%s.json", path);
        if (access(meta, F_OK) < 0 && errno == ENOENT)
            return rf_instance_remove_tree(path) == 0;
    }
    return false;
}

/* Under the registry lock: end interrupted creates and removes (their
 * journals first, which also cover trees outside the root), and remove
 * ephemeral instances nothing runs in (ringfence was killed). */
static void collect_locked(const char *root)
{
    _cleanup_free_ char *dir = rf_instance_path_of(root, NULL, NULL);
    int step = 1;
    rf_instance_fault("gc", step++);
    for (int pass = 0; dir && pass < 2; pass++) {
        DIR *d = opendir(dir);
        if (!d)
            return;
        struct dirent *e;
        while ((e = readdir(d)))
            if ((pass == 0) == !strncmp(e->d_name, ".pending-", 9) && collect_one(root, dir, e))
                rf_instance_fault("gc", step++);
        closedir(d);
    }
}

RF_EXPORT int rf_instance_gc(const char *root, rf_error **err)
{
    int lock = rf_instance_registry_lock(root, err);
    if (lock < 0)
        return -1;
    collect_locked(root);
    close(lock);
    return 0;
}

/* mkdir -p of dir's parents (0700: they hold nothing but the tree). */
static int make_parents(const char *dir, rf_error **err)
{
    _cleanup_free_ char *p = strdup(dir);
    if (!p)
        return rf_error_set(err, ENOMEM, "instance");
    for (char *s = p + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return rf_error_set(err, errno, "instance: create %s", p);
        *s = '/';
    }
    return 0;
}

static int give_to_subordinate(rf_instance *in, const char *staging, rf_error **err)
{
    rf_subid s;
    if (rf_instance_check_links(staging, err) < 0)
        return -1;
    if (rf_subid_ranges(&s) < 0)
        return rf_error_set(err, ENOENT, "instance %s: no subordinate id range", in->name);
    return rf_subid_chown_tree(&s, staging, in->uid, in->gid, err);
}

/* The tree under a temporary name next to its place, then renamed; the
 * journal names both, so a crash at any step is undone by the next
 * collection (the metadata, written last, is what makes it exist). */
static int build(rf_instance *in, const rf_instance_options *o, rf_error **err)
{
    char staging[4200];
    if (rf_path_is_beneath(in->dir, in->root))
        snprintf(staging, sizeof staging, "%s/instances/.new-%s-%ld", in->root, in->name, (long)getpid());
    else
        snprintf(staging, sizeof staging, "%s.rf-new-%ld", in->dir, (long)getpid());
    if (access(in->dir, F_OK) == 0) {
        rf_error_set(err, EEXIST, "instance %s: %s exists already", in->name, in->dir);
        return rf_error_hint_set(err, "choose a --target that does not exist yet");
    }
    const char *const paths[] = { staging, in->dir, NULL };
    int rc = rf_instance_journal_write(in->root, in->name, paths, err);
    rf_instance_fault("create", 2);
    /* A subordinate id's tree is built as the caller's, then given away. */
    uid_t uid = in->subordinate ? getuid() : in->uid;
    gid_t gid = in->subordinate ? getgid() : in->gid;
    if (rc == 0)
        rc = make_parents(in->dir, err);
    if (rc == 0)
        rc = rf_instance_make_tree(staging, uid, gid, err);
    rf_instance_fault("create", 3);
    for (size_t i = 0; rc == 0 && o->credentials && o->credentials[i]; i++)
        rc = rf_instance_copy_credential(staging, o->credentials[i], uid, gid, err);
    rf_instance_fault("create", 4);
    for (size_t i = 0; rc == 0 && o->copies && o->copies[i]; i++)
        rc = rf_instance_copy_tree(staging, o->copies[i], uid, gid, err);
    rf_instance_fault("create", 5);
    if (rc == 0 && in->subordinate) /* checked while the caller can still read it all */
        rc = give_to_subordinate(in, staging, err);
    rf_instance_fault("create", 6);
    if (rc == 0 && rename(staging, in->dir) < 0)
        rc = rf_error_set(err, errno, "instance %s: rename into %s", in->name, in->dir);
    rf_instance_fault("create", 7);
    if (rc < 0) {
        rf_instance_remove_tree(staging);
        rf_instance_journal_drop(in->root, in->name);
        return -1;
    }
    if ((!in->subordinate && rf_instance_check_links(in->dir, err) < 0) || rf_instance_meta_write(in, err) < 0) {
        rf_instance_remove_tree(in->dir);
        rf_instance_journal_drop(in->root, in->name);
        return -1;
    }
    rf_instance_fault("create", 9);
    rf_instance_journal_drop(in->root, in->name);
    return 0;
}

/* An unprivileged caller asked for an identity of its own: a slot of its
 * subordinate ranges, or an error that says what to configure. */
static int pick_subordinate(rf_instance *in, rf_error **err)
{
    rf_subid s;
    if (rf_subid_ranges(&s) < 0) {
        struct passwd *pw = getpwuid(getuid());
        rf_error_set(err, ENOENT, "instance %s: an identity of its own needs a subordinate id range for you in "
                                  "/etc/subuid and /etc/subgid, and there is none", in->name);
        return rf_error_hint_set(err, "as root: echo %s:%lu:65536 | tee -a /etc/subuid /etc/subgid "
                                      "(a range no other user has; `usermod --add-subuids` picks one)",
                                 pw ? pw->pw_name : "USER", 100000ul + 65536ul * (unsigned long)getuid());
    }
    if (rf_instance_pick_slot(in->root, rf_subid_slots(&s), &in->slot, err) < 0)
        return -1;
    rf_subid_slot_ids(&s, in->slot, &in->uid, &in->gid);
    in->own_identity = in->subordinate = true;
    return 0;
}

static int set_place_and_identity(rf_instance *in, const rf_instance_options *o, rf_error **err)
{
    if (o->target) {
        in->dir = rf_path_normalize(o->target);
        const char *why = in->dir ? rf_instance_target_refused(in->dir, o->home, in->root) : "not an absolute path";
        if (why) {
            rf_error_set(err, EPERM, "instance %s: --target %s is %s", in->name, o->target, why);
            return rf_error_hint_set(err, "choose a directory of its own, e.g. ~/agents/%s (not yet existing)",
                                     in->name);
        }
    } else {
        in->dir = rf_instance_path_of(in->root, in->name, NULL);
    }
    if (!in->dir)
        return rf_error_set(err, ENOMEM, "instance");
    in->ephemeral = o->ephemeral;
    in->network = o->network_of ? rf_instance_net_capture(o->network_of) : NULL;
    in->created = (long long)time(NULL);
    if (o->profile && !(in->profile = strdup(o->profile)))
        return rf_error_set(err, ENOMEM, "instance");
    /* A root caller gives each instance an id of its own (seed 004): two
     * chats' files then belong to different owners, apart even outside
     * the sandbox. Other callers have only their own id to give. */
    if (geteuid() == 0) {
        in->own_identity = true;
        if (rf_instance_pick_uid(in->root, &in->uid, err) < 0)
            return -1;
        in->gid = (gid_t)in->uid;
    } else if (o->own_identity) {
        return pick_subordinate(in, err);
    } else {
        in->uid = getuid();
        in->gid = getgid();
    }
    return 0;
}

/* A handle, the registry lock (*lock), and what a crash left collected. */
static rf_instance *begin(const char *root, const char *name, int *lock, rf_error **err)
{
    if (!root || root[0] != '/') {
        rf_error_set(err, EINVAL, "instance: the instance root must be an absolute path");
        return NULL;
    }
    rf_instance *in = rf_instance_new(root, name, err);
    if (!in)
        return NULL;
    *lock = rf_instance_registry_lock(root, err);
    if (*lock < 0) {
        rf_instance_free(in);
        return NULL;
    }
    collect_locked(root);
    return in;
}

/* The shared lock of an open handle, then the registry lock released. */
static rf_instance *end(rf_instance *in, int lock, int rc, rf_error **err)
{
    if (rc == 0)
        rc = hold(in, LOCK_SH, err);
    close(lock);
    if (rc < 0) {
        rf_instance_free(in);
        return NULL;
    }
    return in;
}

RF_EXPORT rf_instance *rf_instance_create(const char *root, const char *name, const rf_instance_options *opts,
                                          rf_error **err)
{
    rf_instance_options none;
    rf_instance_options_init(&none);
    const rf_instance_options *o = opts ? opts : &none;
    if (check_profile(o->profile, err) < 0)
        return NULL;
    int lock;
    rf_instance *in = begin(root, name, &lock, err);
    if (!in)
        return NULL;
    rf_instance_fault("create", 1);
    int rc = 0;
    if (access(in->meta_path, F_OK) == 0) {
        rf_error_set(err, EEXIST, "instance %s exists already", name);
        rf_error_hint_set(err, "use it (--instance %s), or remove it first: ringfence instance rm %s", name, name);
        rc = -1;
    }
    if (rc == 0)
        rc = set_place_and_identity(in, o, err);
    if (rc == 0)
        rc = build(in, o, err);
    return end(in, lock, rc, err);
}

/* Seed 002: nothing in the tree may lead outside it, checked at every start;
 * a subordinate id's tree is read as 0 of a namespace that maps it. */
static int check_tree(const rf_instance *in, rf_error **err)
{
    rf_subid s;
    if (!in->subordinate)
        return rf_instance_check_links(in->dir, err);
    if (rf_subid_ranges(&s) < 0) {
        rf_error_set(err, ENOENT, "instance %s has an id of its own (%u) from your subordinate range, but "
                                  "/etc/subuid or /etc/subgid lists none for you any more", in->name, (unsigned)in->uid);
        return rf_error_hint_set(err, "restore your range there (the instance's files belong to it)");
    }
    return rf_subid_check_links(&s, in->dir, err);
}

RF_EXPORT rf_instance *rf_instance_open(const char *root, const char *name, rf_error **err)
{
    int lock;
    rf_instance *in = begin(root, name, &lock, err);
    if (!in)
        return NULL;
    int rc = rf_instance_meta_read(in, err);
    if (rc == 0)
        rc = check_tree(in, err);
    return end(in, lock, rc, err);
}

RF_EXPORT const char *rf_instance_name(const rf_instance *in)
{
    return in ? in->name : NULL;
}

RF_EXPORT const char *rf_instance_dir(const rf_instance *in)
{
    return in ? in->dir : NULL;
}

/* Close: an ephemeral instance goes with its last sandbox. */
RF_EXPORT void rf_instance_close(rf_instance *in)
{
    if (!in)
        return;
    if (in->ephemeral && in->lock_fd >= 0) {
        close(in->lock_fd);
        in->lock_fd = -1;
        int lock = rf_instance_registry_lock(in->root, NULL);
        if (lock >= 0 && hold(in, LOCK_EX | LOCK_NB, NULL) == 0)
            rf_instance_destroy(in);
        if (lock >= 0)
            close(lock);
    }
    rf_instance_free(in);
}
