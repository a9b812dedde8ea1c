/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An unprivileged caller's subordinate ids (/etc/subuid, /etc/subgid),
 * through the setuid helpers newuidmap and newgidmap: the instance's own
 * identity, and a user namespace in which the caller can own, check and
 * delete a tree that belongs to such an id (docs/instances.md). */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct rf_subid {
    unsigned long uid_start, uid_count; /* the caller's range in /etc/subuid */
    unsigned long gid_start, gid_count; /* and in /etc/subgid */
} rf_subid;

/* The parsers behind them (fuzz/fuzz-subid.c). parse_first: the first
 * "WHO:START:COUNT" line whose WHO is uid or name (NULL: none) with START
 * > 0, COUNT >= 2, all digits, and START + COUNT - 1 a 32-bit id; -1 when
 * there is none. parse_past: the highest START + COUNT, at least at. */
int rf_subid_parse_first(FILE *f, const char *uid, const char *name, unsigned long *start, unsigned long *count);
unsigned long rf_subid_parse_past(FILE *f, unsigned long at);

/* The caller's first range in each file; -1 (ENOENT) when one is missing. */
int rf_subid_ranges(rf_subid *out);

/* Where a new range could start: past every range in /etc/subuid and
 * /etc/subgid, at least 100000 (what `instance show` suggests). */
unsigned long rf_subid_free_start(void);

/* Instance slot k's ids: the upper half of the ranges, start + count/2 + k
 * (the lower half is what rootless containers use for their own low ids). */
unsigned long rf_subid_slots(const rf_subid *s);
void rf_subid_slot_ids(const rf_subid *s, unsigned long slot, uid_t *uid, gid_t *gid);

/* Write pid's uid_map and gid_map with newuidmap/newgidmap ("IN HOST
 * COUNT..." each); the helpers check the ranges against /etc/sub[ug]id. */
int rf_subid_write_maps(pid_t pid, const char *uid_map, const char *gid_map, rf_error **err);

/* Run fn in a child in a new user namespace where the caller is 0 and its
 * ranges are 1..count, with every capability there: it may chown to, read
 * and delete what the subordinate ids own. fn's error comes back in *err. */
int rf_subid_run(const rf_subid *s, int (*fn)(void *arg, rf_error **err), void *arg, rf_error **err);

/* The tree at dir (no link followed) chowned to the host ids uid/gid, from
 * inside rf_subid_run. */
int rf_subid_chown_tree(const rf_subid *s, const char *dir, uid_t uid, gid_t gid, rf_error **err);
/* rf_instance_check_links and rf_instance_remove_tree, as 0 of that namespace. */
int rf_subid_check_links(const rf_subid *s, const char *dir, rf_error **err);
int rf_subid_remove_tree(const char *path);
