/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Between bwrap/spawn.c and the monitor (bwrap/child.c). Internal. */
#pragma once
#include "backend/landlock/hostproc.h"

#include <stdbool.h>

typedef struct rf_bwrap_runner {
    char **argv; /* rf_bwrap_argv() */
    char **envp; /* bwrap's own environment: empty (--setenv gives the command's) */
    bool scope_ipc; /* a Landlock domain with only IPC scopes around bwrap */
} rf_bwrap_runner;

_Noreturn void rf_bwrap_monitor(const rf_hostproc_ctx *c);
