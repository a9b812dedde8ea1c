/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Checks the resolver makes and the tools that enforce a policy repeat
 * (policy/sensitive.c, policy/tools.c). */
#pragma once
#include "model/policy.h"

#include <stdbool.h>

/* sensitive.c: why a workspace would expose what the sandbox keeps out
 * (home, a parent of it, /, /etc, /usr, /root...), or NULL; and the check
 * that refuses it unless allowed, naming `what` (the setting). */
const char *rf_policy_workspace_sensitive(const char *ws, const char *home);
int rf_policy_check_workspace(const char *ws, const char *home, bool allowed, const char *what, rf_error **err);
/* tools.c: is `tool` in a tools.disabled list; the refusal for a disabled
 * tool (-1 with *err: the message, errno EACCES, the given exit code). */
bool rf_tools_disabled(char *const *disabled, const char *tool);
int rf_tools_refuse(const char *tool, int exit_code, rf_error **err);
