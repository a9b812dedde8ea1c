/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Ending a process tree from a child subreaper (backend/reaper.c). Used by
 * the init of the landlock and none backends; async-signal-safe. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

/* Send sig to every descendant of the calling process: the process group
 * `command` (0: skip it; pass 0 once the command is reaped, as its id may
 * then be reused), then every process found by walking
 * /proc/<pid>/task/<tid>/children down from the caller. A SIGTERM is
 * followed by SIGCONT, so a stopped process sees it. Returns how many
 * signals were delivered. */
int rf_reaper_signal_all(pid_t command, int sig);

/* Send sig to the caller's descendants but the first `skip` generations
 * (they are a runner's own processes: bwrap and its pid 1), with SIGCONT
 * after it as above. Returns how many signals were delivered. */
int rf_reaper_signal_below(int skip, int sig);

/* SIGKILL every descendant and reap, pass after pass, until none is left
 * (orphans reach us as their parents die) or a bound of about three seconds
 * of passes. When the command is reaped here its wait status lands in
 * *status and *done is set. */
void rf_reaper_kill_all(pid_t command, int *status, bool *done);
