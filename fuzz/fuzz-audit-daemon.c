/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz the system audit daemon's record check (src/lib/audit/system.c):
 * a message is whatever any local user sends to the socket. A record it
 * takes must be an object with a string event and exactly the peer it
 * was given; then it is serialised as the daemon would chain it. */
#include "audit/system.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const rf_audit_peer peer = { .uid = 1002, .gid = 1002, .pid = 4242 };
    char why[256];
    json_t *r = rf_audit_system_check((const char *)data, size, &peer, why, sizeof why);
    if (!r)
        return why[0] ? 0 : (abort(), 0);
    const json_t *p = json_object_get(r, "peer");
    if (!json_is_string(json_object_get(r, "event")) || json_object_size(p) != 3 ||
        json_integer_value(json_object_get(p, "uid")) != 1002 || json_integer_value(json_object_get(p, "pid")) != 4242 ||
        size > RF_AUDIT_SYSTEM_MAX_RECORD)
        abort();
    char *text = json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
    free(text);
    json_decref(r);
    return 0;
}
