/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The lexical path helpers (util/path.c): normalisation must never read or
 * write out of bounds, always return an absolute path without "." or ".."
 * components, and be idempotent. */
#include "util/path.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *n = rf_path_normalize(s);
    if (n) {
        if (n[0] != '/' || strstr(n, "/./") || strstr(n, "/../") || strstr(n, "//"))
            abort();
        char *again = rf_path_normalize(n);
        if (!again || strcmp(again, n) != 0)
            abort();
        if (!rf_path_is_beneath(n, "/"))
            abort();
        free(again);
        char *j = rf_path_join(n, s);
        free(j);
    }
    free(n);
    free(s);
    return 0;
}
