/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the limit parsers: the four setting parsers on the whole input, and
 * the cgroup hierarchy finder on input split at the first NUL byte into a
 * /proc/self/cgroup text and a mountinfo text. */
#include "limits/hierarchy.h"
#include "limits/limits.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 2);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = s[size + 1] = '\0';

    uint64_t u;
    double d;
    rf_error *err = NULL;
    if (rf_limits_parse_memory(s, &u, &err) == 0 && u > (1ull << 60))
        abort();
    rf_error_free(err), err = NULL;
    if (rf_limits_parse_cpu(s, &d, &err) == 0 && !(d >= 0 && d <= 4096))
        abort();
    rf_error_free(err), err = NULL;
    if (rf_limits_parse_pids(s, &u, &err) == 0 && u > 4194304)
        abort();
    rf_error_free(err), err = NULL;
    rf_limits_parse_seconds(s, &d, &err);
    rf_error_free(err), err = NULL;
    char buf[32];
    rf_limits_format_memory(u, buf, sizeof buf);

    /* After the first NUL (or an empty text if there is none). */
    const char *mountinfo = s + strlen(s) + 1;
    rf_hierarchies h;
    if (rf_hierarchy_parse(s, mountinfo, &h, NULL) == 0)
        rf_hierarchy_clear(&h);
    free(s);
    return 0;
}
