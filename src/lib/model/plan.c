/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plan's accessors every floor needs (model/plan.h): which mount
 * covers a path, whether the host's path shows through, the backend's
 * name. Moved here from plan/ so a backend never calls the planner. */
#include "model/plan.h"
#include "util/path.h"

#include <string.h>

const char *rf_backend_name(rf_backend_kind b)
{
    static const char *const names[] = { "native", "landlock", "auto", "bwrap", "firejail", "container", "none" };
    return (unsigned)b < sizeof names / sizeof names[0] ? names[b] : "?";
}

const rf_mount *rf_plan_mount_covering(const rf_plan *plan, const char *path)
{
    const rf_mount *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < plan->n_mounts; i++) {
        const rf_mount *m = &plan->mounts[i];
        if (m->type == RF_MOUNT_SYMLINK || m->type == RF_MOUNT_RO_SELF || m->type == RF_MOUNT_COPY)
            continue;
        size_t len = strlen(m->target);
        /* >= : a later mount on the same target hides the earlier one. */
        if (rf_path_is_beneath(path, m->target) && len >= best_len) {
            best = m;
            best_len = len;
        }
    }
    return best;
}

bool rf_plan_path_visible(const rf_plan *plan, const char *path, bool *writable)
{
    const rf_mount *m = rf_plan_mount_covering(plan, path);
    if (writable)
        *writable = m && m->writable;
    /* Only a bind shows the host's file: a path under one of the sandbox's
     * own tmpfs mounts (/tmp, /dev) is a different, empty place. */
    return m && m->type == RF_MOUNT_BIND;
}
