/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_spawn: hand the plan to the backend it names. rf_plan_build() has
 * already resolved auto. */
#include "backend/container/container.h"
#include "backend/backend.h"
#include "backend/native/sandbox.h"
#include "backend/bwrap/bwrap.h"
#include "backend/firejail/firejail.h"
#include "util/error.h"

RF_EXPORT rf_proc *rf_spawn(const rf_plan *plan, const rf_stdio *stdio, rf_error **err)
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
