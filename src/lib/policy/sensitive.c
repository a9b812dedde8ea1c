/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Workspaces that would hand the sandbox what it exists to keep out.
 *
 * `cd ~ && ringfence run -- sh` is the most natural thing a new user types,
 * and it would make the whole home read-write inside: tokens in ~/.npmrc,
 * ~/.aws, shell history, every other project. Seed 002 refuses a home
 * directory as its target; so does ringfence, and also `/`, `/etc`, `/usr`,
 * `/root` and every parent of the caller's home (`/home`, `/`), which hold
 * the home. allow_sensitive_workspace (--allow-sensitive-workspace) is the
 * explicit way through, named as the weakening it is. */
#include "policy/checks.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/path.h"

#include <stdlib.h>
#include <string.h>

static const char *const system_dirs[] = { "/", "/etc", "/usr", "/root", "/boot", "/var", "/bin", "/sbin", "/lib" };

/* Why ws is sensitive for a caller whose home is home, or NULL. */
const char *rf_policy_workspace_sensitive(const char *ws, const char *home)
{
    if (home && home[0] == '/') {
        _cleanup_free_ char *real = realpath(home, NULL);
        const char *h = real ? real : home;
        if (!strcmp(ws, h))
            return "your home directory: every file in it (keys, tokens, history, other projects) would "
                   "be in reach";
        if (rf_path_is_beneath(h, ws))
            return "a parent of your home directory: your whole home would be in reach";
    }
    for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
        if (!strcmp(ws, system_dirs[i]))
            return "a system directory: the host's own files would be the sandbox's workspace";
    return NULL;
}

int rf_policy_check_workspace(const char *ws, const char *home, bool allowed, const char *what, rf_error **err)
{
    const char *why = rf_policy_workspace_sensitive(ws, home);
    if (!why || allowed)
        return 0;
    rf_error_set(err, 0, "%s: %s is %s", what, ws, why);
    return rf_error_hint_set(err, "run it from a project directory or pass --workspace DIR; "
                                  "--allow-sensitive-workspace (allow_sensitive_workspace: true) accepts it anyway");
}
