/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Print "ok" and return 0 when rc >= 0 (the crossing succeeded), else print
 * "denied: <errno name> (<message>)" and return 1. */
int probe_result(long rc);
/* The `syscall NAME` action (probe-syscall.c). */
int probe_syscall(const char *name);
/* probe-observe.c: a hostile command for the observer's supervisor. */
int probe_observe_hostile(const char *path, const char *count);
