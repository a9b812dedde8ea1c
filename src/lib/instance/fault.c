/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test-only: RINGFENCE_TEST_INSTANCE_FAULT_STEP=OP:N SIGKILLs the process
 * when create, rm or gc (OP) reaches its step N, so that the tests can
 * show that every step a crash interrupts is finished or undone by the
 * next command (tests/security/instances-crash.sh). Compiled in only with
 * -Dtest_hooks=true; a release build ignores the variable. */
#include "instance/instance.h"

#ifdef RF_TEST_HOOKS
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rf_instance_fault(const char *op, int step)
{
    const char *want = getenv("RINGFENCE_TEST_INSTANCE_FAULT_STEP");
    char here[32];
    snprintf(here, sizeof here, "%s:%d", op, step);
    if (want && !strcmp(want, here))
        raise(SIGKILL);
}
#endif
