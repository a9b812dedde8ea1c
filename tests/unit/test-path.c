/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tap.h"
#include "util/path.h"
#include "util/strv.h"

static void check_norm(const char *in, const char *want)
{
    char *got = rf_path_normalize(in);
    char desc[256];
    snprintf(desc, sizeof desc, "normalize %s -> %s", in, want ? want : "(null)");
    is_str(got, want, desc);
    free(got);
}

int main(void)
{
    check_norm("/", "/");
    check_norm("//a//b/", "/a/b");
    check_norm("/a/./b/../c", "/a/c");
    check_norm("/../../etc/passwd", "/etc/passwd");
    check_norm("/a/b/../../..", "/");
    check_norm("relative", NULL);

    char *j = rf_path_join("/ws", "sub/../x");
    is_str(j, "/ws/x", "join relative");
    free(j);
    j = rf_path_join("/ws", "/etc/x");
    is_str(j, "/etc/x", "join absolute replaces base");
    free(j);
    j = rf_path_join("/ws", NULL);
    is_str(j, "/ws", "join with no rel is the base");
    free(j);
    j = rf_path_concat("/inst", "/home");
    is_str(j, "/inst/home", "concat: base then suffix, as written");
    free(j);
    j = rf_path_concat("/inst/", "");
    is_str(j, "/inst/", "concat: an empty suffix, not normalised");
    free(j);

    ok(rf_path_is_beneath("/ws/a", "/ws"), "beneath child");
    ok(rf_path_is_beneath("/ws", "/ws"), "beneath self");
    ok(!rf_path_is_beneath("/wsx", "/ws"), "sibling prefix is not beneath");
    ok(rf_path_is_beneath("/x", "/"), "everything is beneath /");
    ok(rf_path_is_kernel_fs("/proc/self"), "/proc is kernel fs");
    ok(rf_path_is_kernel_fs("/dev"), "/dev is kernel fs");
    ok(!rf_path_is_kernel_fs("/devices"), "/devices is not /dev");

    char **v = NULL;
    rf_strv_push(&v, "A=1");
    rf_strv_push_unique(&v, "A=1");
    is_int(rf_strv_len(v), 1, "push_unique skips duplicates");
    rf_strv_env_set(&v, "A", "2");
    is_str(rf_strv_env_get(v, "A"), "A=2", "env_set replaces");
    rf_strv_env_set(&v, "B", "3");
    is_int(rf_strv_len(v), 2, "env_set appends new key");
    ok(rf_strv_env_get(v, "AB") == NULL, "env_get matches whole key");
    rf_strv_env_set(&v, "E", "");
    is_str(rf_strv_env_get(v, "E"), "E=", "env_set with an empty value");
    rf_strv_free(v);
    return done_testing();
}
