/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resource limits that do not need a cgroup: the rlimit fallback and the
 * always-on defaults, applied in the child between fork and exec. The cgroup
 * side is in cgroup.h; rf_cgroup_create() says per limit which one applies. */
#pragma once
#include "ringfence.h"
#include "model/policy.h"

#include <sys/resource.h>

/* The open-files soft limit the sandbox gets: the hard limit, but at most
 * this (programs that close every fd up to the limit stay fast). */
#define RF_LIMITS_NOFILE_MAX 65536

/* A process of ours that holds many descriptors (the proxy, `serve`):
 * raise its own soft open-files limit to `want`, or to the hard limit if
 * that is lower. Never lowers it. 0 or -errno. */
int rf_limits_raise_nofile(rlim_t want);

/* Apply in the child before exec; async-signal-safe (no allocation, no
 * locks), so it may run after fork() in a multithreaded caller.
 *
 * Always: RLIMIT_CORE 0 (soft and hard: no core files in the workspace) and
 * the RLIMIT_NOFILE soft limit set to min(hard, RF_LIMITS_NOFILE_MAX).
 * RLIMIT_FSIZE is left as inherited: a per-file cap stops no disk filling
 * and breaks archives, linkers and downloads.
 *
 * For each limit that `how` reports as RF_LIMIT_RLIMIT (how == NULL: every
 * limit that is set):
 *  - memory → RLIMIT_DATA (private writable mappings, i.e. heap and
 *    anonymous memory; unlike RLIMIT_AS it ignores PROT_NONE reservations,
 *    which V8, Go and the JVM make in gigabytes at start-up);
 *  - pids → RLIMIT_NPROC: counts every process of the real uid in its user
 *    namespace, and is not enforced for host root (CAP_SYS_RESOURCE /
 *    CAP_SYS_ADMIN in the initial namespace). The native sandbox maps root
 *    to an unprivileged host uid, so there it binds;
 *  - cpu → RLIMIT_CPU of ceil(cpu × timeout) seconds (at least 1) per
 *    process, SIGXCPU at the soft limit, SIGKILL one second later; only
 *    when both cpu and timeout are set.
 * Hard limits are only ever lowered, never raised, so this cannot fail for
 * lack of privilege. Returns 0 or -errno of the failing setrlimit(). */
int rf_limits_apply_rlimits(const rf_limits *limits, const rf_limits_report *how);

/* The RLIMIT_CPU seconds apply_rlimits would set, 0 if none. */
uint64_t rf_limits_cpu_seconds(const rf_limits *limits);
