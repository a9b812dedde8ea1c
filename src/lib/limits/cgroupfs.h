/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small cgroupfs operations on directory fds. Every function here is
 * async-signal-safe (system calls and stack buffers only), because the
 * keeper runs them in a forked child of a possibly multithreaded caller. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Write value to dir_fd/file. Returns 0 or -errno. */
int rf_cgroupfs_write(int dir_fd, const char *file, const char *value);
/* Read a number: the whole file (key NULL; "max" reads as UINT64_MAX), or
 * the value of the "key value" line. Returns 0 or -errno (-ENOENT: no such
 * file or key). */
int rf_cgroupfs_read_u64(int dir_fd, const char *file, const char *key, uint64_t *out);
/* SIGKILL every process in dir_fd and its sub-cgroups until they are empty,
 * at most timeout_ms. v2 uses cgroup.kill when present. Never signals the
 * calling process. Returns 0 or -errno (-EBUSY: timed out). */
int rf_cgroupfs_kill(int dir_fd, bool v2, int timeout_ms);
/* Remove parent_fd/name and its sub-cgroups, retrying while the kernel
 * still reports it busy, at most timeout_ms. ENOENT counts as success. */
int rf_cgroupfs_rmdir(int parent_fd, const char *name, int timeout_ms);
