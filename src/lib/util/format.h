/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The attribute of printf-like functions. mingw-w64's gcc reads "printf"
 * as the Microsoft C runtime's dialect (no %zu, no %lld); the Windows build
 * formats with mingw's C99 printf (__USE_MINGW_ANSI_STDIO), which is
 * gcc's gnu_printf. The one place the platforms differ in the neutral code. */
#pragma once

#ifdef __MINGW32__
#define RF_PRINTF(fmt, first) __attribute__((format(gnu_printf, fmt, first)))
#else
#define RF_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#endif
