/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Windows only: wide strings and Windows errors (util/wstr.c), for the
 * Windows backend and for reading a configuration file there (config/). */
#pragma once
#include "util/error.h"
#include "util/format.h"

#include <windows.h>

/* CreateProcess's command line is at most 32767 wide chars. */
#define RF_WIN_MAX_CMDLINE 32767

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
