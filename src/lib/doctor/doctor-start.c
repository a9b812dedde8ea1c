/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Does `ringfence run -- true` work here with the native backend? Asked
 * by doing it: the default policy for the current directory (or, where
 * that is no workspace ringfence accepts, a fresh one under TMPDIR), the
 * plan, the start, the wait. Probes of single steps miss what only the
 * whole start meets (a container's seccomp filter, a missing capability,
 * a filesystem that cannot be idmapped), and then doctor and run disagree.
 * The instance root is the caller's own, as run's is. */
#include "doctor/doctor.h"
#include "util/cleanup.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Not an agent's command: kept out of the audit trail, and bounded. */
static const char doctor_policy[] = "{\"backend\": \"native\", \"audit\": false, \"limits\": {\"timeout\": 30}}";
/* Where a managed boundary refuses that (it requires the trail, or a
 * shorter timeout), the start is tried under the boundary's own settings:
 * recorded, as every run there is. */
static const char doctor_policy_bounded[] = "{\"backend\": \"native\"}";

static rf_policy *resolve(const char *cwd, const char *json, rf_error **err)
{
    rf_config *cfg = rf_config_new();
    if (!cfg)
        return NULL;
    rf_policy *policy = NULL;
    rf_context ctx = { .cwd = cwd };
    if (rf_config_add_json(cfg, "doctor", json, err) == 0)
        policy = rf_policy_resolve(cfg, &ctx, err);
    rf_config_free(cfg);
    return policy;
}

static rf_policy *policy_for(const char *cwd, rf_error **err)
{
    rf_policy *policy = resolve(cwd, doctor_policy, NULL);
    return policy ? policy : resolve(cwd, doctor_policy_bounded, err);
}

/* Plan and run /bin/true (as run would look it up); fills r->start. */
static void try_start(rf_doctor_report *r, const rf_policy *policy)
{
    rf_error *err = NULL;
    char *argv[] = { (char *)"true", NULL };
    rf_plan *plan = rf_plan_build(policy, argv, &err);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    rf_stdio io = { .in_fd = null, .out_fd = null, .err_fd = null };
    rf_status st = { 0 };
    if (plan && rf_run(plan, &io, &st, &err) == 0) {
        r->start.ok = st.exit_code == 0;
        if (st.setup_error)
            snprintf(r->start.error, sizeof r->start.error, "%s", st.setup_error);
        else if (!r->start.ok)
            snprintf(r->start.error, sizeof r->start.error, "true exited %d", st.exit_code);
        if (st.setup_hint)
            snprintf(r->start.hint, sizeof r->start.hint, "%s", st.setup_hint);
    } else if (err) {
        snprintf(r->start.error, sizeof r->start.error, "%s", rf_error_message(err));
        if (rf_error_hint(err))
            snprintf(r->start.hint, sizeof r->start.hint, "%s", rf_error_hint(err));
    }
    rf_status_clear(&st);
    if (null >= 0)
        close(null);
    rf_plan_free(plan);
    rf_error_free(err);
}

void rf_doctor_probe_start(rf_doctor_report *r)
{
    memset(&r->start, 0, sizeof r->start);
    _cleanup_free_ char *cwd = getcwd(NULL, 0);
    rf_policy *policy = cwd ? policy_for(cwd, NULL) : NULL;
    char tmp[4096] = "";
    bool made = false; /* tmp is a directory of ours, removed at the end */
    if (!policy) { /* the current directory is no workspace (home, /, ...) */
        const char *base = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "%s/rf-doctor-XXXXXX", base && *base == '/' ? base : "/tmp");
        rf_error *err = NULL;
        made = mkdtemp(tmp) != NULL;
        if (!made || !(policy = policy_for(tmp, &err))) {
            snprintf(r->start.error, sizeof r->start.error, "%s",
                     err ? rf_error_message(err) : "cannot make a workspace to try");
            rf_error_free(err);
            if (made)
                (void)rmdir(tmp);
            return;
        }
    }
    snprintf(r->start.workspace, sizeof r->start.workspace, "%s", made ? tmp : cwd);
    r->start.tried = true;
    try_start(r, policy);
    rf_policy_free(policy);
    if (made)
        (void)rmdir(tmp);
}
