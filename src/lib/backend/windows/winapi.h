/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers of the Windows backend: wide strings, Windows errors, and the
 * three mechanisms (token.c, job.c, label.c). */
#pragma once
#include "backend/windows/windows.h"
#include "util/format.h"

#include <windows.h>

/* UTF-8 <-> UTF-16 (malloc'd, NULL on bad input or no memory). */
wchar_t *rf_win_wide(const char *utf8);
char *rf_win_utf8(const wchar_t *wide);
/* "<Windows message> (Windows error N)" for `code`. */
void rf_win_message(DWORD code, char *buf, size_t size);
/* Set *err to "<what>: <Windows message> (Windows error N)" for `code`. */
int rf_win_error(rf_error **err, DWORD code, const char *fmt, ...) RF_PRINTF(3, 4);
/* argv as one command line that CommandLineToArgvW (and the C runtime)
 * splits back into the same words; NULL when too long. */
wchar_t *rf_win_cmdline(char *const argv[]);

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
