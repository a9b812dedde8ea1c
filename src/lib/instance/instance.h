/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Instances: a named, long-lived home for an agent, a chat or a server
 * (seeds 002 and 004). On disk, below the instance root:
 *
 *   instances/NAME.json   metadata (the caller's, 0600; never inside the tree,
 *                         which the sandbox writes)
 *   instances/NAME.lock   flock: shared while a sandbox of NAME runs,
 *                         exclusive to remove it
 *   instances/NAME/       the tree (or --target DIR): config data state cache
 *                         runtime home tmp, 0700, owned by the identity
 *   instances/.lock       exclusive while creating, removing, collecting
 *   instances/.new-NAME-*, .old-NAME-*: a create or remove that a crash
 *                         interrupted; `instance gc` (and every open) ends it
 *   instances/.pending-NAME  the paths a create or remove in progress may
 *                         leave (also a --target outside the root): removed
 *                         by the next collection unless NAME.json exists
 *
 * Internal to libringfence; the API is rf_instance_* in ringfence.h. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <sys/types.h>

/* The default identity range for a root caller's instances: above every
 * regular and system account, below the 32-bit overflow ids, and outside
 * the ranges systemd uses for containers (docs/instances.md). */
#define RF_INSTANCE_UID_BASE 2000000000u
#define RF_INSTANCE_UID_COUNT 65536u

struct rf_instance {
    char *name;
    char *root;      /* the instance root */
    char *dir;       /* the tree */
    char *meta_path; /* instances/NAME.json */
    uid_t uid;
    gid_t gid;
    bool own_identity; /* uid/gid are the instance's, not the caller's */
    bool subordinate;  /* ...from the unprivileged caller's /etc/subuid range */
    unsigned long slot; /* which id of that range (subid.h) */
    bool ephemeral;
    char *profile;   /* or NULL */
    struct json_t *network; /* its network settings (network.c), or NULL */
    long long created;
    int lock_fd;     /* shared flock on NAME.lock while open */
};

/* instance.c: a handle with name, root and metadata path set (name
 * checked); removal of the tree (renamed away first) and registry files. */
rf_instance *rf_instance_new(const char *root, const char *name, rf_error **err);
int rf_instance_destroy(rf_instance *in);

/* tree.c: the directories, the copies, the checks, removal. */
int rf_instance_make_tree(const char *dir, uid_t uid, gid_t gid, rf_error **err);
int rf_instance_copy_credential(const char *dir, const char *spec, uid_t uid, gid_t gid, rf_error **err);
int rf_instance_copy_tree(const char *dir, const char *spec, uid_t uid, gid_t gid, rf_error **err);
int rf_instance_check_links(const char *dir, rf_error **err);
int rf_instance_remove_tree(const char *path);

/* network.c: the policy's network settings as stored with an instance
 * (NULL: none), and a run's policy narrowed to them. */
struct json_t *rf_instance_net_capture(const rf_policy *p);
int rf_instance_net_apply(rf_policy *p, const rf_instance *in, rf_error **err);

/* target.c: why a tree may not live at dir (a sensitive place, a symlink
 * in its path), or NULL. */
const char *rf_instance_target_refused(const char *dir, const char *home, const char *root);
bool rf_instance_name_ok(const char *name);

/* registry.c: the journal of a create or remove in progress (.pending-NAME,
 * written atomically before the first path is touched), and its recovery
 * under the registry lock. */
int rf_instance_journal_write(const char *root, const char *name, const char *const *paths, rf_error **err);
void rf_instance_journal_drop(const char *root, const char *name);
void rf_instance_journal_recover(const char *root, const char *entry);

/* fault.c: SIGKILL at step N of OP (create, rm, gc) when the test hook asks
 * (RINGFENCE_TEST_INSTANCE_FAULT_STEP=OP:N, only in -Dtest_hooks builds). */
#ifdef RF_TEST_HOOKS
void rf_instance_fault(const char *op, int step);
#else
static inline void rf_instance_fault(const char *op, int step)
{
    (void)op;
    (void)step;
}
#endif

/* registry.c: metadata, locks, the identity range, listing, collection. */
int rf_instance_registry_lock(const char *root, rf_error **err);
int rf_instance_meta_write(const rf_instance *in, rf_error **err);
int rf_instance_meta_read(rf_instance *in, rf_error **err);
int rf_instance_pick_uid(const char *root, uid_t *out, rf_error **err);
int rf_instance_pick_slot(const char *root, unsigned long slots, unsigned long *out, rf_error **err);
char *rf_instance_path_of(const char *root, const char *name, const char *suffix);
void rf_instance_free(rf_instance *in);
