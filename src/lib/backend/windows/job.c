/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Job Object every command runs in. Kill-on-close: the only handle is
 * ringfence's, so when ringfence ends, however it ends, Windows kills the
 * whole tree; no breakaway is allowed, so a child cannot leave the job.
 * The plan's limits map onto the job's: pids -> active processes, memory ->
 * job memory (all processes together, as a cgroup's memory.max), cpu ->
 * a hard CPU rate cap; and the UI restrictions below. A limit the host
 * refuses fails the start. */
#include "backend/windows/winapi.h"
#include "util/error.h"

static int set_limits(HANDLE job, const rf_win_plan *plan, rf_error **err)
{
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION x = { 0 };
    x.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
                                         JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
    if (plan->pids) {
        x.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
        x.BasicLimitInformation.ActiveProcessLimit = plan->pids > 0xffffffffu ? 0xffffffffu : (DWORD)plan->pids;
    }
    if (plan->memory) {
        x.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
        x.JobMemoryLimit = (SIZE_T)plan->memory;
    }
    if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &x, sizeof x))
        return rf_win_error(err, GetLastError(), "job object: setting the limits (kill on close%s%s)",
                            plan->pids ? ", pids" : "", plan->memory ? ", memory" : "");
    return 0;
}

/* CpuRate is in hundredths of a percent of the whole machine: cpu 0.5 on
 * a 4-CPU host is 12.5 % = 1250. */
static int set_cpu(HANDLE job, double cpu, rf_error **err)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    double rate = cpu / (double)(si.dwNumberOfProcessors ? si.dwNumberOfProcessors : 1) * 10000.0;
    if (rate >= 10000.0)
        return 0; /* as many CPUs as the host has: nothing to cap */
    JOBOBJECT_CPU_RATE_CONTROL_INFORMATION c = { 0 };
    c.ControlFlags = JOB_OBJECT_CPU_RATE_CONTROL_ENABLE | JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP;
    c.CpuRate = rate < 1.0 ? 1 : (DWORD)rate;
    if (!SetInformationJobObject(job, JobObjectCpuRateControlInformation, &c, sizeof c))
        return rf_win_error(err, GetLastError(), "job object: setting the cpu rate cap (cpu %g)", cpu);
    return 0;
}

/* What a low-integrity process on the user's desktop could still reach:
 * the clipboard (the user's copied secrets), global atoms, system-wide
 * settings, the display, logging off, other desktops, and USER handles
 * of processes outside the job. */
static int set_ui(HANDLE job, rf_error **err)
{
    JOBOBJECT_BASIC_UI_RESTRICTIONS ui = {
        .UIRestrictionsClass = JOB_OBJECT_UILIMIT_READCLIPBOARD | JOB_OBJECT_UILIMIT_WRITECLIPBOARD |
                               JOB_OBJECT_UILIMIT_GLOBALATOMS | JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS |
                               JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | JOB_OBJECT_UILIMIT_EXITWINDOWS |
                               JOB_OBJECT_UILIMIT_DESKTOP | JOB_OBJECT_UILIMIT_HANDLES,
    };
    if (!SetInformationJobObject(job, JobObjectBasicUIRestrictions, &ui, sizeof ui))
        return rf_win_error(err, GetLastError(), "job object: setting the UI restrictions");
    return 0;
}

HANDLE rf_win_job_make(const rf_win_plan *plan, rf_error **err)
{
    HANDLE job = CreateJobObjectW(NULL, NULL);
    if (!job) {
        rf_win_error(err, GetLastError(), "job object: CreateJobObject");
        return NULL;
    }
    if (set_limits(job, plan, err) < 0 || set_ui(job, err) < 0 ||
        (plan->cpu > 0 && set_cpu(job, plan->cpu, err) < 0)) {
        CloseHandle(job);
        return NULL;
    }
    return job;
}
