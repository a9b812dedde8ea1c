/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Whole writes: write(2) may write less than asked (a pipe, a signal, a
 * nearly full disk), so every caller that means "all of it" loops; this is
 * that loop, once. System calls only: safe between fork and exec. */
#pragma once
#include <stddef.h>

/* 0 when all len bytes of buf are written to fd; -1 with errno at the first
 * failure (EINTR is retried; a write of 0 bytes is EIO). */
int rf_write_all(int fd, const void *buf, size_t len);
