/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The exec guard built from a resolved policy: its custom deny and allow
 * patterns and its workspace reach the guard. Apart from test-guard.c,
 * which the Windows build also runs (it has the guard, not the policy). */
#include "tap.h"
#include "ringfence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void expect(const rf_guard *g, const char *cmd, rf_guard_result want, const char *pattern)
{
    rf_guard_verdict v = { 0 };
    rf_error *err = NULL;
    char desc[256];
    snprintf(desc, sizeof desc, "%s: %s", want == RF_GUARD_ALLOWED ? "allowed" : "blocked", cmd);
    int r = rf_guard_check(g, cmd, &v, &err);
    is_int(r < 0 ? -1 : (int)v.result, want, desc);
    if (pattern)
        is_str(v.pattern, pattern, "the custom pattern is named");
    rf_guard_verdict_clear(&v);
    rf_error_free(err);
}

int main(void)
{
    char ws[64];
    snprintf(ws, sizeof ws, "/tmp/rf-test-guard-policy.XXXXXX");
    if (!mkdtemp(ws))
        return 1;
    rf_config *cfg = rf_config_new();
    rf_error *err = NULL;
    char json[512];
    snprintf(json, sizeof json,
             "{\"workspace\":\"%s\",\"tools\":{\"exec\":{\"custom_deny_patterns\":[\"\\\\bmake\\\\b\"],"
             "\"custom_allow_patterns\":[\"^git push origin main$\"]}}}", ws);
    int r = rf_config_add_json(cfg, "test", json, &err);
    rf_context ctx = { .cwd = ws, .home = "/home/tester", .user = "tester", .tmpdir = "/tmp" };
    rf_policy *p = r == 0 ? rf_policy_resolve(cfg, &ctx, &err) : NULL;
    if (!ok(p != NULL, "policy resolves"))
        printf("# %s\n", rf_error_message(err));
    rf_guard *g = p ? rf_guard_new_for_policy(p, &err) : NULL;
    ok(g != NULL, "guard from the policy");
    if (g) {
        expect(g, "make all", RF_GUARD_BLOCKED_PATTERN, "\\bmake\\b");
        expect(g, "git push origin main", RF_GUARD_ALLOWED, NULL);
        expect(g, "rm -rf x", RF_GUARD_BLOCKED_PATTERN, NULL);
        expect(g, "cat /etc/passwd", RF_GUARD_BLOCKED_PATH, NULL);
    }
    rf_guard_free(g);
    rf_policy_free(p);
    rf_config_free(cfg);
    rf_error_free(err);
    rmdir(ws);
    return done_testing();
}
