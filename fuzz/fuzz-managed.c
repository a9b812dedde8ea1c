/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the managed boundary's check (src/lib/managed/check.c): a boundary
 * and a policy, each any JSON (the input: the boundary, a NUL, the
 * policy). The check must end with an answer, and "beyond" must always
 * name a setting. */
#include "managed/managed.h"
#include "split.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *policy;
    char *buf = rf_fuzz_split(data, size, &policy);
    if (!buf)
        return 0;
    json_t *b = json_loads(buf, 0, NULL), *p = json_loads(policy, 0, NULL);
    rf_managed_excess x;
    int r = b && p ? rf_managed_check(b, p, &x) : 0;
    if (r == 1 && !x.setting[0])
        abort();
    rf_managed_limits l;
    rf_managed_limits_of(b, &l);
    json_decref(b);
    json_decref(p);
    free(buf);
    return 0;
}
