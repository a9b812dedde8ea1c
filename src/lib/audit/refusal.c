/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guard.refused: a command the exec guard blocked (`ringfence exec`, the
 * MCP exec tool) ran nowhere, so no sandbox records it: this does. */
#include "audit/run.h"
#include "util/cleanup.h"

void rf_audit_guard_refused(const rf_policy *policy, const char *command, const rf_guard_verdict *v)
{
    if (!policy || !policy->audit || !v || v->result == RF_GUARD_ALLOWED)
        return;
    _cleanup_free_ char *dir = rf_audit_dir(policy->instance_root);
    json_t *f = json_pack("{s:s, s:s*, s:s, s:s*, s:s*, s:s*}", "command", command, "instance", policy->instance,
                          "workspace", policy->workspace, "message", v->message, "pattern", v->pattern, "detail",
                          v->detail);
    /* Not fatal: the command is refused either way; the caller says so. */
    if (dir && f)
        (void)rf_audit_append(dir, "guard.refused", f, NULL, NULL);
    json_decref(f);
}
