/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The warm pool (pool.c) and its unix-socket server and client (serve.c).
 * Internal to libringfence; the API is rf_pool_* in ringfence.h. */
#pragma once
#include "ringfence.h"
#include "plan/plan.h"

/* Take a ready sandbox and hand it the command; the caller waits for and
 * frees the rf_proc (serve.c forwards signals to it meanwhile). */
rf_proc *rf_pool_start(rf_pool *p, const rf_pool_request *req, rf_error **err);
