/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caller's half of the bwrap backend: the argv, the compiled filter,
 * then the landlock backend's init with the monitor as its command, so the
 * cgroups, rlimits, timeout, tree kill and status report are the ones the
 * other backends use. */
#include "backend/bwrap/bwrap.h"
#include "backend/bwrap/runner.h"
#include "seccomp/seccomp.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdlib.h>

rf_proc *rf_bwrap_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    char *empty_env[] = { NULL };
    rf_bwrap_runner r = { .envp = empty_env, .scope_ipc = rf_bwrap_scopes_ipc(plan) };
    if (rf_bwrap_argv(plan, &r.argv, err) < 0)
        return NULL;
    void *bpf = NULL;
    size_t len = 0;
    rf_seccomp_request req = { .profile = plan->seccomp, .deny = plan->seccomp_deny, .allow = plan->seccomp_allow };
    /* No cache, as in the landlock backend: the filter is compiled by the
     * caller from the plan alone. */
    if (rf_bwrap_wants_seccomp(plan) && rf_seccomp_compile(&req, &bpf, &len, err) < 0) {
        rf_strv_free(r.argv);
        return NULL;
    }
    rf_proc *proc = NULL;
    if (rf_bwrap_wants_seccomp(plan) && !len)
        rf_error_set(err, 0, "backend bwrap: the plan has a seccomp filter but none was compiled");
    else
        proc = rf_hostproc_spawn_runner(plan, stdio, rf_bwrap_monitor, &r, bpf, len, err);
    free(bpf);
    rf_strv_free(r.argv);
    return proc;
}
