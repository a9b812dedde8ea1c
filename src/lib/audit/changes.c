/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* changes: overlay (docs/changes.md): what a person applied or discarded of
 * a session, on the trail beside the run that made it. The session's id
 * links the two (run.start and run.end carry it). Paths are a command's
 * choice: stored as they are (JSON escapes them), shown visibly by `audit
 * show`. */
#include "audit/audit.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strv.h"

#include <errno.h>
#include <stdlib.h>

static json_t *paths_json(char *const *v, size_t max)
{
    json_t *a = json_array();
    for (size_t i = 0; a && v && v[i] && i < max; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

int rf_audit_session(const char *instance_root, const char *event, const char *session, const char *workspace,
                     const rf_apply_report *r, rf_error **err)
{
    _cleanup_free_ char *dir = rf_audit_dir(instance_root);
    if (!dir)
        return rf_error_set(err, ENOMEM, "audit");
    /* At most 100 paths a record: the counts say how many there were. */
    json_t *f = r ? json_pack("{s:s, s:s*, s:I, s:o, s:I, s:I, s:I}", "session", session, "workspace", workspace,
                              "applied", (json_int_t)rf_strv_len(r->applied), "paths", paths_json(r->applied, 100),
                              "conflicts", (json_int_t)rf_strv_len(r->conflicts), "refused",
                              (json_int_t)rf_strv_len(r->refused), "failed", (json_int_t)rf_strv_len(r->failed))
                  : json_pack("{s:s, s:s*}", "session", session, "workspace", workspace);
    if (!f)
        return rf_error_set(err, ENOMEM, "audit");
    int rc = rf_audit_append(dir, event, f, NULL, err);
    json_decref(f);
    return rc;
}
