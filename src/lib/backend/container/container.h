/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The container backend (Mitto's `docker` runner): the plan run by podman
 * (rootless for an unprivileged caller), or by docker when its daemon
 * answers and podman is absent.
 *
 * argv.c    plan → podman/docker argv: a pure function, golden-tested
 * choose.c  at plan time: which tool, is it usable, what it cannot do
 * rootfs.c  the root directory podman's --rootfs gets: empty directories
 *           and files as mount points, the plan's symlinks
 * run.c     the thin runner: a supervisor that runs the tool, passes
 *           signals, reports the status, removes the container on every
 *           way out (exit, timeout, ringfence killed) */
#pragma once
#include "model/plan.h"

#include <jansson.h>
#include <stdbool.h>

typedef enum { RF_CT_PODMAN, RF_CT_DOCKER } rf_container_tool;

/* Everything the translation needs beyond the plan, decided at plan time. */
typedef struct rf_container_opts {
    rf_container_tool tool;
    const char *tool_path;    /* absolute path of podman or docker */
    bool rootless;            /* podman run by an unprivileged caller */
    bool host_root;           /* root caller: uid 0 without capabilities (see choose.c) */
    const char *runtime;      /* --runtime NAME, or NULL for the tool's default */
    const char *name;         /* unique container name */
    const char *rootfs;       /* --rootfs directory (no image), else NULL */
    const char *image;        /* the image (container.image), else NULL */
    const char *seccomp_path; /* the filter as OCI JSON, or NULL (seccomp: off) */
    const char *netns_path;   /* network: allowlist: the network namespace
                                 ringfence made, bind-mounted here (run.c) */
    unsigned long nofile;     /* --ulimit nofile: no higher than the caller's hard limit */
    unsigned long nproc;      /* --ulimit nproc */
    bool init;                /* --init: a small init as pid 1 (podman: catatonit) */
    bool no_limits;           /* rootless on cgroup v1: memory, pids and cpu
                                 limits cannot be given (accept_weaker) */
} rf_container_opts;

/* The plan as an argv for opts->tool (NULL-terminated, rf_strv_free). */
int rf_container_argv(const rf_plan *plan, const rf_container_opts *opts, char ***argv, rf_error **err);

/* What the plan keeps for the runner (plan->container). */
struct rf_container_plan {
    rf_container_opts opts;   /* its strings point into the fields below */
    char *tool_path, *runtime, *name, *dir, *rootfs, *seccomp_path, *image, *netns_path;
    char **argv;
};
void rf_container_plan_free(struct rf_container_plan *c);
json_t *rf_container_plan_json(const rf_plan *plan);

/* Plan time: find the tool, check that it can run here, fill
 * plan->container and plan->cannot, refuse what it cannot honour unless
 * accept_weaker. network: allowlist only with podman run by root. */
int rf_container_plan_finish(rf_plan *plan, const rf_policy *policy, rf_error **err);

/* The root directory for --rootfs: mount points and symlinks (rootfs.c). */
int rf_container_rootfs_make(const rf_plan *plan, const char *rootfs, rf_error **err);
/* Remove dir and everything in it (never following a symlink, never
 * crossing into another file system; the network namespace's bind mount
 * is taken down first). */
void rf_container_dir_remove(const char *dir);
/* Create DIR (a run's directory, below PARENT, which is made if missing)
 * and return a descriptor holding its lock (see rootfs.c), after removing
 * the directories below PARENT that no run holds; -1 with ERR set. */
int rf_container_dir_make(const char *parent, const char *dir, rf_error **err);

/* `ringfence doctor`'s row (choose.c); returns -1 when out of memory. */
int rf_container_doctor(bool *usable, char ***gives, char ***lacks);

/* run.c */
rf_proc *rf_container_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err);
