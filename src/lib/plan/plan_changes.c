/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* changes: overlay in the plan (docs/changes.md): the workspace's bind
 * becomes the read-only lower layer of an overlayfs whose upper layer is
 * the session's. Only backends that can mount one take it; the others are
 * refused with the alternative named, never run writing the real
 * workspace in silence. */
#include "changes/changes.h"
#include "plan/build.h"
#include "util/error.h"
#include "util/ident.h"
#include "util/path.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int refuse_backend(const rf_plan *plan, rf_error **err)
{
    rf_error_set(err, 0, "changes: overlay: the %s backend cannot mount the workspace as an overlay, so the "
                         "command would write the real workspace", rf_backend_name(plan->backend));
    return rf_error_hint_set(err, "use --backend native (or bwrap, or container with podman), or --changes "
                                  "direct to let it write the workspace itself");
}

int rf_plan_add_session(rf_plan *plan, const rf_policy *policy, rf_error **err)
{
    if (policy->changes != RF_CHANGES_OVERLAY)
        return 0;
    if (plan->backend != RF_BACKEND_NATIVE && plan->backend != RF_BACKEND_BWRAP &&
        plan->backend != RF_BACKEND_CONTAINER)
        return refuse_backend(plan, err);
    char id[RF_SESSION_ID_MAX];
    if (policy->session) {
        if (!rf_session_id_valid(policy->session)) {
            rf_error_set(err, 0, "--session %s: not a session id (letters, digits, '-' and '_')", policy->session);
            return rf_error_hint_set(err, "'ringfence changes list' shows the sessions");
        }
        snprintf(id, sizeof id, "%s", policy->session);
    } else if (rf_session_new_id(id, err) < 0) {
        return -1;
    }
    rf_mount *ws = NULL;
    for (size_t i = 0; i < plan->n_mounts && !ws; i++)
        if (plan->mounts[i].type == RF_MOUNT_BIND && plan->mounts[i].why && !strcmp(plan->mounts[i].why, "workspace"))
            ws = &plan->mounts[i];
    if (!ws)
        return rf_error_set(err, EINVAL, "changes: overlay: the plan has no workspace mount");
    /* overlayfs refuses a layer inside another (and the command would see
     * its own upper layer through the lower one). */
    if (rf_path_is_beneath(policy->instance_root, policy->workspace)) {
        rf_error_set(err, 0, "changes: overlay: the instance root %s, where sessions live, is inside the workspace "
                             "%s", policy->instance_root, policy->workspace);
        return rf_error_hint_set(err, "set RINGFENCE_HOME (or instance_root) to a directory outside the workspace");
    }
    /* A root caller's overlay is not id-mapped: through it the command can
     * write only what root owns, so in a workspace another uid owns it
     * could write nothing, and would only find out inside. The default
     * mode maps that owner (plan.c, set_workspace_owner). */
    if (plan->caller_is_root && plan->ws_uid != 0) {
        struct passwd *pw = getpwuid(plan->ws_uid);
        rf_error_set(err, 0, "changes: overlay: the workspace %s belongs to uid %u%s%s%s, and a root caller's "
                             "overlay session can write only what root owns there", policy->workspace,
                     (unsigned)plan->ws_uid, pw ? " (" : "", pw ? pw->pw_name : "", pw ? ")" : "");
        return rf_error_hint_set(err, "run ringfence as that user (runuser -u %s -- ringfence run --changes "
                                      "overlay ...), or without --changes overlay: the default mode writes "
                                      "the workspace as its owner", pw ? pw->pw_name : "USER");
    }
    /* trusted.* xattrs need CAP_SYS_ADMIN in the initial user namespace:
     * root of a namespace of its own (a rootless container) mounts like an
     * unprivileged caller. */
    plan->overlay_userxattr = !plan->caller_is_root || !rf_ident_initial_userns();
    plan->session = strdup(id);
    plan->session_dir = rf_session_dir_path(policy->instance_root, id);
    plan->session_workspace = strdup(policy->workspace);
    plan->session_instance = policy->instance ? strdup(policy->instance) : NULL;
    ws->overlay = plan->session_dir ? strdup(plan->session_dir) : NULL;
    if (!plan->session || !plan->session_dir || !plan->session_workspace || !ws->overlay ||
        (policy->instance && !plan->session_instance))
        return rf_error_set(err, ENOMEM, "plan");
    /* --session names one that must exist; a new id is made at start. */
    if (policy->session) {
        rf_session *s = rf_session_open(policy->instance_root, id, err);
        if (!s)
            return -1;
        int rc = 0;
        if (strcmp(rf_session_workspace(s), policy->workspace)) {
            rf_error_set(err, 0, "session %s belongs to the workspace %s, not %s", id, rf_session_workspace(s),
                         policy->workspace);
            rc = rf_error_hint_set(err, "run it with --workspace %s", rf_session_workspace(s));
        }
        rf_session_free(s);
        return rc;
    }
    return 0;
}
