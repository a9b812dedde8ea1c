/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the /etc/subuid and /etc/subgid readers (instance/subid.c) on the
 * input as the file's text: a range they accept is a real one (32-bit ids,
 * no wrap), and the free start never goes below where it began. */
#include "instance/subid.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    unsigned long start = 0, count = 0;
    if (rf_subid_parse_first(f, "1000", "tester", &start, &count) == 0 &&
        (start == 0 || count < 2 || start > 4294967294UL || start + count - 1 > 4294967294UL))
        abort();
    rewind(f);
    if (rf_subid_parse_past(f, 100000) < 100000)
        abort();
    fclose(f);
    return 0;
}
