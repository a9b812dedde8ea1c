/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The few POSIX/GNU C library calls the platform-neutral stages use that
 * mingw-w64's C runtime lacks, declared for the Windows build only (meson
 * passes this header with -include), so the neutral code keeps calling
 * them by their usual names and holds no #ifdef. libc.c defines them. */
#pragma once
#include <stddef.h>

char *strndup(const char *s, size_t n);
void *reallocarray(void *p, size_t n, size_t size);
char *mkdtemp(char *template);
