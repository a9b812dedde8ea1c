/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_spawn: hand the plan to the backend it names. rf_plan_build() has
 * already resolved auto. */
#include "backend/container/container.h"
#include "backend/backend.h"
#include "backend/native/sandbox.h"
#include "backend/bwrap/bwrap.h"
#include "backend/firejail/firejail.h"
#include "proc/proc.h"
#include "tty/tty.h"
#include "util/error.h"

#include <errno.h>

static rf_proc *spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err);

RF_EXPORT rf_proc *rf_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    /* Only the native backend has a devpts of its own to make the pty in;
     * the others would pass -2 on as "inherit", a weaker thing in silence. */
    if (rf_tty_streams(stdio) && plan->backend != RF_BACKEND_NATIVE) {
        rf_error_set(err, 0, "--pty: backend %s cannot give the command a terminal of its own",
                     rf_backend_name(plan->backend));
        rf_error_hint_set(err, "use --backend native, or --no-pty to pass your stdin, stdout and stderr as they "
                               "are (see docs/terminal.md)");
        return NULL;
    }
    rf_proc *proc = spawn(plan, stdio, err);
    if (proc && plan->session && !(proc->session = strdup(plan->session))) {
        rf_proc_free(proc);
        rf_error_set(err, ENOMEM, "spawn");
        return NULL;
    }
    return proc;
}

static rf_proc *spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
{
    switch (plan->backend) {
    case RF_BACKEND_NATIVE:
        return rf_native_spawn(plan, stdio, err);
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
