/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One sandbox's cgroups. Created below the cgroup the caller runs in, in
 * every hierarchy that carries a requested controller (cgroup v2, v1, or
 * the hybrid of both), written with the limits, entered by the sandbox,
 * killed and removed when it ends. Nothing is created anywhere else and no
 * process other than the sandbox's is ever moved. docs/limits.md has the
 * user-facing story. Not thread-safe per handle.
 *
 * How a backend uses it for one sandbox:
 *   once per process  rf_cgroup_sweep_stale(RF_CGROUP_STALE_AGE_S)
 *   spawn   rf_cgroup_create(), rf_cgroup_keeper_start(), then
 *           clone3(CLONE_INTO_CGROUP, cgroup = rf_cgroup_v2_dir_fd()) when
 *           that is >= 0, without CLONE_NEWCGROUP; rf_cgroup_attach(pid)
 *           for the v1 hierarchies while the child waits; then the child
 *           unshares CLONE_NEWCGROUP (so its cgroup is the namespace root
 *           in every hierarchy), closes every fd above 2 (the cgroup
 *           directories and the keeper's pipe among them) and calls
 *           rf_limits_apply_rlimits(&limits, &how) before exec.
 *   wait    the sandbox's init reaps (pids.current counts zombies).
 *   timeout SIGTERM, the grace period, then rf_cgroup_kill().
 *   end     rf_cgroup_read_stats() into the status, rf_cgroup_destroy().
 *   signals SIGINT/SIGTERM/SIGHUP to the caller: handled by its wait loop,
 *           which ends in rf_cgroup_destroy(); SIGKILL or a crash: the
 *           keeper; both killed: the sweep at the next start. */
#pragma once
#include "ringfence.h"
#include "model/policy.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rf_cgroup rf_cgroup;

/* Leftovers older than this (seconds) whose owner is gone are swept. */
#define RF_CGROUP_STALE_AGE_S 60

/* Create the cgroups for one sandbox, named `ringfence-<pid>-<n>[-hint]`
 * (hint: letters, digits, '_' and '.', cut at 32), and write the limits:
 *   v2: memory.max, memory.swap.max = 0, memory.oom.group = 1, pids.max,
 *       cpu.max;
 *   v1: memory.limit_in_bytes and memory.memsw.limit_in_bytes (when swap
 *       accounting exists), pids.max, cpu.cfs_period_us / cfs_quota_us.
 * Where the cgroup2 hierarchy is writable a v2 cgroup is made even when it
 * carries no controller (this host's hybrid): it gives cgroup.kill, a
 * populated flag and CLONE_INTO_CGROUP.
 * Each requested limit without a writable cgroup is reported as
 * RF_LIMIT_RLIMIT (cpu: only with a timeout, else RF_LIMIT_NONE) and a
 * warning naming the setting is appended to *warnings (may be NULL); with
 * limits->require_cgroup that is an error naming limits.require_cgroup.
 * On success *out is a handle (possibly holding no cgroup at all) and *how
 * says what enforces each limit. Unexpected write failures are errors; the
 * partial cgroups are then removed. */
int rf_cgroup_create(const rf_limits *limits, const char *name_hint, rf_cgroup **out,
                     rf_limits_report *how, char ***warnings, rf_error **err);

/* The v2 cgroup's directory fd, for clone3(CLONE_INTO_CGROUP), or -1.
 * Owned by cg (O_CLOEXEC). */
int rf_cgroup_v2_dir_fd(const rf_cgroup *cg);

/* Move pid into every cgroup of cg (each hierarchy's cgroup.procs; writing
 * the v2 one again after CLONE_INTO_CGROUP is a harmless no-op). Do it
 * before the child execs or forks: what it forked before stays outside. */
int rf_cgroup_attach(rf_cgroup *cg, pid_t pid, rf_error **err);

/* SIGKILL everything in cg: cgroup.kill on v2 where the kernel has it, else
 * SIGKILL every pid in cgroup.procs (and sub-cgroups) until empty; waits up
 * to ~5 s for the cgroups to be empty. Returns 0, or -errno (-EBUSY if
 * something did not die in time). Async-signal-safe. */
int rf_cgroup_kill(rf_cgroup *cg);

typedef struct rf_cgroup_stats {
    uint64_t peak_memory_bytes; /* 0 when unknown (no memory cgroup) */
    bool oom_killed;            /* the kernel OOM-killed something in cg */
    bool pids_limit_hit;        /* a fork failed at pids.max */
} rf_cgroup_stats;
/* Read after the sandbox ended, before destroy (named _read_: C will not
 * let a function share the struct's typedef name). v2: memory.peak,
 * memory.events oom_kill, pids.events max. v1: memory.max_usage_in_bytes,
 * memory.oom_control oom_kill (older kernels: memory.failcnt > 0),
 * pids.events max. Returns 0 (fields it cannot read stay 0/false). */
int rf_cgroup_read_stats(const rf_cgroup *cg, rf_cgroup_stats *out);

/* A short name of the cgroup (e.g. "ringfence-123-0"), for plans and logs. */
const char *rf_cgroup_name(const rf_cgroup *cg);
/* The directory of the cgroup enforcing ctrl ("memory", "pids", "cpu"), or
 * with "" the v2 cgroup; NULL if there is none. For tests and doctor. */
const char *rf_cgroup_dir(const rf_cgroup *cg, const char *ctrl);

/* Start a keeper: a small forked process (setsid, every fd but its own
 * closed, catchable signals ignored) that waits until the caller process
 * exits or execs, or rf_cgroup_destroy() releases it; then kills what is
 * left in cg and removes its directories. This is what makes "SIGKILL of
 * the supervisor leaves no cgroup behind" hold at once, not only at the
 * next rf_cgroup_sweep_stale(). Costs one fork of the caller. */
int rf_cgroup_keeper_start(rf_cgroup *cg, rf_error **err);

/* Kill what is left, remove every cgroup (sub-cgroups first), stop and reap
 * the keeper, free. Safe on a partial create and on NULL. */
void rf_cgroup_destroy(rf_cgroup *cg);

/* Remove empty `ringfence-<pid>-*` cgroups below our own cgroup whose owner
 * pid no longer exists and that are older than min_age_s seconds (the age
 * guards against an owner in another pid namespace that shares the
 * hierarchy). Populated leftovers are never touched. Returns how many were
 * removed. Call once at start. */
int rf_cgroup_sweep_stale(unsigned min_age_s);

/* Create and destroy at once: what would enforce each limit, with the same
 * warnings and errors as rf_cgroup_create(). For plans and doctor. */
int rf_limits_probe(const rf_limits *limits, rf_limits_report *how, char ***warnings,
                    rf_error **err);
