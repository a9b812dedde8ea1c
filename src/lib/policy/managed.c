/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The machine's managed boundary over every resolved policy (managed/):
 * a policy that grants more is refused, naming the boundary's rule and
 * the layer the excess came from; a limit the policy leaves unset is the
 * boundary's. */
#include "policy/resolve.h"
#include "managed/managed.h"
#include "util/cleanup.h"
#include "util/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void fill_limits(rf_policy *p, const json_t *boundary)
{
    rf_managed_limits b;
    rf_managed_limits_of(boundary, &b);
    rf_limits *l = &p->limits;
    if (b.memory_bytes && !l->memory_bytes)
        l->memory_bytes = b.memory_bytes;
    if (b.pids && !l->pids)
        l->pids = b.pids;
    if (b.cpu > 0 && !(l->cpu > 0))
        l->cpu = b.cpu;
    if (b.timeout_s > 0 && !(l->timeout_s > 0))
        l->timeout_s = b.timeout_s;
}

static int set_system_audit(rf_policy *p, const json_t *boundary)
{
    const char *socket;
    bool required;
    if (!rf_managed_system_audit(boundary, &socket, &required))
        return 0;
    free(p->system_audit_socket);
    p->system_audit_required = required;
    return (p->system_audit_socket = strdup(socket)) ? 0 : -1;
}

int rf_policy_enforce_managed(rf_policy *p, const rf_merged *m, rf_error **err)
{
    _cleanup_free_ char *path = NULL;
    json_t *b = rf_managed_load(NULL, &path, err);
    if (!b)
        return err && *err ? -1 : 0;
    json_t *pj = rf_policy_to_json_value(p);
    rf_managed_excess x;
    int r = pj ? rf_managed_check(b, pj, &x) : -1;
    json_decref(pj);
    if (r == 0)
        fill_limits(p, b);
    if (r == 0 && set_system_audit(p, b) < 0)
        r = -2;
    json_decref(b);
    if (r == -2)
        return rf_error_set(err, ENOMEM, "managed boundary");
    if (r == 0)
        return 0;
    if (!pj)
        return rf_error_set(err, ENOMEM, "managed boundary");
    if (r < 0)
        return rf_error_set(err, 0, "managed boundary %s: %s: %s", path, x.setting, x.what);
    const char *origin = m ? rf_merged_origin(m, x.setting) : NULL;
    rf_error_set(err, 0, "%s%s%s%s: %s is beyond the managed boundary %s", x.setting, origin ? " (from " : "",
                 origin ? origin : "", origin ? ")" : "", x.what, path);
    return rf_error_hint_set(err, "the administrator's boundary bounds every policy on this machine, whatever a "
                                  "flag, file or profile asks: stay within it ('ringfence config --explain' "
                                  "shows it), or ask them to widen %s", path);
}
