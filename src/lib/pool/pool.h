/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The warm pool (pool.c) and its unix-socket server and client (serve.c).
 * Internal to libringfence; the API is rf_pool_* in ringfence.h. */
#pragma once
#include "ringfence.h"
#include "model/plan.h"

#include <sys/ioctl.h>

/* Take a ready sandbox and hand it the command; the caller waits for and
 * frees the rf_proc (serve.c forwards signals to it meanwhile). Streams
 * set to RF_STDIO_PTY are a pty made inside: with `hold` NULL, relayed
 * to this process's own fd 0 and 1 by rf_proc_wait (rf_pool_run); else
 * of window size *hold, its master kept for rf_proc_take_pty (serve.c
 * passes it on to its client, who relays). */
rf_proc *rf_pool_start(rf_pool *p, const rf_pool_request *req, const struct winsize *hold, rf_error **err);
/* A finished run (or any rf_proc, NULL ignored) for the pool's thread
 * to free: it kills and reaps init and removes the cgroup, then refills.
 * Frees it here when the pool is stopping. */
void rf_pool_retire(rf_pool *p, rf_proc *proc);
