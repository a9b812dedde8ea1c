/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cgroup v2 subtree to divide where no systemd manager hands one out
 * (Alpine and other OpenRC hosts, WSL 2 with systemd off, a container's own
 * init): what runc's and crun's cgroupfs managers do.
 *
 *   root   a shared intermediate TOP/ringfence below the hierarchy's top
 *          (the root cgroup, which has no internal-process rule): the
 *          controllers are enabled in TOP's and in its subtree_control,
 *          and each sandbox gets a cgroup in it. It never holds a process;
 *          it is left in place for the next run, as runc leaves its own.
 *   a user with a delegated subtree (her cgroup, its cgroup.procs and
 *          cgroup.subtree_control writable by her):
 *          - we run in a leaf below a delegated cgroup that already hands
 *            controllers down: the sandboxes are siblings of our leaf;
 *          - we run in the delegated cgroup itself, alone: ringfence moves
 *            itself into a leaf of its own (ringfence-PID-self, as
 *            systemd-run's scope does) so that the cgroup may hand
 *            controllers to the sandboxes' cgroups, and says so.
 *          Other processes in that cgroup are never moved: that is refused,
 *          naming the fix.
 *
 * The functions taking a directory do not look at /proc, so tests can aim
 * them at a cgroup below their own. docs/limits.md has the story. */
#pragma once
#include "ringfence.h"
#include "limits/hierarchy.h"

#include <stdbool.h>

#define RF_CGMANAGER_SHARED "ringfence" /* TOP/ringfence, root's intermediate */

/* Root: make (or reuse) top/ringfence and enable there every wanted
 * controller that top's cgroup.controllers lists. Returns the malloc'd
 * directory, or NULL with *err naming the step. */
char *rf_cgmanager_shared(const char *top, const bool want[RF_CTRL_N], rf_error **err);

/* A user: the directory that the sandboxes' cgroups go in, given `own`,
 * the cgroup this process runs in (see above). *note (may be NULL) gets a
 * malloc'd sentence when ringfence moved itself, else NULL. Returns the
 * malloc'd directory, or NULL with *err saying why (not delegated, other
 * processes in it). */
char *rf_cgmanager_delegated(const char *own, const bool want[RF_CTRL_N], char **note,
                             rf_error **err);

/* The top of the cgroup2 hierarchy that `own` is in, as far as this mount
 * shows it (the root cgroup, or a cgroup namespace's root). Malloc'd. */
char *rf_cgmanager_top(const char *own);

/* Once per process (thread-safe): for root the shared intermediate below
 * the top of own's hierarchy, for anyone else rf_cgmanager_delegated().
 * *ret_dir is borrowed, kept for the process's life; *note as above, only
 * on the call that made it. */
int rf_cgmanager_dir(const char *own, const bool want[RF_CTRL_N], const char **ret_dir,
                     char **note, rf_error **err);

/* The directory rf_cgmanager_dir() gave this process, or NULL. */
const char *rf_cgmanager_made(void);
