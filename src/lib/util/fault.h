/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test-only fault injection: RF_TEST_FAULT_STEP=NAME makes the
 * supervisor (the process that called rf_spawn) SIGKILL itself right after
 * the setup step NAME, so tests/security/fault-injection.sh can look for
 * what a killed ringfence leaves on the host. Compiled in only with
 * `meson setup -Dtest_hooks=true` (RF_TEST_HOOKS); in any other build the
 * calls below are empty inline functions and the variable is never read,
 * so the hook cannot weaken a production sandbox. It only ever kills the
 * caller itself: it adds no way out  of the sandbox, in any build.
 *
 * Steps in the supervisor kill it at once. Steps in the sandbox's own
 * processes (mounts, landlock, seccomp...) write a byte to a pipe whose
 * other end a watcher thread of the supervisor reads, then wait until the
 * supervisor is gone (their report channel hangs up) and carry on, so the
 * sandbox meets the supervisor's death exactly where the step left it.
 * The step names are listed in docs/testing.md. */
#pragma once

#ifdef RF_TEST_HOOKS
/* Supervisor side: SIGKILL ourselves if STEP is the chosen step. */
void rf_fault_point(const char *step);
/* Before the clone: when the chosen step is one of the sandbox's, start the
 * watcher thread and return the pipe's write end (O_CLOEXEC) for the
 * children; -1 otherwise. */
int rf_fault_arm(void);
/* After the clone: the supervisor closes its copy of the write end. */
void rf_fault_disarm_parent(int fd);
/* Sandbox side (no allocation): if STEP is the chosen step, tell the
 * watcher, then wait (up to 10 s) for CHAN, the report channel, to hang up. */
void rf_fault_child_point(int fd, int chan, const char *step);
#else
static inline void rf_fault_point(const char *step) { (void)step; }
static inline int rf_fault_arm(void) { return -1; }
static inline void rf_fault_disarm_parent(int fd) { (void)fd; }
static inline void rf_fault_child_point(int fd, int chan, const char *step) { (void)fd; (void)chan; (void)step; }
#endif
