/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The workspace paths kept read-only inside by default (protected.c): the
 * policy stage's list, apart from it so the Windows build has it too. */
#pragma once

/* NULL-terminated, relative to the workspace, '/'-separated. */
const char *const *rf_policy_default_protected(void);
