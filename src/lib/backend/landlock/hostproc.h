/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The landlock and none backends: no namespaces. Process model:
 *
 *   caller
 *     └─ init: new session, child subreaper, dies with the caller and takes
 *        the tree with it; reaps, forwards signals, reports the command's
 *        status over the native backend's report channel (init.c, report.h)
 *          └─ command: own process group; landlock backend: unprivileged id
 *             for a root caller, no_new_privs, Landlock, seccomp; then exec
 *
 * The command is confined after fork, so init stays outside its Landlock
 * domain: with IPC scoping (ABI 6+) the command cannot signal init or the
 * caller, and Landlock's ptrace rule keeps both out of its reach.
 * Internal to libringfence. */
#pragma once
#include "backend/backend.h"
#include "backend/native/sandbox.h"

#include <stdbool.h>
#include <sys/types.h>

/* Signal that tells init its caller is gone (PR_SET_PDEATHSIG). Not one
 * init forwards; init checks getppid() before believing it. */
#define RF_HOSTPROC_DEATH_SIGNAL SIGPWR

/* Everything the children need, prepared by the caller: they never
 * allocate (the caller may be multi-threaded). */
typedef struct rf_hostproc_ctx {
    const rf_plan *plan;
    int sock;                /* the children's end of the report channel */
    pid_t caller;
    int stdio[3];            /* -1: inherit */
    bool confine;            /* landlock backend: Landlock, seccomp, ids */
    const struct rf_landlock_rule *rules;
    size_t n_rules;
    char **tty_paths;        /* the terminals stdio is on: granted rw */
    const void *seccomp_bpf;
    size_t seccomp_len;
    rf_limits_report how;    /* what enforces each limit (rlimit fallbacks) */
    bool wait_go;            /* wait for the caller's "go": cgroups attached */
    int fault_fd;            /* test builds: see util/fault.h; else -1 */
    /* Another runner (backend/bwrap): called in the command's process in
     * place of chdir and execve, with rlimits, ids and the parent-death
     * signal applied; seccomp_bpf is its to hand on, not applied here. */
    void (*exec)(const struct rf_hostproc_ctx *c);
    const void *runner;      /* the runner's data */
    int net_fd;              /* a runner's end of the channel that hands the
                                proxy's listener over (network: allowlist),
                                else -1; kept open like sock */
} rf_hostproc_ctx;

/* spawn.c: start init with a runner in place of the command's execve
 * (confine off; bpf, len: a filter copied into seccomp_bpf for it;
 * net_fd: see rf_hostproc_ctx, -1 for none, closed here in the caller). */
rf_proc *rf_hostproc_spawn_runner(const rf_plan *plan, const rf_stdio *stdio,
                                  void (*exec)(const rf_hostproc_ctx *c), const void *runner,
                                  const void *bpf, size_t len, int net_fd, rf_error **err);

/* child.c: init's half; never returns. */
_Noreturn void rf_hostproc_init(rf_hostproc_ctx *c);
