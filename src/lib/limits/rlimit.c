/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "limits/limits.h"

#include <errno.h>
#include <sys/resource.h>

uint64_t rf_limits_cpu_seconds(const rf_limits *l)
{
    if (!(l->cpu > 0) || !(l->timeout_s > 0))
        return 0;
    double s = l->cpu * l->timeout_s;
    uint64_t whole = s >= 1e12 ? (uint64_t)1e12 : (uint64_t)s;
    return whole < s ? whole + 1 : whole < 1 ? 1 : whole;
}

int rf_limits_raise_nofile(rlim_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
        want = rl.rlim_max;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
        return 0;
    rl.rlim_cur = want;
    return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

/* Lower a limit to at most soft/hard; never raises the hard limit, so it
 * needs no privilege. A limit already stricter than asked stays. */
static int lower(int resource, rlim_t soft, rlim_t hard)
{
    struct rlimit cur;
    if (getrlimit(resource, &cur) < 0)
        return -errno;
    struct rlimit want = { soft, hard };
    if (cur.rlim_max != RLIM_INFINITY && (want.rlim_max == RLIM_INFINITY || want.rlim_max > cur.rlim_max))
        want.rlim_max = cur.rlim_max;
    if (want.rlim_cur > want.rlim_max)
        want.rlim_cur = want.rlim_max;
    if (cur.rlim_cur != RLIM_INFINITY && want.rlim_cur > cur.rlim_cur)
        want.rlim_cur = cur.rlim_cur;
    return setrlimit(resource, &want) < 0 ? -errno : 0;
}

static int defaults(void)
{
    int r = lower(RLIMIT_CORE, 0, 0);
    if (r < 0)
        return r;
    /* Raise the soft open-files limit to the hard one, capped: programs
     * that run out at 1024 are common, programs that loop closing every
     * possible fd up to a limit of 2^20 are slow. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
        return -errno;
    rlim_t target = nofile.rlim_max;
    if (target == RLIM_INFINITY || target > RF_LIMITS_NOFILE_MAX)
        target = RF_LIMITS_NOFILE_MAX;
    nofile.rlim_cur = target;
    return setrlimit(RLIMIT_NOFILE, &nofile) < 0 ? -errno : 0;
}

int rf_limits_apply_rlimits(const rf_limits *limits, const rf_limits_report *how)
{
    int r = defaults();
    if (r < 0)
        return r;
    bool mem = how ? how->memory == RF_LIMIT_RLIMIT : true;
    bool pids = how ? how->pids == RF_LIMIT_RLIMIT : true;
    bool cpu = how ? how->cpu == RF_LIMIT_RLIMIT : true;
    if (mem && limits->memory_bytes > 0 &&
        (r = lower(RLIMIT_DATA, limits->memory_bytes, limits->memory_bytes)) < 0)
        return r;
    if (pids && limits->pids > 0 && (r = lower(RLIMIT_NPROC, limits->pids, limits->pids)) < 0)
        return r;
    uint64_t secs = rf_limits_cpu_seconds(limits);
    /* SIGXCPU at the soft limit lets a program notice; SIGKILL follows. */
    if (cpu && secs > 0 && (r = lower(RLIMIT_CPU, secs, secs + 1)) < 0)
        return r;
    return 0;
}
