/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rf_error: an error that travels up instead of being printed. It carries
 * errno, a message, an optional hint (how to fix it) and the exit code the
 * CLI should use. Library functions return < 0 and fill *err; callers add
 * context with rf_error_prefix() as the error travels up. */
#pragma once
#include "ringfence.h"
#include "util/format.h"
#include <stdarg.h>

struct rf_error {
    int errnum;     /* errno of the failing call, 0 if none */
    int exit_code;  /* RF_EXIT_* the CLI should exit with */
    char *message;  /* "what failed: why" */
    char *hint;     /* how to fix it, or NULL */
};

/* Fill *err (if err is non-NULL and *err is NULL) and return -1. errnum may
 * be 0; when non-zero, ": strerror(errnum)" is appended. */
int rf_error_set(rf_error **err, int errnum, const char *fmt, ...)
    RF_PRINTF(3, 4);
/* Same, with an exit code other than RF_EXIT_FAILURE (125). */
int rf_error_set_code(rf_error **err, int exit_code, int errnum, const char *fmt, ...)
    RF_PRINTF(4, 5);
/* Attach or replace the hint of *err. Returns -1 for tail calls. */
int rf_error_hint_set(rf_error **err, const char *fmt, ...)
    RF_PRINTF(2, 3);
/* Prepend "context: " to the message of *err. Returns -1. */
int rf_error_prefix(rf_error **err, const char *fmt, ...)
    RF_PRINTF(2, 3);
