/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The running sandboxes (`ringfence ps`, `top`, `stop`; docs/audit.md):
 * each rf_spawn writes <instance root>/run/<id>.json, removed when its
 * rf_proc is freed. The directory is under the instance root, which no
 * sandbox sees (plan.c masks it), so a command cannot add, edit or remove
 * an entry. An entry is believed only when the processes it names are
 * what it says (rf_registry_check): its owner alive with the file owner's
 * uid and the start time recorded, and the sandbox's init a child of that
 * owner with its own start time; a stale or forged entry is dropped. */
#pragma once
#include "ringfence.h"

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* <instance root>/run, malloc'd. */
char *rf_registry_dir(const char *instance_root);

/* What a registry entry records; strings borrowed. */
typedef struct rf_registry_entry {
    const char *id;
    pid_t pid;                /* the sandbox's init on the host */
    char *const *argv;
    const char *workspace, *backend, *instance;
    bool tree_via_init;       /* no pid namespace: stop kills the tree itself */
} rf_registry_entry;
int rf_registry_add(const char *dir, const rf_registry_entry *e, rf_error **err);
/* Removes the entry and its figures file. */
void rf_registry_remove(const char *dir, const char *id);
/* <dir>/<id>.net, malloc'd: the network proxy's bytes out and refusals
 * ("%020llu %020llu\n", rewritten in place by the supervisor: net/audit.c),
 * which rf_registry_list adds to the entry as bytes_out and refusals. */
char *rf_registry_stats_path(const char *dir, const char *id);

/* A process's start time in clock ticks since boot (/proc/PID/stat field
 * 22), its parent, and its real uid; -1 when it is gone. */
int rf_registry_proc(pid_t pid, unsigned long long *start, pid_t *ppid, uid_t *uid);

/* The entries of dir that pass the check, each with its live figures
 * added: age_seconds, cpu_seconds, memory_bytes, processes (the tree
 * under init). Stale entries the caller owns are removed. Appended to
 * `out` (a JSON array). */
int rf_registry_list(const char *dir, json_t *out, rf_error **err);
/* Every user's (root): the default instance root of each account with a
 * home, besides dir, and every registry a user pointed to (pointers.c). */
int rf_registry_list_all(const char *dir, json_t *out, rf_error **err);
/* Like rf_registry_list, for root reading a user's registry: only entries
 * owned by uid, and nothing removed. */
int rf_registry_list_of(const char *dir, uid_t uid, json_t *out);

/* pointers.c: where users with another RINGFENCE_HOME leave a pointer to
 * their registry for root's ps (a root-owned sticky directory, mode 1733,
 * made at boot by the package's tmpfiles.d; test-hook builds:
 * $RINGFENCE_TEST_REGISTRY_POINTERS). */
#define RF_REGISTRY_POINTERS "/run/ringfence/homes"
const char *rf_registry_pointers_dir(void);
/* Leave the pointer to dir (a non-root caller's registry), once; best
 * effort, silent: without it only root's listing misses this registry. */
void rf_registry_point(const char *dir);
/* List the registries users pointed to, but those whose real path is in
 * seen (already listed). */
int rf_registry_list_pointed(char **seen, size_t n_seen, json_t *out);

/* End the sandbox of a listed entry: SIGTERM (init passes it to the whole
 * tree), then after grace_s SIGKILL to the whole tree. Refused when the
 * caller is neither root nor the entry's uid. ret_killed: SIGKILL was
 * needed. */
int rf_registry_stop(const json_t *entry, double grace_s, bool *ret_killed, rf_error **err);
