/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where our own cgroup is, per controller: which hierarchy (the unified v2
 * one or a v1 one) carries memory, pids and cpu, and the directory of the
 * caller's cgroup in it. Read from /proc/self/cgroup and
 * /proc/self/mountinfo, so pure v2, pure v1 and the hybrid are all just
 * data. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <sys/types.h>

typedef enum { RF_CTRL_MEMORY, RF_CTRL_PIDS, RF_CTRL_CPU, RF_CTRL_N } rf_ctrl;

typedef struct rf_hier {
    int id;    /* hierarchy id in /proc/self/cgroup (0 = unified), -1 = none */
    char *dir; /* our own cgroup's directory in that hierarchy, or NULL */
} rf_hier;

typedef struct rf_hierarchies {
    rf_hier v2;               /* the unified hierarchy, may carry nothing */
    rf_hier v1[RF_CTRL_N];    /* the v1 hierarchy carrying each controller */
    bool v2_has[RF_CTRL_N];   /* listed in our v2 cgroup.controllers */
} rf_hierarchies;

const char *rf_hierarchy_ctrl_name(rf_ctrl c); /* "memory", "pids", "cpu" */

/* Pure: fill h from the texts of /proc/self/cgroup and /proc/self/mountinfo
 * (v2_has stays false). Returns 0, or -1 on allocation failure. */
int rf_hierarchy_parse(const char *proc_cgroup, const char *mountinfo, rf_hierarchies *h,
                       rf_error **err);
/* A whole /proc or cgroupfs text file (at most 16 MiB), NUL-terminated and
 * malloc'd, or NULL with errno set. */
char *rf_hierarchy_read_text(const char *path);
/* Read the two files and our v2 cgroup.controllers. */
int rf_hierarchy_discover(rf_hierarchies *h, rf_error **err);
/* The same for the cgroups of another process (pid > 0), seen through our
 * own mount table. */
int rf_hierarchy_discover_pid(pid_t pid, rf_hierarchies *h, rf_error **err);
void rf_hierarchy_clear(rf_hierarchies *h);
