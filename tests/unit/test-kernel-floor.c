/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The native backend's kernel floor (backend/native/floor.h): which call is
 * found missing, and what the refusal says for a kernel below the call's
 * release and for one a seccomp filter hides it on. */
#include "tap.h"
#include "backend/native/floor.h"

#include <stdbool.h>
#include <string.h>

static const char *absent;

static bool fake_probe(const rf_kernel_call *call)
{
    return !absent || strcmp(call->name, absent) != 0;
}

static void refusal(const char *call_name, const char *release, const char *want, const char *label)
{
    absent = call_name;
    const rf_kernel_call *c = rf_native_floor_missing(fake_probe);
    rf_error *err = NULL;
    char desc[200];
    snprintf(desc, sizeof desc, "%s: %s is found missing", label, call_name);
    ok(c && !strcmp(c->name, call_name), desc);
    if (!c)
        return;
    is_int(rf_native_floor_error(c, release, &err), -1, "the refusal is an error");
    snprintf(desc, sizeof desc, "%s: the message says '%s'", label, want);
    like(err ? rf_error_message(err) : NULL, want, desc);
    snprintf(desc, sizeof desc, "%s: the message names %s(2)", label, call_name);
    char named[64];
    snprintf(named, sizeof named, "%s(2)", call_name);
    like(err ? rf_error_message(err) : NULL, named, desc);
    ok(err && rf_error_hint(err) && strlen(rf_error_hint(err)) > 0, "with a hint");
    rf_error_free(err);
}

int main(void)
{
    absent = NULL;
    ok(rf_native_floor_missing(fake_probe) == NULL, "every call present: nothing missing");

    refusal("mount_setattr", "5.10.0-30-amd64", "it came in Linux 5.12", "Debian 11's kernel");
    refusal("mount_setattr", "5.10.0-30-amd64", "Linux 5.10.0-30-amd64", "Debian 11's kernel, named");
    refusal("close_range", "5.4.0-150-generic", "it came in Linux 5.9", "Ubuntu 20.04's kernel");
    refusal("openat2", "4.18.0-553.el8", "it came in Linux 5.6", "RHEL 8's kernel");
    refusal("mount_setattr", "6.1.0-40-amd64", "a seccomp filter around ringfence refuses it",
            "a kernel that has it");
    refusal("mount_setattr", "5.12.0", "a seccomp filter", "exactly the release that brought it");
    refusal("mount_setattr", "not a release", "it came in Linux 5.12", "an unreadable release");
    refusal("mount_setattr", NULL, "it came in Linux 5.12", "no release at all");

    rf_error *err = NULL;
    int r = rf_native_floor_check(&err);
    if (r == 0)
        ok(1, "this kernel is at or above the floor");
    else
        printf("ok %d - this kernel # SKIP below the floor: %s\n", ++tap_n, rf_error_message(err));
    rf_error_free(err);
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}
