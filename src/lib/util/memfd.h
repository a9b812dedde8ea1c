/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A memfd holding some bytes, read from its start: how the bwrap and
 * firejail backends hand a filter or a profile to the program they run.
 * Safe between fork and exec (system calls only, no allocation). */
#pragma once
#include <stddef.h>

/* The descriptor (close-on-exec), or -1 with errno set. */
int rf_memfd_with(const char *name, const void *data, size_t len);
