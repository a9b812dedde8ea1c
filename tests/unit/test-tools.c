/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Disabled tools in the library: rf_policy_tool_enabled decides, and the
 * library's own entry points (rf_plan_build_shell for exec, the rf_fs_*
 * verbs of a handle from rf_fs_open_for_policy) refuse a disabled tool, so
 * a program linking libringfence cannot get past a policy's tools.disabled.
 * A policy without the list is the positive control. */
#include "tap.h"
#include "ringfence.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char ws[64];

static rf_policy *policy_with(const char *tools_json)
{
    char json[512];
    snprintf(json, sizeof json, "{\"workspace\":\"%s\",\"tools\":%s}", ws, tools_json);
    rf_error *err = NULL;
    rf_config *cfg = rf_config_new();
    /* The instance root beside the workspace, never in it (plan.c refuses). */
    rf_context ctx = { .cwd = ws, .home = "/home/tester", .user = "tester", .rf_home = "/tmp/rf-test-tools-home",
                       .tmpdir = "/tmp" };
    rf_policy *p = NULL;
    if (rf_config_add_json(cfg, "test", json, &err) == 0)
        p = rf_policy_resolve(cfg, &ctx, &err);
    if (!p)
        printf("# %s\n", err ? rf_error_message(err) : "?");
    rf_error_free(err);
    rf_config_free(cfg);
    return p;
}

static void test_decision(rf_policy *ro, rf_policy *all)
{
    ok(!rf_policy_tool_enabled(ro, "exec"), "exec disabled");
    ok(!rf_policy_tool_enabled(ro, "write_file"), "write_file disabled");
    ok(!rf_policy_tool_enabled(ro, "edit_file"), "edit_file disabled");
    ok(rf_policy_tool_enabled(ro, "read_file"), "read_file enabled");
    ok(rf_policy_tool_enabled(all, "exec"), "exec enabled without the list");
    ok(!rf_policy_tool_enabled(NULL, "exec"), "no policy enables nothing");
    rf_error *err = NULL;
    is_int(rf_policy_check_tool(ro, "exec", &err), -1, "check_tool refuses exec");
    is_str(rf_error_message(err), "tool \"exec\" not found: it is disabled for this agent (tools.disabled)",
           "the message");
    is_int(rf_error_errno(err), EACCES, "errno EACCES");
    is_int(rf_error_exit_code(err), RF_EXIT_CANNOT_EXEC, "exit code 126");
    rf_error_free(err);
    err = NULL;
    is_int(rf_policy_check_tool(all, "exec", &err), 0, "check_tool passes an enabled tool");
    ok(err == NULL, "  ... without an error");
}

static void test_exec(rf_policy *ro, rf_policy *all)
{
    rf_error *err = NULL;
    rf_plan *plan = rf_plan_build_shell(ro, "echo hi", 0, &err);
    ok(plan == NULL, "rf_plan_build_shell refuses a disabled exec");
    like(err ? rf_error_message(err) : "", "tool \"exec\" not found", "  ... with the refusal");
    rf_error_free(err);
    err = NULL;
    plan = rf_plan_build_shell(all, "echo hi", 0, &err);
    ok(plan != NULL, "rf_plan_build_shell builds when exec is enabled (control)");
    if (!plan)
        printf("# %s\n", rf_error_message(err));
    rf_plan_free(plan);
    rf_error_free(err);
}

static void test_fs(rf_policy *ro, rf_policy *all)
{
    rf_error *err = NULL;
    rf_fs *fs = rf_fs_open_for_policy(ro, &err);
    ok(fs != NULL, "fs handle for the read-only policy");
    if (!fs)
        return;
    is_int(rf_fs_write(fs, "w.txt", "x", 1, &err), -1, "rf_fs_write refused");
    like(err ? rf_error_message(err) : "", "tool \"write_file\" not found", "  ... names write_file");
    is_int(rf_error_exit_code(err), RF_FS_EXIT_FAILED, "  ... exit code of a refused file tool");
    is_int(rf_error_errno(err), EACCES, "  ... errno EACCES");
    rf_error_free(err);
    err = NULL;
    char path[128];
    snprintf(path, sizeof path, "%s/w.txt", ws);
    ok(access(path, F_OK) != 0, "  ... and wrote nothing");
    is_int(rf_fs_append(fs, "a.txt", "hello", 5, &err), 0, "rf_fs_append allowed (not disabled)");
    is_int(rf_fs_edit(fs, "a.txt", "hello", "bye", &err), -1, "rf_fs_edit refused");
    like(err ? rf_error_message(err) : "", "tool \"edit_file\" not found", "  ... names edit_file");
    rf_error_free(err);
    err = NULL;
    char *text = NULL;
    size_t len = 0;
    is_int(rf_fs_read(fs, "a.txt", 0, 0, &text, &len, &err), 0, "rf_fs_read allowed");
    is_str(text, "hello", "  ... the file was not edited");
    free(text);
    rf_fs_close(fs);

    fs = rf_fs_open_for_policy(all, &err);
    ok(fs && rf_fs_write(fs, "w.txt", "x", 1, &err) == 0, "rf_fs_write allowed by the other policy (control)");
    ok(fs && rf_fs_edit(fs, "a.txt", "hello", "bye", &err) == 0, "rf_fs_edit too (control)");
    rf_fs_close(fs);
    rf_error_free(err);
    unlink(path);
    snprintf(path, sizeof path, "%s/a.txt", ws);
    unlink(path);
}

int main(void)
{
    snprintf(ws, sizeof ws, "/tmp/rf-test-tools.XXXXXX");
    if (!mkdtemp(ws))
        return 1;
    rf_policy *ro = policy_with("{\"disabled\":[\"write_file\",\"exec\",\"edit_file\"]}");
    rf_policy *all = policy_with("{}");
    ok(ro && all, "policies resolve");
    if (ro && all) {
        test_decision(ro, all);
        test_exec(ro, all);
        test_fs(ro, all);
    }
    rf_policy_free(ro);
    rf_policy_free(all);
    rmdir(ws);
    return done_testing();
}
