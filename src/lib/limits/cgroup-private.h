/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The inside of rf_cgroup, shared by cgroup.c and keeper.c. Names are fixed
 * arrays so the keeper, a forked child, can use them without the heap. */
#pragma once
#include "limits/cgroup.h"
#include "limits/hierarchy.h"

#define RF_CG_MAX_DIRS 4 /* the v2 cgroup + one per v1 hierarchy */
#define RF_CG_NAME_MAX 80
#define RF_CG_KILL_TIMEOUT_MS 5000
#define RF_CG_RMDIR_TIMEOUT_MS 2000

typedef struct rf_cg_dir {
    int id;         /* hierarchy id (0 = the unified v2 hierarchy) */
    bool v2;
    int parent_fd;  /* the caller's own cgroup in that hierarchy */
    int fd;         /* the sandbox's cgroup */
    char *path;     /* absolute, for messages */
    char name[RF_CG_NAME_MAX];
} rf_cg_dir;

struct rf_cgroup {
    rf_cg_dir dirs[RF_CG_MAX_DIRS];
    size_t n;
    int ctrl_dir[RF_CTRL_N]; /* index in dirs enforcing each controller, or -1 */
    int v2_dir;              /* index of the v2 cgroup, or -1 */
    char name[RF_CG_NAME_MAX];
    pid_t keeper_pid;        /* 0 = no keeper */
    int keeper_pidfd;
    int keeper_release_fd;   /* closing it tells the keeper to finish */
};

/* Kill and remove every directory; async-signal-safe (the keeper uses it). */
int rf_cgroup_kill_and_remove(rf_cgroup *cg);
/* Tell the keeper to finish (it then kills and removes, as destroy does). */
void rf_cgroup_keeper_release(rf_cgroup *cg);
/* Release and reap the keeper, if any (rf_cgroup_destroy calls it). */
void rf_cgroup_keeper_stop(rf_cgroup *cg);
