/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the comparison of two policy keys (src/lib/pool/keydiff.c): the
 * request's key is whatever a `run --via` client sent. The input is the
 * server's key, a NUL, the request's. Checks that the text always ends
 * within the buffer and is empty exactly when nothing is named. */
#include "pool/keydiff.h"
#include "split.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *theirs;
    char *buf = rf_fuzz_split(data, size, &theirs);
    if (!buf)
        return 0;
    const char *ours = buf;
    char out[64];
    memset(out, 'x', sizeof out);
    size_t named = rf_pool_key_diff(ours, theirs, out, sizeof out);
    if (!memchr(out, '\0', sizeof out) || (named == 0) != (out[0] == '\0'))
        abort();
    free(buf);
    return 0;
}
