/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caller's half of the bwrap backend: the argv, the compiled filter,
 * then the landlock backend's init with the monitor as its command, so the
 * cgroups, rlimits, timeout, tree kill and status report are the ones the
 * other backends use; with network: allowlist, the native backend's proxy
 * too. */
#include "backend/bwrap/bwrap.h"
#include "backend/bwrap/runner.h"
#include "backend/backend.h"
#include "seccomp/seccomp.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

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
    int nv[2] = { -1, -1 };
    if (rf_bwrap_wants_seccomp(plan) && !len)
        rf_error_set(err, 0, "backend bwrap: the plan has a seccomp filter but none was compiled");
    else if (plan->network == RF_NET_ALLOWLIST && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, nv) < 0)
        rf_error_set(err, errno, "backend bwrap: proxy channel");
    else
        proc = rf_hostproc_spawn_runner(plan, stdio, rf_bwrap_monitor, &r, bpf, len, nv[1], err);
    free(bpf);
    rf_strv_free(r.argv);
    /* The monitor makes the network namespace and the proxy's listener in
     * it (child.c); the proxy runs here. */
    if (proc && nv[0] >= 0 && rf_backend_start_proxy(plan, proc, nv[0], err) < 0) {
        rf_proc_free(proc); /* kills the tree */
        return NULL;
    }
    if (!proc && nv[0] >= 0)
        close(nv[0]);
    return proc;
}
