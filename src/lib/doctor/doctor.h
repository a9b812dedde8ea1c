/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ringfence doctor: what this host supports, probed by trying it (a child
 * that builds the namespaces the native backend needs, a child under the
 * default seccomp filter), plus the settings that explain a failure. The
 * public side is the opaque rf_doctor_report of ringfence.h. */
#pragma once
#include "ringfence.h"

#include <stdbool.h>
#include <sys/types.h>

/* How far the user-namespace probe got. */
typedef enum {
    RF_DOCTOR_USERNS_UNSHARE,    /* unshare(CLONE_NEWUSER) */
    RF_DOCTOR_USERNS_MAP,        /* write uid_map / gid_map */
    RF_DOCTOR_USERNS_NAMESPACES, /* mount, pid, net, ipc, uts, cgroup namespaces */
    RF_DOCTOR_USERNS_MOUNT,      /* mount a tmpfs inside */
    RF_DOCTOR_USERNS_PROC,       /* mount a fresh /proc inside */
    RF_DOCTOR_USERNS_OK,
} rf_doctor_userns_step;

typedef struct rf_doctor_backend {
    const char *name;
    bool usable;
    char **gives;   /* protections it applies here (strv) */
    char **lacks;   /* what it cannot do here (strv) */
    bool present;        /* its tool is installed (always, for the built-in ones) */
    const char *version; /* the tool's version line, borrowed from runners, or NULL */
} rf_doctor_backend;

#define RF_DOCTOR_N_BACKENDS 6

struct rf_doctor_report {
    char kernel_release[65], kernel_version[65], machine[65];
    uid_t uid;

    struct {
        rf_doctor_userns_step reached; /* RF_DOCTOR_USERNS_OK when all worked */
        int errnum;                    /* of the failed step */
        long unprivileged_userns_clone;/* sysctls, -1 when absent */
        long max_user_namespaces;
        long apparmor_restrict;
        char **reasons;                /* likely causes of a failure (strv) */
    } userns;

    int landlock_abi; /* rf_landlock_abi() */

    struct {
        bool works;       /* a child under the default filter got ENOSYS from clone3 */
        int errnum;       /* why not */
        int mode_now;     /* Seccomp: of this process (0 none, 1 strict, 2 filter) */
        int filters_now;  /* Seccomp_filters: of this process, -1 unknown */
        char libseccomp[32];
    } seccomp;

    struct {
        const char *version; /* "v2", "hybrid", "v1", "none" */
        char *v2_mount;      /* where cgroup2 is mounted, or NULL */
        char *own;           /* this process's v2 cgroup path, or NULL */
        bool delegated;      /* a child cgroup could be created below own */
        int errnum;          /* why not */
        char *controllers;   /* own cgroup.controllers, or NULL */
        /* What `run` will do for memory, pids and cpu limits here: the
         * result of rf_limits_probe(), the code run uses (creates and
         * removes a probe cgroup), so doctor and run cannot disagree on a
         * v1/v2 hybrid. probed false: not asked (unit tests fill the
         * fields above only). fallback: the warnings it gave (strv). */
        bool probed;
        rf_limits_report how;
        char **fallback;
        char *systemd_scope; /* the delegated scope the probe got, or NULL */
        char *cgroup_manager; /* without systemd: the cgroup ringfence divides, or NULL */
    } cgroup;

    struct {
        char *bwrap, *firejail, *podman, *docker; /* full paths or NULL */
    } tools;

    /* doctor-runners.c: the runner tools' `--version` first lines (NULL:
     * absent), and whether bwrap can run here (the plan's own check). */
    struct {
        char *bwrap, *firejail, *podman, *docker;
        bool bwrap_usable, firejail_usable;
        char bwrap_why[400], firejail_why[400];
    } runners;

    /* native, landlock, none, bwrap, firejail, container */
    rf_doctor_backend backends[RF_DOCTOR_N_BACKENDS];

    /* The probe `--backend auto` runs (backend/probe.c): the native verdict
     * is its result, so doctor and auto always agree. */
    bool native_probe_ok;
    char native_probe[256];
    /* doctor-start.c: `run -- true` with the native backend and the default
     * policy, done for real: the verdict on native is this one. */
    struct {
        bool tried;         /* a policy could be made and the start was tried */
        bool ok;            /* it ran and exited 0 */
        char workspace[4096];
        char error[1024];   /* what run would have said, or "" */
        char hint[1024];
    } start;
    const char *auto_backend; /* what --backend auto picks here, NULL: nothing works */
};

const char *rf_doctor_userns_step_name(rf_doctor_userns_step step);

/* The probes (doctor-host.c, doctor-userns.c). Each fills its part. */
void rf_doctor_probe_kernel(rf_doctor_report *r);
void rf_doctor_probe_userns(rf_doctor_report *r);
void rf_doctor_probe_start(rf_doctor_report *r);
void rf_doctor_probe_seccomp(rf_doctor_report *r);
void rf_doctor_probe_cgroup(rf_doctor_report *r);
void rf_doctor_probe_tools(rf_doctor_report *r);
/* doctor-runners.c */
void rf_doctor_probe_runners(rf_doctor_report *r);
void rf_doctor_free_runners(rf_doctor_report *r);
int rf_doctor_judge_bwrap(rf_doctor_backend *b, const rf_doctor_report *r);
int rf_doctor_judge_firejail(rf_doctor_backend *b, const rf_doctor_report *r);
/* Backends from the probes above (doctor.c). Returns -1 on ENOMEM. */
int rf_doctor_judge_backends(rf_doctor_report *r);
