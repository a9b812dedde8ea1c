/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The doctor's verdicts per backend from given probe results (pure), and
 * one real probe whose report must be complete JSON. */
#include "tap.h"
#include "doctor/doctor.h"
#include "util/strv.h"

#include <errno.h>

static bool lists(char *const *v, const char *needle)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strstr(v[i], needle))
            return true;
    return false;
}

static void clear(rf_doctor_report *r)
{
    for (int i = 0; i < RF_DOCTOR_N_BACKENDS; i++) {
        rf_strv_free(r->backends[i].gives);
        rf_strv_free(r->backends[i].lacks);
    }
}

int main(void)
{
    rf_doctor_report r = { 0 };
    r.userns.reached = RF_DOCTOR_USERNS_OK;
    r.native_probe_ok = true;
    r.landlock_abi = 7;
    r.seccomp.works = true;
    r.cgroup.delegated = true;
    r.cgroup.controllers = (char[]){ "cpuset cpu io memory pids" };
    ok(rf_doctor_judge_backends(&r) == 0, "judge");
    ok(rf_doctor_backend_usable(&r, "native"), "all there: native usable");
    is_str(r.auto_backend, "native", "all there: auto picks native");
    ok(rf_doctor_backend_usable(&r, "landlock"), "all there: landlock usable");
    ok(rf_doctor_backend_usable(&r, "none"), "none is always usable");
    ok(!rf_doctor_backend_usable(&r, "bwrap"), "an unknown backend name is not usable");
    ok(lists(r.backends[0].gives, "cgroup limits: memory, pids, cpu"), "native: cgroup limits");
    ok(lists(r.backends[0].gives, "ABI 7"), "native: Landlock ABI named");
    ok(lists(r.backends[1].lacks, "host processes stay visible"), "landlock: says what it cannot do");
    clear(&r);

    r = (rf_doctor_report){ 0 };
    r.userns.reached = RF_DOCTOR_USERNS_PROC;
    r.userns.errnum = EPERM;
    r.landlock_abi = 3;
    r.seccomp.works = true;
    r.cgroup.delegated = true;
    r.cgroup.controllers = (char[]){ "memory" };
    rf_doctor_judge_backends(&r);
    ok(!rf_doctor_backend_usable(&r, "native"), "/proc refused: native not usable");
    ok(rf_doctor_backend_usable(&r, "landlock"), "ABI 3: landlock usable");
    is_str(r.auto_backend, "landlock", "/proc refused: auto picks landlock");
    ok(lists(r.backends[1].lacks, "TCP is not checked by Landlock"), "ABI 3: no TCP rules, said");
    ok(lists(r.backends[1].lacks, "scoping"), "ABI 3: no scoping, said");
    ok(lists(r.backends[0].lacks, "cgroup limits for pids, cpu"), "missing controllers named");
    clear(&r);

    r = (rf_doctor_report){ 0 };
    r.userns.reached = RF_DOCTOR_USERNS_UNSHARE;
    r.landlock_abi = -1;
    r.seccomp.works = false;
    rf_doctor_judge_backends(&r);
    ok(!rf_doctor_backend_usable(&r, "landlock"), "Landlock disabled: landlock backend not usable");
    ok(lists(r.backends[1].lacks, "seccomp filter: not available"), "no seccomp: said for landlock");
    ok(lists(r.backends[2].lacks, "no seccomp filter"), "none: no seccomp, said");
    ok(r.auto_backend == NULL, "nothing usable: auto picks nothing");
    ok(lists(r.backends[0].lacks, "rlimits only"), "no delegation: rlimits only");
    clear(&r);

    rf_error *err = NULL;
    rf_doctor_report *real = rf_doctor_probe(&err);
    ok(real != NULL, "rf_doctor_probe on this host");
    char *json = real ? rf_doctor_to_json(real) : NULL;
    like(json, "\"backends\"", "JSON has backends");
    like(json, "\"user_namespaces\"", "JSON has user_namespaces");
    char *text = real ? rf_doctor_to_text(real) : NULL;
    like(text, "backend native", "text names the native backend");
    free(json);
    free(text);
    rf_doctor_free(real);
    return done_testing();
}
