/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

RF_PRINTF(1, 0) static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        return NULL;
    return s;
}

RF_PRINTF(4, 0) static int error_vset(rf_error **err, int exit_code, int errnum, const char *fmt, va_list ap)
{
    if (!err || *err)
        return -1;
    rf_error *e = calloc(1, sizeof(*e));
    if (!e)
        return -1;
    char *msg = vformat(fmt, ap);
    if (msg && errnum) {
        char *full = NULL;
        if (asprintf(&full, "%s: %s", msg, strerror(errnum)) >= 0) {
            free(msg);
            msg = full;
        }
    }
    e->errnum = errnum;
    e->exit_code = exit_code;
    e->message = msg ? msg : strdup("out of memory");
    *err = e;
    return -1;
}

int rf_error_set(rf_error **err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, RF_EXIT_FAILURE, errnum, fmt, ap);
    va_end(ap);
    return -1;
}

int rf_error_set_code(rf_error **err, int exit_code, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, exit_code, errnum, fmt, ap);
    va_end(ap);
    return -1;
}

int rf_error_hint_set(rf_error **err, const char *fmt, ...)
{
    if (!err || !*err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    char *hint = vformat(fmt, ap);
    va_end(ap);
    if (hint) {
        free((*err)->hint);
        (*err)->hint = hint;
    }
    return -1;
}

int rf_error_prefix(rf_error **err, const char *fmt, ...)
{
    if (!err || !*err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    char *ctx = vformat(fmt, ap);
    va_end(ap);
    char *full = NULL;
    if (ctx && asprintf(&full, "%s: %s", ctx, (*err)->message) >= 0) {
        free((*err)->message);
        (*err)->message = full;
    }
    free(ctx);
    return -1;
}

RF_EXPORT const char *rf_error_message(const rf_error *err)
{
    return err ? err->message : "";
}

RF_EXPORT const char *rf_error_hint(const rf_error *err)
{
    return err ? err->hint : NULL;
}

RF_EXPORT int rf_error_errno(const rf_error *err)
{
    return err ? err->errnum : 0;
}

RF_EXPORT int rf_error_exit_code(const rf_error *err)
{
    return err ? err->exit_code : 0;
}

RF_EXPORT void rf_error_free(rf_error *err)
{
    if (!err)
        return;
    free(err->message);
    free(err->hint);
    free(err);
}
