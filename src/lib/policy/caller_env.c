/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the policy takes from the caller's environment, once, at resolve
 * time: its PATH (to find an executable that lives outside the sandbox's
 * PATH) and its locale and terminal type (seed 002: LANG, LC_ALL, TERM). */
#include "model/policy.h"
#include "util/strv.h"

#include <stdlib.h>
#include <string.h>

static const char *const inherited[] = { "LANG", "LC_ALL", "TERM" };

int rf_policy_take_caller_env(rf_policy *p, char *const *envp);
int rf_policy_take_caller_env(rf_policy *p, char *const *envp)
{
    const char *path = rf_strv_env_get(envp, "PATH");
    if (path && !(p->caller_path = strdup(path + 5)))
        return -1;
    for (size_t i = 0; i < sizeof inherited / sizeof inherited[0]; i++) {
        const char *kv = rf_strv_env_get(envp, inherited[i]);
        if (kv && !rf_strv_env_get(p->env_keep, inherited[i]) && rf_strv_push(&p->env_keep, kv) < 0)
            return -1;
    }
    return 0;
}
