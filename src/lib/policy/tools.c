/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which agent tools a policy enables: the one place that decides it, and
 * the one refusal. picoclaw's per-agent "tools": {"disabled": [...]} (seed
 * 001) removes a tool from an agent; every entry point asks here before it
 * acts: `ringfence exec` and rf_plan_build_shell (exec), `ringfence fs` and
 * the rf_fs_* verbs of a handle from rf_fs_open_for_policy (read_file,
 * write_file, append_file, edit_file, list_dir), and the MCP server, which
 * also leaves a disabled tool out of tools/list. */
#include "policy/checks.h"
#include "util/error.h"

#include <errno.h>
#include <string.h>

bool rf_tools_disabled(char *const *disabled, const char *tool)
{
    for (size_t i = 0; disabled && disabled[i]; i++)
        if (!strcmp(disabled[i], tool))
            return true;
    return false;
}

/* picoclaw never registers a disabled tool, so its agents read `tool "X"
 * not found`; ringfence says why, with the setting and the way out. */
int rf_tools_refuse(const char *tool, int exit_code, rf_error **err)
{
    bool fresh = err && !*err;
    rf_error_set_code(err, exit_code, 0, "tool \"%s\" not found: it is disabled for this agent (tools.disabled)",
                      tool);
    if (fresh && *err)
        (*err)->errnum = EACCES; /* a refusal, like the fs tools' "access denied" */
    return rf_error_hint_set(err, "remove \"%s\" from tools.disabled in the configuration, or use an agent "
                                  "that has it",
                             tool);
}

RF_EXPORT bool rf_policy_tool_enabled(const rf_policy *policy, const char *tool)
{
    return policy && tool && !rf_tools_disabled(policy->tools.disabled, tool);
}

RF_EXPORT int rf_policy_check_tool(const rf_policy *policy, const char *tool, rf_error **err)
{
    if (!policy || !tool)
        return rf_error_set(err, EINVAL, "checking a tool");
    return rf_policy_tool_enabled(policy, tool) ? 0 : rf_tools_refuse(tool, RF_EXIT_CANNOT_EXEC, err);
}
