/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz reading the audit trail back (src/lib/audit/): the log is a file a
 * user (or someone tampering with it) may have written anything into.
 * Each input line goes through the hash check, the JSON parse, the OCSF
 * mapping and the time parser; a line that passes the hash check must
 * really end in its own hash. */
#include "audit/audit.h"
#include "split.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = rf_fuzz_split(data, size, NULL); /* the line: up to a NUL */
    if (!line)
        return 0;
    size_t len = strlen(line);
    if (rf_audit_line_ok(line, len) && (len < 77 || line[len - 1] != '}'))
        abort();
    json_t *rec = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
    json_t *o = rf_audit_ocsf(rec);
    json_decref(o);
    json_decref(rec);
    (void)rf_audit_time_ms(line);
    free(line);
    return 0;
}
