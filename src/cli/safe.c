/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strings a sandboxed command chose (its arguments, host names, process
 * names), printed to a terminal: every byte outside printable ASCII is
 * shown as \xNN, so no escape sequence it wrote reaches the terminal. */
#include "cli.h"

#include <stdio.h>

void rf_cli_put_safe(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\')
            fputc(*p, out);
        else
            fprintf(out, "\\x%02x", *p);
    }
}
