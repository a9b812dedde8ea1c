/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The guard built from a resolved policy (run, the exec tool). Apart from
 * guard.c because the policy stage is not part of every platform's build
 * (the Windows build has the guard but not the Linux policy). */
#include "guard/guard.h"
#include "model/policy.h"
#include "util/error.h"
#include "util/path.h"

#include <errno.h>

static rf_guard *guard_for(const rf_policy *policy, const char *cwd, bool jit, rf_error **err);

/* Where a command starts: the policy's chdir when set and inside the
 * workspace; else, with `caller_first`, the caller's directory when
 * inside; else the workspace. */
static rf_guard *guard_at(const rf_policy *policy, bool caller_first, bool jit, rf_error **err)
{
    if (!policy) {
        rf_error_set(err, EINVAL, "creating the guard");
        return NULL;
    }
    const char *ws = policy->workspace, *cwd = ws;
    if (ws && policy->chdir && rf_path_is_beneath(policy->chdir, ws))
        cwd = policy->chdir;
    else if (ws && caller_first && !policy->chdir && policy->caller_cwd &&
             rf_path_is_beneath(policy->caller_cwd, ws))
        cwd = policy->caller_cwd;
    return guard_for(policy, cwd, jit, err);
}

/* For `ringfence run`: the sandbox's own choice of working directory. */
RF_EXPORT rf_guard *rf_guard_new_for_policy(const rf_policy *policy, rf_error **err)
{
    return guard_at(policy, true, true, err);
}

/* For the exec tool, which runs in the policy's chdir, else the workspace
 * (rf_plan_build_shell): its paths are checked from there. */
RF_EXPORT rf_guard *rf_guard_new_for_shell(const rf_policy *policy, rf_error **err)
{
    return guard_at(policy, false, true, err);
}

rf_guard *rf_guard_new_for_one_command(const rf_policy *policy, rf_error **err)
{
    return guard_at(policy, false, false, err);
}

static rf_guard *guard_for(const rf_policy *policy, const char *cwd, bool jit, rf_error **err)
{
    rf_guard_options o = {
        .enable_deny_patterns = policy->tools.exec.enable_deny_patterns,
        .custom_deny = (const char *const *)policy->tools.exec.custom_deny_patterns,
        .custom_allow = (const char *const *)policy->tools.exec.custom_allow_patterns,
        .restrict_to_workspace = policy->restrict_to_workspace,
        .workspace = policy->workspace,
        .cwd = cwd,
    };
    return rf_guard_new_jit(&o, jit, err);
}
