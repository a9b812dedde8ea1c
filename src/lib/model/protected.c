/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The default protected paths: one list for every platform (the Windows
 * backend labels them read-only as the Linux backends mount them so). */
#include "model/protected.h"

#include <stddef.h>

/* Read-only inside when they exist in the workspace: its own policy, git
 * hooks, and, for a workspace that is (or holds) a home directory, the
 * places that run code or grant access outside any sandbox later: shell
 * startup files, ssh, autostart and systemd user units, ringfence's own
 * user config (a trusted layer for the next run). */
static const char *const default_protected[] = {
    ".git/hooks", ".ringfence.json", ".ringfence.yaml", ".ringfence.yml", ".mittorc",
    ".config/ringfence", ".ssh", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
    ".profile", ".zshrc", ".zshenv", ".zprofile", ".config/autostart", ".config/systemd", NULL,
};

const char *const *rf_policy_default_protected(void)
{
    return default_protected;
}
