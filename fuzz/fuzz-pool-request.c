/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the pool's request parser (what a `run --via` client sends to
 * `ringfence serve`), and check that a parsed request encodes back to the
 * same bytes. */
#include "pool/wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > RF_POOL_REQ_MAX)
        return 0;
    char *buf = malloc(size ? size : 1);
    rf_pool_wire_request *req = calloc(1, sizeof *req);
    if (!buf || !req)
        goto out;
    memcpy(buf, data, size);
    if (rf_pool_wire_parse(buf, size, req) == 0) {
        size_t len = 0;
        char *again = rf_pool_wire_encode(req->key, req->cwd, req->argv, &req->tty, &len);
        if (!again || len != size || memcmp(again, data, size) != 0)
            abort();
        free(again);
    }
out:
    free(buf);
    free(req);
    return 0;
}
