/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers of the Windows backend: the three mechanisms (token.c, job.c,
 * label.c); wide strings and Windows errors are util/wstr.h's. */
#pragma once
#include "backend/windows/windows.h"
#include "util/format.h"
#include "util/wstr.h"

#include <windows.h>

/* token.c: the caller's token restricted (administrators and power users
 * deny-only, every privilege but SeChangeNotify deleted), at low integrity. */
HANDLE rf_win_token_make(rf_error **err);

/* job.c: a job that kills every process in it when its last handle closes,
 * with the plan's limits. */
HANDLE rf_win_job_make(const rf_win_plan *plan, rf_error **err);

/* label.c: make a directory (an existing one must be a plain directory, not
 * a link or junction), and give a tree the low-integrity write label. */
int rf_win_mkdir(const char *path, rf_error **err);
int rf_win_label_low(const char *path, rf_error **err);
/* A protected path back to the medium label (if it exists): read-only to
 * the low-integrity command. */
int rf_win_label_protect(const char *path, rf_error **err);
