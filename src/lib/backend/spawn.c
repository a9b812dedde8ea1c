/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_spawn: hand the plan to the backend it names. rf_plan_build() has
 * already resolved auto. */
#include "backend/container/container.h"
#include "backend/backend.h"
#include "backend/native/sandbox.h"
#include "backend/bwrap/bwrap.h"
#include "backend/firejail/firejail.h"
#include "audit/run.h"
#include "audit/system.h"
#include "registry/registry.h"
#include "net/net.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "proc/proc.h"
#include "tty/tty.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What a backend cannot do for this plan, refused before anything starts. */
static int check_backend(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    /* Only the native backend has a devpts of its own to make the pty in;
     * the others would pass -2 on as "inherit", a weaker thing in silence. */
    if (rf_tty_streams(stdio) && plan->backend != RF_BACKEND_NATIVE) {
        rf_error_set(err, 0, "--pty: backend %s cannot give the command a terminal of its own",
                     rf_backend_name(plan->backend));
        return rf_error_hint_set(err, "use --backend native, or --no-pty to pass your stdin, stdout and stderr "
                                      "as they are (see docs/terminal.md)");
    }
    /* The observer needs the native setup child to install its filter and
     * hand the listener out; elsewhere it would silently see nothing. */
    if ((plan->observe && plan->backend != RF_BACKEND_NATIVE) || (plan->observe && plan->deferred)) {
        rf_error_set(err, 0, "learn and --explain-denials: backend %s cannot observe the command",
                     plan->deferred ? "native with a warm pool" : rf_backend_name(plan->backend));
        return rf_error_hint_set(err, "use --backend native (and no --via) while learning; the policy it "
                                      "writes works with every backend");
    }
    return 0;
}

static rf_proc *spawn(const rf_plan *plan, const rf_stdio *stdio, const rf_tty_sink *sink, rf_error **err)
{
    switch (plan->backend) {
    case RF_BACKEND_NATIVE:
        return rf_native_spawn(plan, stdio, sink, err);
    case RF_BACKEND_LANDLOCK:
    case RF_BACKEND_NONE:
        return rf_hostproc_spawn(plan, stdio, err);
    case RF_BACKEND_BWRAP:
        return rf_bwrap_spawn(plan, stdio, err);
    case RF_BACKEND_FIREJAIL:
        return rf_firejail_spawn(plan, stdio, err);
    case RF_BACKEND_CONTAINER:
        return rf_container_spawn(plan, stdio, err);
    default:
        rf_error_set(err, 0, "backend '%s' is not available", rf_backend_name(plan->backend));
        return NULL;
    }
}

static int add_weakenings(rf_proc *proc, const rf_plan *plan)
{
    /* The native backend's `cannot` holds caveats of every run (absent
     * protected paths); the other backends' list what they give up. */
    char *const *lists[] = { plan->weakenings, plan->backend == RF_BACKEND_NATIVE ? NULL : plan->cannot };
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && lists[l][i]; i++)
            if (rf_strv_push(&proc->weakenings, lists[l][i]) < 0)
                return -1;
    return 0;
}

/* `ringfence ps` lists it from now until rf_proc_free. Not fatal: the
 * sandbox is as confined without it; the caller is told. */
static void register_proc(rf_proc *proc, const rf_plan *plan)
{
    rf_error *err = NULL;
    rf_registry_entry e = { .id = proc->id, .pid = proc->pid, .argv = plan->argv, .workspace = plan->workspace,
                            .backend = rf_backend_name(plan->backend), .instance = plan->instance,
                            .tree_via_init = proc->tree_via_init };
    proc->registry_dir = rf_registry_dir(plan->instance_root);
    if (!proc->registry_dir || rf_registry_add(proc->registry_dir, &e, &err) < 0) {
        (void)rf_strv_pushf(&proc->warnings, "sandbox %s is not listed by 'ringfence ps': %s", proc->id,
                            err ? rf_error_message(err) : "out of memory");
        free(proc->registry_dir);
        proc->registry_dir = NULL;
    }
    rf_error_free(err);
}

rf_proc *rf_spawn_with_sink(const rf_plan *plan, const rf_stdio *stdio, const rf_tty_sink *sink, rf_error **err)
{
    if (check_backend(plan, stdio, err) < 0)
        return NULL;
    /* The system log's daemon first: a required one that is down refuses
     * the run before anything of it exists. Close-on-exec, and the
     * sandbox's first process closes what it inherits: nothing inside
     * holds it. */
    struct rf_audit_system *system;
    if (rf_audit_run_connect(plan, &system, err) < 0)
        return NULL;
    rf_proc *proc = spawn(plan, stdio, sink, err);
    if (!proc) {
        rf_audit_system_close(system);
        return NULL;
    }
    rf_audit_new_id(proc->id);
    /* The status record names the backend, what it did not enforce, and
     * (changes: overlay) the session. */
    proc->backend = rf_backend_name(plan->backend);
    if ((plan->session && !(proc->session = strdup(plan->session))) || add_weakenings(proc, plan) < 0) {
        rf_audit_system_close(system);
        rf_proc_free(proc);
        rf_error_set(err, ENOMEM, "spawn");
        return NULL;
    }
    /* An unrecorded run is what the trail exists to prevent: refused. */
    if (plan->audit && !(proc->audit = rf_audit_run_start(plan, proc->id, proc->pid, system, err))) {
        rf_proc_free(proc);
        return NULL;
    }
    register_proc(proc, plan);
    /* The proxy's connections wait for this: their records follow run.start. */
    _cleanup_free_ char *stats = proc->registry_dir ? rf_registry_stats_path(proc->registry_dir, proc->id) : NULL;
    rf_net_proxy_set_audit(proc->net_proxy, proc->audit, stats);
    return proc;
}

RF_EXPORT rf_proc *rf_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    return rf_spawn_with_sink(plan, stdio, NULL, err);
}
